#pragma once
// The communication layer on the flow model (network.model "flow"): a send is one flow on its
// route; a collective runs its plan as flows stage by stage (CollectiveRun), or with
// granularity "step" a ring all-reduce as the textbook ring (StepRingRun). Flows share links
// by max-min fairness with everything else in flight (flow_model.hpp).
#include <memory>
#include <unordered_map>

#include "sim/network/comm_base.hpp"

namespace cs::net {

class FlowComm final : public CommBase, public FlowObserver {
 public:
  FlowComm(Network& network, Placement placement, const CommConfig& config);

  std::string_view model_name() const override { return "flow"; }
  std::vector<std::pair<std::string, uint64_t>> counters() const override;
  std::size_t active_flows() const override { return flows_.active_flows(); }
  LinkUsage link_usage() const override;
  uint32_t link_load(uint32_t link) const override { return flows_.flows_assigned(link); }

  void on_flow_done(FlowId /*flow*/, uint64_t tag) override { complete(tag); }

 private:
  void start_send(TransferId id, int src_gpu, int dst_gpu, double bytes, uint64_t flow_key) override;
  double cancel_send(TransferId id) override;
  CollectiveRunner& runner(const work::CollectivePlan& plan) override;
  // Granularity "step" runs ring all_reduce only.
  void check_request(work::CollectiveOp op, work::CollectiveAlgorithm algorithm) const override;

  FlowModel& flows_;
  std::unordered_map<const work::CollectivePlan*, std::unique_ptr<CollectiveRunner>> runners_;
};

}  // namespace cs::net
