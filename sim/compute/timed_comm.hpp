#pragma once
// A communication layer whose transfers take a time known when they start, with no
// contention between them: each is one event on the engine. The base of the alpha-beta test
// double (testing/alpha_beta_comm.hpp) and of AloneTimeComm (alone_time_comm.hpp); a derived
// class says how long a send or collective takes and keeps its groups.
//
// Invariants: deterministic; a transfer's observer hears of it exactly once, at start + its
// time, unless cancel()ed first; ids are never reused.
#include <cstdint>
#include <unordered_map>

#include "sim/engine/simulator.hpp"
#include "sim/network/comm.hpp"

namespace cs::compute {

class TimedComm : public net::Comm, public engine::EventTarget {
 public:
  ~TimedComm() override;

  double cancel(net::TransferId id) override;
  const topo::Route* route_of(net::TransferId) const override { return nullptr; }  // no topology
  std::size_t active_transfers() const override { return active_.size(); }
  std::size_t active_flows() const override { return active_.size(); }
  uint64_t transfers_completed() const override { return completed_; }
  net::LinkUsage link_usage() const override { return {}; }
  uint32_t link_load(uint32_t) const override { return 0; }

 protected:
  explicit TimedComm(engine::Simulator& sim) : sim_(sim) {}
  // A transfer of `bytes` (> 0, finite; CommError("bytes") otherwise) ending `seconds` from now.
  net::TransferId start(double seconds, double bytes, net::TransferObserver* observer, uint64_t tag);
  bool active(net::TransferId id) const { return active_.count(id) > 0; }
  engine::Simulator& sim() { return sim_; }

 private:
  struct Active {
    net::TransferObserver* observer;
    uint64_t tag;
    engine::EventId event;
  };
  void on_event(uint64_t id) override;

  engine::Simulator& sim_;
  std::unordered_map<net::TransferId, Active> active_;
  net::TransferId next_id_ = 1;
  uint64_t completed_ = 0;
};

}  // namespace cs::compute
