#include "sim/network/stage_fluid.hpp"

#include <algorithm>
#include <cmath>
#include <limits>
#include <stdexcept>

namespace cs::net {

namespace {

// Stages whose finish times differ by less than this (relative) finish in one instant: sums
// along different paths leave a few ulps between "simultaneous" ends (as in flow_model.hpp).
constexpr double kSameInstantRel = 1e-13;
// A link whose capacity left per unit of demand is within this (relative) of the smallest is
// full at the same rate: symmetric stages are fixed together.
constexpr double kSameRateRel = 1e-12;

}  // namespace

StageFluid::StageFluid(Network& network) : sim_(network.sim()) {
  const auto& links = network.topology().links();
  capacity_Bps_.reserve(links.size());
  for (const topo::Link& l : links) capacity_Bps_.push_back(l.bandwidth_Bps);
  min_capacity_Bps_ = capacity_Bps_.empty() ? 1.0 : *std::min_element(capacity_Bps_.begin(), capacity_Bps_.end());
  const std::size_t n = links.size();
  usage_Bps_.assign(n, 0.0);
  bytes_.assign(n, 0.0);
  busy_s_.assign(n, 0.0);
  peak_.assign(n, 0.0);
  left_Bps_.assign(n, 0.0);
  demand_Bps_.assign(n, 0.0);
  unfixed_.assign(n, 0);
}

void StageFluid::start(const RoutedPlan& plan, double bytes, const CollectiveCosts& costs,
                       std::function<void()> on_done) {
  if (!(bytes > 0) || !std::isfinite(bytes))
    throw std::invalid_argument("StageFluid::start: bytes must be a finite number > 0");
  if (!(costs.bandwidth_efficiency > 0 && costs.bandwidth_efficiency <= 1))
    throw std::invalid_argument("StageFluid::start: bandwidth_efficiency must be in (0, 1]");
  if (plan.stages() == 0) throw std::invalid_argument("StageFluid::start: the plan has no stages");
  std::size_t id;
  if (free_.empty()) {
    id = runs_.size();
    runs_.emplace_back();
  } else {
    id = free_.back();
    free_.pop_back();
  }
  Run& r = runs_[id];
  r.plan = &plan;
  r.scale = bytes / costs.bandwidth_efficiency;
  r.costs = costs;
  r.stage = 0;
  r.on_done = std::move(on_done);
  ++active_;
  wait_for_stage(id, costs.base_latency_s);
}

void StageFluid::wait_for_stage(std::size_t id, double extra_latency_s) {
  const Run& r = runs_[id];
  const double latency = r.plan->latency_s(r.stage, r.costs) + extra_latency_s;
  sim_.schedule_in(latency, *this, id);
}

void StageFluid::begin_moving(std::size_t id) {
  Run& r = runs_[id];
  if (!(r.plan->per_byte_s(r.stage) > 0)) {  // a stage with no transfers: no bytes to wait for
    end_stage(id);
    return;
  }
  r.remaining = 1;
  r.rate = 0;  // until the update at this instant solves
  moving_.push_back(id);
  request_update();
}

void StageFluid::end_stage(std::size_t id) {
  Run& r = runs_[id];
  if (++r.stage < r.plan->stages()) {
    wait_for_stage(id, 0.0);
    return;
  }
  r.plan = nullptr;
  --active_;
  free_.push_back(id);
  // The callback may start a run, which may reuse this slot: call a moved-out copy.
  if (auto done = std::move(r.on_done)) done();
}

void StageFluid::request_update() {
  if (in_update_) return;  // the update running now solves after every change it makes
  const double now = sim_.now();
  if (update_scheduled_) {
    if (update_at_ <= now) return;
    sim_.cancel(update_event_);
  }
  update_event_ = sim_.schedule_at(now, *this, kUpdate, kLate);
  update_scheduled_ = true;
  update_at_ = now;
}

void StageFluid::on_event(uint64_t tag) {
  if (tag != kUpdate) {
    begin_moving(static_cast<std::size_t>(tag));
    return;
  }
  update_scheduled_ = false;
  in_update_ = true;
  advance();
  finish_due();
  solve();
  in_update_ = false;
}

void StageFluid::advance() {
  const double now = sim_.now(), dt = now - last_update_;
  last_update_ = now;
  if (!(dt > 0)) return;
  for (std::size_t id : moving_) {
    Run& r = runs_[id];
    r.remaining = std::max(0.0, r.remaining - r.rate * dt);
  }
  for (topo::LinkId l : links_in_use_) {
    bytes_[l] += usage_Bps_[l] * dt;
    busy_s_[l] += dt;
    peak_[l] = std::max(peak_[l], usage_Bps_[l] / capacity_Bps_[l]);
  }
}

void StageFluid::finish_due() {
  const double now = sim_.now();
  std::vector<std::size_t> due;
  std::erase_if(moving_, [&](std::size_t id) {
    const Run& r = runs_[id];
    const bool done = r.remaining <= 0 || (r.rate > 0 && r.remaining / r.rate <= kSameInstantRel * now);
    if (done) due.push_back(id);
    return done;
  });
  // In run order, so that callbacks (which may start runs) come in a deterministic order.
  std::sort(due.begin(), due.end());
  for (std::size_t id : due) {
    runs_[id].remaining = 0;
    runs_[id].rate = 0;
    end_stage(id);
  }
}

void StageFluid::solve() {
  for (topo::LinkId l : links_in_use_) usage_Bps_[l] = 0;
  links_in_use_.clear();

  // At a per-flow rate theta a stage moves at theta x weight / scale of its bytes per second
  // (its most loaded flows get theta), so it uses unit load x weight x theta of each link.
  auto for_each_link = [this](const Run& r, auto&& f) {
    const auto links = r.plan->links(r.stage);
    const auto unit = r.plan->unit_loads(r.stage);
    const double weight = r.plan->flow_weight(r.stage);
    for (std::size_t i = 0; i < links.size(); ++i) f(links[i], unit[i] * weight);
  };
  for (std::size_t id : moving_) {
    runs_[id].theta = 0;
    for_each_link(runs_[id], [&](topo::LinkId l, double demand) {
      if (unfixed_[l]++ == 0) {
        links_in_use_.push_back(l);
        left_Bps_[l] = capacity_Bps_[l];
        demand_Bps_[l] = 0;
      }
      demand_Bps_[l] += demand;
    });
  }

  // Progressive filling on the common per-flow rate theta of the stages not fixed yet: the
  // fullest link fixes every stage on it (and on links as full) at that theta. Every stage
  // crosses a link that fills (alone, its bottleneck), so the loop ends.
  std::size_t unfixed_runs = moving_.size();
  std::vector<std::size_t> fixed_now;
  while (unfixed_runs > 0) {
    double least = std::numeric_limits<double>::infinity();
    for (topo::LinkId l : links_in_use_)
      if (unfixed_[l] > 0) least = std::min(least, left_Bps_[l] / demand_Bps_[l]);
    const double full = least * (1 + kSameRateRel);
    fixed_now.clear();
    for (std::size_t id : moving_) {
      const Run& r = runs_[id];
      if (r.theta > 0) continue;
      bool bound = false;
      for_each_link(r, [&](topo::LinkId l, double) { bound = bound || left_Bps_[l] <= full * demand_Bps_[l]; });
      if (bound) fixed_now.push_back(id);
    }
    // Exact arithmetic leaves theta > 0; the floor keeps a rounding residue from stalling a
    // stage (1e-9 of a link's capacity per flow).
    const double theta = std::max(least, 1e-9 * min_capacity_Bps_);
    for (std::size_t id : fixed_now) {
      Run& r = runs_[id];
      r.theta = theta;
      for_each_link(r, [&](topo::LinkId l, double demand) {
        left_Bps_[l] = std::max(0.0, left_Bps_[l] - demand * theta);
        demand_Bps_[l] -= demand;
        if (--unfixed_[l] == 0) demand_Bps_[l] = 0;
      });
    }
    unfixed_runs -= fixed_now.size();
  }

  // Rates, link usage and the next finish.
  double next = engine::kForever;
  for (std::size_t id : moving_) {
    Run& r = runs_[id];
    r.rate = r.theta * r.plan->flow_weight(r.stage) / r.scale;
    for_each_link(r, [&](topo::LinkId l, double demand) { usage_Bps_[l] += demand * r.theta; });
    next = std::min(next, sim_.now() + r.remaining / r.rate);
  }
  if (next < engine::kForever) {
    update_event_ = sim_.schedule_at(next, *this, kUpdate, kLate);
    update_scheduled_ = true;
    update_at_ = next;
  }
}

std::vector<double> StageFluid::link_bytes() const {
  std::vector<double> out = bytes_;
  const double dt = sim_.now() - last_update_;
  for (topo::LinkId l : links_in_use_) out[l] += usage_Bps_[l] * dt;
  return out;
}

std::vector<double> StageFluid::link_busy_s() const {
  std::vector<double> out = busy_s_;
  const double dt = sim_.now() - last_update_;
  for (topo::LinkId l : links_in_use_) out[l] += dt;
  return out;
}

std::vector<double> StageFluid::link_peak_utilization() const {
  std::vector<double> out = peak_;
  if (sim_.now() > last_update_)
    for (topo::LinkId l : links_in_use_) out[l] = std::max(out[l], usage_Bps_[l] / capacity_Bps_[l]);
  return out;
}

}  // namespace cs::net
