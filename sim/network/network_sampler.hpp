#pragma once
// Samples the communication layer's state into time series every `interval` seconds while
// work is in flight or pending, whichever model runs: "active_flows" (flows, or stages moving
// bytes), "active_transfers" (sends and collectives in flight) and "transfers_completed";
// given the topology, also each link class's utilization over the last interval
// (topo::link_class: tier and direction): "link_util_max.<class>" (the busiest link's bytes /
// (capacity x interval)) and "link_util_mean.<class>" (over the class's links).
//
// Bounded whatever the interval and the run's length: samples are taken at t0 + k x interval
// (never by accumulating a step, which stalls once the step is below the clock's resolution),
// and when the series reach max_samples the sampler keeps every other sample and doubles its
// interval (coarsened(), interval_s() say so), so memory stays below max_samples rows and the
// events it costs grow with the logarithm of the run's length over the interval. A kept link
// utilization describes the interval before its sample as it was taken (the finer one before
// a coarsening). Samples reach the recorder at flush().
#include <cstddef>
#include <cstdint>
#include <string>
#include <utility>
#include <vector>

#include "sim/engine/simulator.hpp"
#include "sim/network/comm.hpp"
#include "topology/topology.hpp"

namespace cs::net {

class NetworkSampler final : public engine::EventTarget {
 public:
  static constexpr std::size_t kDefaultMaxSamples = 100000;
  // interval_s > 0 and finite; max_samples >= 2. `topology` (may be null: no link series)
  // must outlive the sampler.
  NetworkSampler(const Comm& comm, engine::Simulator& sim, double interval_s,
                 const topo::Topology* topology = nullptr, std::size_t max_samples = kDefaultMaxSamples);
  // First sample at the current instant, after everything else that happens then.
  void start();
  void on_event(uint64_t) override;
  // Writes the samples kept into the recorder's series (call once, after the run).
  void flush();
  double interval_s() const { return interval_s_; }
  bool coarsened() const { return interval_s_ != requested_s_; }
  std::size_t samples() const { return rows_.size(); }

 private:
  // One sample: its time and (series index, value) for every series it has a value of.
  struct Row {
    double time;
    std::vector<std::pair<uint32_t, double>> values;
  };
  void sample_links(Row& row);
  void coarsen();

  const Comm& comm_;
  engine::Simulator& sim_;
  double requested_s_, interval_s_;
  const topo::Topology* topology_;
  std::size_t max_samples_;
  double t0_ = 0;
  uint64_t index_ = 0;  // of the sample taken last, on the grid t0 + k x interval
  std::vector<Row> rows_;
  std::vector<std::string> series_;       // names: the three counters, then max and mean per class
  std::vector<uint32_t> class_of_;        // per link
  std::vector<uint32_t> class_links_;     // links per class
  std::vector<double> last_bytes_;        // per link, at the last sample
  double last_t_ = -1;
  std::vector<double> max_, sum_;         // scratch per class
};

}  // namespace cs::net
