#pragma once
// The communication layer on the analytical model (network.model "analytical"): collectives
// run their routed plans on the stage fluid (stage_fluid.hpp): alone, a collective takes the
// alpha-beta estimate with topology-aware bottlenecks; at once, stages share links. A send is
// a one-transfer stage: the wire's latency, then its bytes as one flow among the stage
// fluid's demands, so sends alone take latency + bytes / bottleneck as in the flow model, and
// sends sharing links share them by max-min.
#include <memory>
#include <unordered_map>

#include "sim/network/comm_base.hpp"
#include "sim/network/stage_fluid.hpp"

namespace cs::net {

class FluidComm final : public CommBase {
 public:
  FluidComm(Network& network, Placement placement, const CommConfig& config);
  ~FluidComm() override;

  std::string_view model_name() const override { return "analytical"; }
  std::vector<std::pair<std::string, uint64_t>> counters() const override { return {}; }
  std::size_t active_flows() const override { return fluid_.moving_runs(); }
  LinkUsage link_usage() const override;
  uint32_t link_load(uint32_t link) const override { return fluid_.runs_assigned(link); }
  bool fabric_idle() const override { return fluid_.active_runs() == 0; }

 private:
  void start_send(TransferId id, int src_gpu, int dst_gpu, double bytes, uint64_t flow_key) override;
  double cancel_send(TransferId id) override;
  CollectiveRunner& runner(const work::CollectivePlan& plan) override;

  // A send's one-transfer plan, routed: one per route (sends between the same GPUs on the
  // same path share it).
  struct SendPlan {
    work::CollectivePlan plan;
    std::unique_ptr<RoutedPlan> routed;
    uint32_t users = 0;  // sends in flight on it; it is dropped at 0 (traffic has many routes)
  };
  // The plan of the route from src to dst, built or found, with one more user.
  const topo::Route* use_send_plan(int src_gpu, int dst_gpu, uint64_t flow_key);
  void drop_user(TransferId id);
  std::unordered_map<TransferId, const topo::Route*> route_of_;  // sends in flight

  StageFluid fluid_;
  std::unordered_map<const topo::Route*, std::unique_ptr<SendPlan>> sends_;
  std::unordered_map<const work::CollectivePlan*, std::unique_ptr<CollectiveRunner>> runners_;
};

}  // namespace cs::net
