#pragma once
// Samples the communication layer's state into the recorder's time series every `interval`
// seconds while work is in flight or pending, whichever model runs: "active_flows" (flows,
// or stages moving bytes), "active_transfers" (sends and collectives in flight) and
// "transfers_completed".
#include "sim/engine/priority.hpp"
#include "sim/engine/simulator.hpp"
#include "sim/network/comm.hpp"

namespace cs::net {

class NetworkSampler final : public engine::EventTarget {
 public:
  NetworkSampler(const Comm& comm, engine::Simulator& sim, double interval_s)
      : comm_(comm), sim_(sim), interval_s_(interval_s) {}
  // First sample at the current instant, after everything else that happens then.
  void start() { sim_.schedule_at(sim_.now(), *this, 0, engine::priority::observe); }
  void on_event(uint64_t) override {
    const double now = sim_.now();
    auto& rec = sim_.recorder();
    rec.sample("active_flows", now, static_cast<double>(comm_.active_flows()));
    rec.sample("active_transfers", now, static_cast<double>(comm_.active_transfers()));
    rec.sample("transfers_completed", now, static_cast<double>(comm_.transfers_completed()));
    if (comm_.active_transfers() > 0 || sim_.pending() > 0)
      sim_.schedule_in(interval_s_, *this, 0, engine::priority::observe);
  }

 private:
  const Comm& comm_;
  engine::Simulator& sim_;
  double interval_s_;
};

}  // namespace cs::net
