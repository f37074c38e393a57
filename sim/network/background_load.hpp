#pragma once
// Work running beside a workload on the same fabric, through the communication layer:
// collectives that repeat their sizes back to back on every group until stop(), and traffic
// that runs once.
#include <cstdint>
#include <memory>
#include <vector>

#include "sim/engine/simulator.hpp"
#include "sim/network/comm.hpp"
#include "sim/network/traffic_run.hpp"
#include "workloads/collective.hpp"
#include "workloads/traffic.hpp"

namespace cs::net {

class BackgroundLoad {
 public:
  BackgroundLoad(Comm& comm, engine::Simulator& sim) : comm_(comm), sim_(sim) {}

  // Adds a repeating collective (one algorithm, not auto: the protocol may be auto); its
  // groups and plans are prepared now. Throws CommError.
  void add_collective(const work::CollectiveSpec& spec);
  void add_traffic(std::vector<work::FlowSpec> flows);

  void start();
  // Collectives finish what they started and start no more.
  void stop() { stopped_ = true; }

  struct LoopStats {
    work::CollectiveOp op;
    std::size_t groups = 0;
    uint64_t completed = 0;
    double mean_time_s = 0;
  };
  std::vector<LoopStats> collectives() const;
  const std::vector<std::unique_ptr<TrafficRun>>& traffic() const { return traffic_; }

 private:
  struct Loop {
    work::CollectiveSpec spec;
    std::vector<GroupId> groups;
    std::vector<std::size_t> next;  // per group: index of the next size
    uint64_t completed = 0;
    double time_sum = 0;
  };
  void launch(Loop& loop, std::size_t g);

  Comm& comm_;
  engine::Simulator& sim_;
  std::vector<std::unique_ptr<Loop>> loops_;
  std::vector<std::unique_ptr<TrafficRun>> traffic_;
  bool stopped_ = false;
};

}  // namespace cs::net
