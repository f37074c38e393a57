#include "sim/network/flow_comm.hpp"

#include "sim/network/collective_run.hpp"
#include "sim/network/ring_collective.hpp"

namespace cs::net {

FlowComm::FlowComm(Network& network, Placement placement, const CommConfig& config)
    : CommBase(network, std::move(placement), config), flows_(network.flows()) {}

void FlowComm::start_send(TransferId id, int src_gpu, int dst_gpu, double bytes, uint64_t flow_key) {
  // The flow's tag is the transfer's id: a stale completion (cancelled at the instant it
  // finished) is told apart by its generation.
  Slot& s = slot_of(id);
  s.route = &network().route(src_gpu, dst_gpu, flow_key);
  s.flow = flows_.start(network().path_of(*s.route), bytes, this, id);
}

double FlowComm::cancel_send(TransferId id) { return flows_.cancel(slot_of(id).flow, this, id); }

void FlowComm::check_request(work::CollectiveOp op, work::CollectiveAlgorithm algorithm) const {
  if (config().granularity != Granularity::step) return;
  if (op != work::CollectiveOp::all_reduce || algorithm != work::CollectiveAlgorithm::ring)
    throw CommError("granularity",
                    "\"step\" runs ring all_reduce only; got " + std::string(work::to_string(algorithm)) + " " +
                        std::string(work::to_string(op)),
                    "use \"pipeline\"");
}

CollectiveRunner& FlowComm::runner(const work::CollectivePlan& plan) {
  auto& r = runners_[&plan];
  if (r) return *r;
  if (config().granularity == Granularity::step) {  // check_request let only ring all_reduce through
    r = std::make_unique<StepRingRun>(network(), plan);
  } else {
    r = std::make_unique<CollectiveRun>(network(), plan);
  }
  return *r;
}

std::vector<std::pair<std::string, uint64_t>> FlowComm::counters() const {
  const FlowModelStats& st = flows_.stats();
  return {{"flows", st.flows_started},
          {"recomputations", st.recomputations},
          {"fast_path_updates", st.fast_path_updates},
          {"max_component_flows", st.max_component_flows}};
}

LinkUsage FlowComm::link_usage() const {
  LinkUsage u;
  u.elapsed_s = now();
  u.bytes = network().fold_bytes(flows_.link_bytes());
  u.busy_s = network().fold_busy(flows_.link_busy_s());
  u.peak_utilization = network().fold_utilization(flows_.link_peak_utilization());
  return u;
}

}  // namespace cs::net
