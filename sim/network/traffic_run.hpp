#pragma once
// Raw traffic: a list of flows (rank to rank, bytes, start time) sent through the
// communication layer, whichever model runs, with each flow's completion time recorded. Flow
// i's key for hashed routings (ECMP) is i.
#include <cstdint>
#include <vector>

#include "sim/engine/simulator.hpp"
#include "sim/network/comm.hpp"
#include "workloads/traffic.hpp"

namespace cs::net {

class TrafficRun final : public TransferObserver, public engine::EventTarget {
 public:
  TrafficRun(Comm& comm, engine::Simulator& sim, std::vector<work::FlowSpec> flows);

  // Schedule every flow's start. Flows with the same start time start in one instant.
  void start();

  std::size_t flows() const { return specs_.size(); }
  const work::FlowSpec& spec(std::size_t i) const { return specs_[i]; }
  bool finished(std::size_t i) const { return finished_[i] != 0; }
  // The path flow i took (null before it started).
  const topo::Route* route(std::size_t i) const { return routes_[i]; }
  std::size_t completed() const { return completed_; }
  // Flow completion times (finish - start), seconds, in input order; valid once completed.
  const std::vector<double>& fct_s() const { return fct_; }
  double makespan_s() const { return last_finish_ - first_start_; }

  void on_transfer_done(TransferId id, uint64_t tag) override;
  void on_event(uint64_t tag) override;

 private:
  Comm& comm_;
  engine::Simulator& sim_;
  std::vector<work::FlowSpec> specs_;
  std::vector<uint32_t> order_;  // flow indices sorted by start time (stable)
  std::vector<double> fct_;
  std::vector<uint8_t> finished_;
  std::vector<const topo::Route*> routes_;
  std::size_t completed_ = 0;
  double first_start_ = 0, last_finish_ = 0;
};

}  // namespace cs::net
