// Torus dimension-order routing, computed from TorusLayout without a graph search; between
// the slices of a multislice, through the DCN switch.
#include <cstdint>

#include "topology/direct_layouts.hpp"
#include "topology/routing_detail.hpp"

namespace cs::topo::detail {
namespace {

class TorusRouter final : public CachedRouter {
 public:
  explicit TorusRouter(const Topology& t) : CachedRouter(t), l_(*t.torus()) {}

  const Route& route(int src, int dst, uint64_t /*flow_key*/) override {
    check_ranks(src, dst);
    if (src == dst) return empty_;
    return cached(route_key(src, dst, 0), [&] {
      Route r;
      compute(src, dst, r);
      return r;
    });
  }

  std::unique_ptr<AllPairsCounter> all_pairs_counter(std::span<const int> ranks) const override {
    return make_leg_counter(t_, l_.nic_up, ranks, [this, ranks](std::size_t i, std::size_t j, HopSink& sink) {
      const int src = ranks[i], dst = ranks[j];
      sink.scratch.clear();
      dimension_order(t_.node_of_rank(src), t_.node_of_rank(dst), pair_hash(src, dst), sink.scratch);
      for (LinkId l : sink.scratch) sink.hop(l);
    });
  }

  bool route_into(int src, int dst, uint64_t /*flow_key*/, Route& out) const override {
    if (!same_rank_into(src, dst, out)) compute(src, dst, out);
    return true;
  }

 private:
  void compute(int src, int dst, Route& r) const {
    nic_route_into(t_, src, dst, l_.nic_up, [&](std::vector<LinkId>& out) {
      // Node i sits at position i.
      dimension_order(t_.node_of_rank(src), t_.node_of_rank(dst), pair_hash(src, dst), out);
    }, r);
  }

  static uint64_t pair_hash(int src, int dst) {
    return mix64((static_cast<uint64_t>(src) << 32) | static_cast<uint64_t>(dst));
  }

  // Along each dimension the flow keeps one copy of the bundles it crosses, copy
  // hash(src, dst, d) mod parallel[d]: a pair's flows stay on one cable per dimension, and
  // the pairs spread over the bundle's cables.
  // Between slices of a multislice: up to the DCN switch and down to the destination's switch
  // (every chip reaches the data-center network through its own host).
  void dimension_order(int at, int to, uint64_t hash, std::vector<LinkId>& out) const {
    if (l_.slices > 1 && l_.slice_of(at) != l_.slice_of(to)) {
      out.push_back(l_.dcn_up[static_cast<std::size_t>(at)]);
      out.push_back(reverse(l_.dcn_up[static_cast<std::size_t>(to)]));
      return;
    }
    const std::size_t D = l_.dims.size();
    for (std::size_t d = 0; d < D; ++d) {
      const int size = l_.dims[d];
      const int ahead = ((l_.coord(to, d) - l_.coord(at, d)) % size + size) % size;
      if (ahead == 0) continue;
      const auto copy = static_cast<LinkId>(mix64(hash + d) % static_cast<uint64_t>(l_.parallel[d]));
      const bool forward = 2 * ahead <= size;  // half-way round: the + way
      for (int n = forward ? ahead : size - ahead; n > 0; --n) {
        if (forward) {
          out.push_back(l_.plus[static_cast<std::size_t>(at) * D + d] + 2 * copy);
          at = l_.step(at, d, +1);
        } else {
          at = l_.step(at, d, -1);
          out.push_back(reverse(l_.plus[static_cast<std::size_t>(at) * D + d]) + 2 * copy);
        }
      }
    }
  }

  const TorusLayout& l_;
};

}  // namespace

std::unique_ptr<Router> make_torus_router(const Topology& t) {
  return std::make_unique<TorusRouter>(t);
}

}  // namespace cs::topo::detail
