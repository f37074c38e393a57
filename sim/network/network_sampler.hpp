#pragma once
// Samples the communication layer's state every `interval` seconds while work is in flight or
// pending, whichever model runs: "active_flows" (flows, or stages moving bytes),
// "active_transfers" (sends and collectives in flight) and "transfers_completed".
//
// Bounded whatever the interval and the run's length: samples are taken at t0 + k x interval
// (never by accumulating a step, which stalls once the step is below the clock's resolution),
// and when a series reaches max_samples the sampler keeps every other sample and doubles its
// interval (coarsened(), interval_s() say so), so memory stays below max_samples per series
// and the events it costs grow with the logarithm of the run's length over the interval.
// Samples reach the recorder at flush().
#include <cstddef>
#include <vector>

#include "sim/engine/priority.hpp"
#include "sim/engine/simulator.hpp"
#include "sim/network/comm.hpp"

namespace cs::net {

class NetworkSampler final : public engine::EventTarget {
 public:
  static constexpr std::size_t kDefaultMaxSamples = 100000;
  // interval_s > 0 and finite; max_samples >= 2.
  NetworkSampler(const Comm& comm, engine::Simulator& sim, double interval_s,
                 std::size_t max_samples = kDefaultMaxSamples);
  // First sample at the current instant, after everything else that happens then.
  void start();
  void on_event(uint64_t) override;
  // Writes the samples kept into the recorder's three series (call once, after the run).
  void flush();
  double interval_s() const { return interval_s_; }
  bool coarsened() const { return interval_s_ != requested_s_; }
  std::size_t samples() const { return time_.size(); }

 private:
  const Comm& comm_;
  engine::Simulator& sim_;
  double requested_s_, interval_s_;
  std::size_t max_samples_;
  double t0_ = 0;
  uint64_t index_ = 0;  // of the sample taken last, on the grid t0 + k x interval
  std::vector<double> time_, flows_, transfers_, completed_;
};

}  // namespace cs::net
