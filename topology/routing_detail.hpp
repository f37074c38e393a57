#pragma once
// Internal to the routers: the shared cache and the node-side legs of every route.
#include <cstdint>
#include <stdexcept>
#include <string>
#include <unordered_map>
#include <vector>

#include "topology/routing.hpp"

namespace cs::topo::detail {

// Cache key: ranks < 2^24 (kMaxGpus) and path choice < 2^16 (kMaxSwitchRadix).
inline uint64_t route_key(int src, int dst, int choice) {
  return (static_cast<uint64_t>(src) << 40) | (static_cast<uint64_t>(dst) << 16) |
         static_cast<uint64_t>(choice);
}

// Links from a rank's GPU to its affine NIC: the direct PCIe link when there is one
// (nvswitch nodes), else through the node switch (pcie nodes).
void append_gpu_to_nic(const Topology& t, int rank, std::vector<LinkId>& out);
// The reverse: the affine NIC of `rank` to its GPU.
void append_nic_to_gpu(const Topology& t, int rank, std::vector<LinkId>& out);
// GPU -> node switch -> GPU, for two ranks of the same node.
void append_same_node(const Topology& t, int src, int dst, std::vector<LinkId>& out);
// Sets latency_s to the sum over the links.
void finish(const Topology& t, Route& r);

// Route cache shared by the routers. std::unordered_map is node-based, so references to
// cached routes survive rehashing.
class CachedRouter : public Router {
 public:
  explicit CachedRouter(const Topology& t) : t_(t), ranks_(t.ranks()) {}

 protected:
  void check_ranks(int src, int dst) const {
    if (src < 0 || src >= ranks_ || dst < 0 || dst >= ranks_)
      throw std::out_of_range("route: rank out of range (" + std::to_string(src) + " -> " +
                              std::to_string(dst) + ", ranks: " + std::to_string(ranks_) + ")");
  }
  const Topology& t_;
  int ranks_;
  Route empty_;
  std::unordered_map<uint64_t, Route> cache_;
};

std::unique_ptr<Router> make_shortest_router(const Topology& t);

}  // namespace cs::topo::detail
