#include "sim/network/fluid_comm.hpp"

namespace cs::net {

FluidComm::FluidComm(Network& network, Placement placement, const CommConfig& config)
    : CommBase(network, std::move(placement), config), fluid_(network) {
  if (config.granularity == Granularity::step)
    throw CommError("granularity",
                    "\"step\" (every ring step its own flow) runs on the flow model; the analytical model costs "
                    "pipelines",
                    "set network.model to \"flow\", or granularity to \"pipeline\"");
  // Load-aware routings see the stages on each link, moving or still in flight.
  network.set_load_oracle([this](topo::LinkId l) { return fluid_.runs_assigned(l); });
}

FluidComm::~FluidComm() { network().set_load_oracle({}); }

const topo::Route* FluidComm::use_send_plan(int src_gpu, int dst_gpu, uint64_t flow_key) {
  const topo::Route* route = &network().route(src_gpu, dst_gpu, flow_key);  // routers keep routes in place
  auto& s = sends_[route];
  if (!s) {
    s = std::make_unique<SendPlan>();
    s->plan.op = work::CollectiveOp::send_recv;
    s->plan.algorithm = work::CollectiveAlgorithm::direct;
    s->plan.ranks = {src_gpu, dst_gpu};
    work::Stage& stage = s->plan.stages.emplace_back();
    stage.name = "send";
    stage.transfers.push_back({src_gpu, dst_gpu, 1.0, -1});
    s->routed = std::make_unique<RoutedPlan>(network(), s->plan,
                                             [flow_key](std::size_t, std::size_t) { return flow_key; });
  }
  ++s->users;
  return route;
}

void FluidComm::drop_user(TransferId id) {
  const auto it = route_of_.find(id);
  const auto plan = sends_.find(it->second);
  if (--plan->second->users == 0) sends_.erase(plan);
  route_of_.erase(it);
}

void FluidComm::start_send(TransferId id, int src_gpu, int dst_gpu, double bytes, uint64_t flow_key) {
  const topo::Route* route = use_send_plan(src_gpu, dst_gpu, flow_key);
  route_of_.emplace(id, route);
  slot_of(id).route = route;
  // No protocol: the wire's latency and the bytes alone, as a flow in the flow model.
  slot_of(id).run = fluid_.start(*sends_.at(route)->routed, bytes, CollectiveCosts{}, [this, id] {
    drop_user(id);  // the fluid no longer refers to the plan
    complete(id);
  });
}

double FluidComm::cancel_send(TransferId id) {
  const double delivered = fluid_.cancel(slot_of(id).run);
  if (delivered >= 0) drop_user(id);
  return delivered;
}

CollectiveRunner& FluidComm::runner(const work::CollectivePlan& plan) {
  auto& r = runners_[&plan];
  if (!r) {
    const RoutedPlan& idle = routed(plan);
    r = std::make_unique<FluidCollectiveRun>(fluid_, network(), plan, idle, routed_on_idle(plan));
  }
  return *r;
}

LinkUsage FluidComm::link_usage() const {
  LinkUsage u;
  u.elapsed_s = now();
  u.bytes = network().fold_bytes(fluid_.link_bytes());
  u.busy_s = network().fold_busy(fluid_.link_busy_s());
  return u;
}

}  // namespace cs::net
