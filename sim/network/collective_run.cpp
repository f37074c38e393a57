#include "sim/network/collective_run.hpp"

#include <algorithm>
#include <array>
#include <map>
#include <optional>
#include <stdexcept>

#include "common/free_slots.hpp"

namespace cs::net {

CollectiveRun::CollectiveRun(Network& network, const work::CollectivePlan& plan, std::size_t exchange_pairs)
    : network_(network), plan_(plan) {
  if (network_.load_aware()) return;  // each stage is routed when it starts
  stages_.reserve(plan.stages.size());
  Network::StagePlacement placement(network_);  // places nothing: the routing ignores load
  for (const work::Stage& stage : plan.stages) {
    if (auto exchange = exchange_stage(stage, exchange_pairs)) stages_.push_back(std::move(*exchange));
    else stages_.push_back(route_stage(stage, placement));
  }
}

std::unique_ptr<CollectiveRun::StageRoutes> CollectiveRun::exchange_stage(const work::Stage& stage,
                                                                           std::size_t exchange_pairs) {
  if (!stage.all_pairs() || stage.size() < exchange_pairs) return nullptr;
  // Its latency from the slowest route within a node and across nodes, counted on every
  // core without keeping a route; null where the routing cannot compute routes uncached.
  std::unique_ptr<topo::AllPairsCounter> counter = network_.all_pairs_counter(stage.pair_members);
  if (!counter) return nullptr;
  topo::PairLoads count = network_.count_all_pairs(stage.pair_members, *counter);
  const std::array<double, 3> max_wire_s = max_wire_by_class(network_.topology(), stage.pair_members[0], count);
  auto sr = std::make_unique<StageRoutes>(StageRoutes{{}, StageLatency(stage.steps, max_wire_s), nullptr});
  // The exchange's solve starts from these counts instead of a pass over the routes.
  sr->exchange = std::make_unique<StagePairs>(network_, stage, std::move(counter), std::move(count.crossings));
  return sr;
}

void CollectiveRun::StagePairs::append(std::size_t i, topo::Route& scratch, std::vector<uint32_t>& out) const {
  const auto [a, b] = stage_.pair_indices(i);
  counter_->append_links(a, b, scratch, out);
}

void CollectiveRun::StagePairs::links(std::size_t i, std::vector<uint32_t>& out) const {
  topo::Route scratch;
  append(i, scratch, out);
}

void CollectiveRun::StagePairs::links_of(std::span<const uint32_t> pairs, std::vector<uint32_t>& out,
                                         std::vector<uint32_t>& ends) const {
  topo::Route scratch;  // one route's buffers for the batch
  for (const uint32_t p : pairs) {
    append(p, scratch, out);
    ends.push_back(static_cast<uint32_t>(out.size()));
  }
}

bool CollectiveRun::StagePairs::pairs_crossing(uint32_t link, std::vector<uint32_t>& out) const {
  leg_pairs_.clear();
  if (!counter_->append_leg_pairs(link, leg_pairs_)) return false;
  for (const auto& [a, b] : leg_pairs_) out.push_back(static_cast<uint32_t>(stage_.pair_index(a, b)));  // ascending
  return true;
}

RouteId CollectiveRun::StagePairs::route(std::size_t i) {
  const work::Transfer t = stage_.transfer(i);
  return network_.path_of(network_.route(t.src, t.dst));
}

CollectiveRun::StageRoutes CollectiveRun::route_stage(const work::Stage& stage, Network::StagePlacement& placement) {
  const std::size_t n = stage.size();
  std::map<int32_t, std::vector<std::size_t>> chains;  // chain id -> its transfers, in order
  for (std::size_t i = 0; i < stage.transfers.size(); ++i)  // an all-pairs stage has no chain
    if (stage.transfers[i].chain >= 0) chains[stage.transfers[i].chain].push_back(i);
  std::vector<const topo::Route*> routes(n);
  for (std::size_t i = 0; stage.all_pairs() && i < n; ++i) {  // UGAL: an all-to-all on its start routes first
    const work::Transfer t = stage.transfer(i);
    placement.prime(t.src, t.dst);
  }
  // Chains' transfers first, chain by chain, then the others: routed together.
  std::vector<std::size_t> order;
  order.reserve(n);
  for (const auto& [chain, members] : chains) order.insert(order.end(), members.begin(), members.end());
  for (std::size_t i = 0; i < n; ++i)
    if (stage.all_pairs() || stage.transfers[i].chain < 0) order.push_back(i);
  std::vector<Network::Endpoints> batch;
  batch.reserve(n);
  for (std::size_t i : order) {
    const work::Transfer t = stage.transfer(i);
    batch.push_back({t.src, t.dst, 0});
  }
  const std::vector<const topo::Route*> chosen = placement.route_all(batch);
  for (std::size_t b = 0; b < n; ++b) routes[order[b]] = chosen[b];
  std::vector<StageLatency::Wire> wires(n);
  for (std::size_t i = 0; i < n; ++i) {
    const work::Transfer t = stage.transfer(i);
    wires[i] = {routes[i]->latency_s, transfer_class(network_.topology(), t.src, t.dst)};
  }
  StageRoutes sr{{}, StageLatency(stage, wires), nullptr};
  std::vector<const topo::Route*> edges;
  for (const auto& [chain, members] : chains) {
    edges.clear();
    for (std::size_t i : members) edges.push_back(routes[i]);
    // A chain's transfers share one share (collective_plan.hpp).
    sr.flights.push_back({network_.chain_path(edges), stage.transfers[members.front()].share, 0.0,
                          static_cast<double>(members.size())});
  }
  for (std::size_t i = 0; i < n; ++i) {
    const work::Transfer t = stage.transfer(i);
    if (t.chain < 0) sr.flights.push_back({network_.path_of(*routes[i]), t.share, routes[i]->latency_s, 1.0});
  }
  return sr;
}

RunHandle CollectiveRun::start(double bytes, const CollectiveCosts& costs, std::function<void()> on_done) {
  if (!(bytes > 0)) throw std::invalid_argument("CollectiveRun::start: bytes must be > 0");
  if (plan_.stages.empty()) throw std::invalid_argument("CollectiveRun::start: the plan has no stages");
  const std::size_t slot = take_slot(instances_, free_);
  Instance& in = instances_[slot];
  in.bytes = bytes;
  in.costs = costs;
  in.on_done = std::move(on_done);
  in.stage = 0;
  in.payload_done = 0;
  in.unheard = 0;
  in.active = true;
  if (!network_.load_aware()) in.priced = priced(costs);
  ++active_;
  start_stage(slot, costs.base_latency_s);
  return {slot, in.serial};
}

std::size_t CollectiveRun::priced(const CollectiveCosts& costs) {
  for (std::size_t i = 0; i < priced_.size(); ++i)
    if (priced_[i].costs == costs) return i;
  PricedStages p{costs, {}};
  p.seconds.reserve(stages_.size());
  for (const StageRoutes& stage : stages_) p.seconds.push_back(stage.latency.seconds(costs));
  priced_.push_back(std::move(p));
  return priced_.size() - 1;
}

void CollectiveRun::start_stage(std::size_t slot, double extra_latency_s) {
  Instance& in = instances_[slot];
  if (network_.load_aware()) {
    Network::StagePlacement placement(network_);
    in.routed = std::make_unique<StageRoutes>(route_stage(plan_.stages[in.stage], placement));
    in.routes = in.routed.get();
  } else {
    in.routes = &stages_[in.stage];
  }
  const StageRoutes& stage = *in.routes;
  const double stage_s =
      network_.load_aware() ? stage.latency.seconds(in.costs) : priced_[in.priced].seconds[in.stage];
  const double latency = stage_s + extra_latency_s;
  const double scale = in.bytes / in.costs.bandwidth_efficiency;
  if (stage.exchange) {
    in.outstanding = 1;
    in.flows.clear();
    in.delivered.clear();
    network_.flows().start_exchange(*stage.exchange, plan_.stages[in.stage].pair_share * scale, this,
                                    tag_of(slot, 0), latency);
    return;
  }
  in.outstanding = stage.flights.size();
  in.flows.resize(stage.flights.size());
  in.delivered.assign(stage.flights.size(), 0);
  for (std::size_t i = 0; i < stage.flights.size(); ++i) {
    const Flight& f = stage.flights[i];
    // Every flow waits out the stage latency; a route's own latency is part of it.
    in.flows[i] = network_.flows().start(f.route, f.share * scale, this, tag_of(slot, i),
                                         std::max(0.0, latency - f.wire_latency_s));
  }
}

void CollectiveRun::on_flow_done(FlowId /*flow*/, uint64_t tag) {
  const std::size_t slot = tag & 0xffffffffu, flight = tag >> 32;
  Instance& in = instances_[slot];
  if (!in.active) {  // cancelled at the instant this flow finished: the last word frees it
    if (--in.unheard == 0) free_.push_back(slot);
    return;
  }
  if (in.routes->exchange) {
    in.payload_done += payload_of_exchange(in);
  } else {
    in.delivered[flight] = 1;
    const Flight& f = in.routes->flights[flight];
    in.payload_done += f.share * in.bytes * f.transfers;
  }
  if (--in.outstanding > 0) return;
  if (++in.stage < plan_.stages.size()) {
    start_stage(slot, 0.0);
    return;
  }
  // The callback may start a run, which may reuse this slot: call a moved-out copy.
  auto done = std::move(in.on_done);
  release(slot);
  if (done) done();
}

double CollectiveRun::cancel(RunHandle run) {
  if (run.slot >= instances_.size()) return -1;
  Instance& in = instances_[run.slot];
  if (!in.active || in.serial != run.serial) return -1;
  double delivered = in.payload_done;
  const double scale = in.bytes / in.costs.bandwidth_efficiency;
  in.unheard = 0;
  if (in.routes->exchange) {
    // An exchange tells its end from the flow model's own event (or its last flow's): while
    // the run is active it is there to cancel.
    const double wire = network_.flows().cancel_exchange(this, tag_of(run.slot, 0));
    if (wire < 0) throw std::logic_error("CollectiveRun::cancel: the stage's exchange is not active");
    delivered += wire * in.costs.bandwidth_efficiency;
  }
  for (std::size_t i = 0; i < in.flows.size(); ++i) {
    if (in.delivered[i]) continue;
    const Flight& f = in.routes->flights[i];
    const double wire = network_.flows().cancel(in.flows[i], this, tag_of(run.slot, i));
    if (wire >= 0) {
      delivered += wire * in.costs.bandwidth_efficiency * f.transfers;
    } else {
      // It finished at this instant and its completion is still to be told: it counts, and
      // the slot waits for that word before it is reused.
      delivered += f.share * scale * in.costs.bandwidth_efficiency * f.transfers;
      ++in.unheard;
    }
  }
  release(run.slot);
  return delivered;
}

void CollectiveRun::release(std::size_t slot) {
  Instance& in = instances_[slot];
  in.active = false;
  in.on_done = nullptr;
  ++in.serial;
  --active_;
  if (in.unheard == 0) free_.push_back(slot);
}

}  // namespace cs::net
