#pragma once
// Samples the communication layer's state into the recorder's time series every `interval`
// seconds while work is in flight or pending, whichever model runs: "active_flows" (flows,
// or stages moving bytes), "active_transfers" (sends and collectives in flight) and
// "transfers_completed"; given the topology, also each link class's utilization over the
// last interval (topo::link_class: tier and direction): "link_util_max.<class>" (the busiest
// link's bytes / (capacity x interval)) and "link_util_mean.<class>" (over the class's links).
#include <string>
#include <vector>

#include "sim/engine/simulator.hpp"
#include "sim/network/comm.hpp"
#include "topology/topology.hpp"

namespace cs::net {

class NetworkSampler final : public engine::EventTarget {
 public:
  // `topology` (may be null: no link series) must outlive the sampler.
  NetworkSampler(const Comm& comm, engine::Simulator& sim, double interval_s, const topo::Topology* topology = nullptr);
  // First sample at the current instant, after everything else that happens then.
  void start();
  void on_event(uint64_t) override;

 private:
  void sample_links(double now);

  const Comm& comm_;
  engine::Simulator& sim_;
  double interval_s_;
  const topo::Topology* topology_;
  std::vector<uint32_t> class_of_;        // per link
  std::vector<std::string> max_series_, mean_series_;  // per class
  std::vector<uint32_t> class_links_;     // links per class
  std::vector<double> last_bytes_;        // per link, at the last sample
  double last_t_ = -1;
  std::vector<double> max_, sum_;         // scratch per class
};

}  // namespace cs::net
