#include "sim/network/stage_fluid.hpp"

#include <algorithm>
#include <cmath>
#include <functional>
#include <limits>
#include <stdexcept>

#include "common/free_slots.hpp"
#include "sim/engine/priority.hpp"

namespace cs::net {

namespace {

// Stages whose finish times differ by less than this (relative) finish in one instant: sums
// along different paths leave a few ulps between "simultaneous" ends (as in flow_model.hpp).
constexpr double kSameInstantRel = 1e-13;
// A link whose capacity left per unit of demand is within this (relative) of the smallest is
// full at the same rate: symmetric stages are fixed together.
constexpr double kSameRateRel = 1e-12;

}  // namespace

StageFluid::StageFluid(Network& network) : sim_(network.sim()), lanes_(network.lanes()) {
  capacity_Bps_ = network.capacities_Bps();
  const std::size_t n = capacity_Bps_.size();
  min_capacity_Bps_ = capacity_Bps_.empty() ? 1.0 : *std::min_element(capacity_Bps_.begin(), capacity_Bps_.end());
  bytes_.assign(n, 0.0);
  busy_s_.assign(n, 0.0);
  busy_since_.assign(n, 0.0);
  left_Bps_.assign(n, 0.0);
  demand_Bps_.assign(n, 0.0);
  unfixed_.assign(n, 0);
  assigned_.assign(n, 0);
  link_touched_.assign(n, 0);
  runs_on_.resize(n);
}

template <class F>
void StageFluid::for_each_link(const Run& r, F&& f) const {
  // At a per-flow rate theta a stage moves at theta x weight / scale of its bytes per second
  // (its most loaded flows get theta), so it uses unit load x weight x theta of each link.
  const auto links = r.plan->links(r.stage);
  const auto unit = r.plan->unit_loads(r.stage);
  const double weight = r.plan->flow_weight(r.stage);
  for (std::size_t i = 0; i < links.size(); ++i) f(links[i], unit[i] * weight);
}

RunHandle StageFluid::start(const RoutedPlan& plan, double bytes, const CollectiveCosts& costs,
                       std::function<void()> on_done) {
  if (!(bytes > 0) || !std::isfinite(bytes))
    throw std::invalid_argument("StageFluid::start: bytes must be a finite number > 0");
  if (!(costs.bandwidth_efficiency > 0 && costs.bandwidth_efficiency <= 1))
    throw std::invalid_argument("StageFluid::start: bandwidth_efficiency must be in (0, 1]");
  if (plan.stages() == 0) throw std::invalid_argument("StageFluid::start: the plan has no stages");
  const std::size_t id = take_slot(runs_, free_);
  Run& r = runs_[id];
  r.plan = &plan;
  r.scale = bytes / costs.bandwidth_efficiency;
  r.costs = costs;
  r.stage = 0;
  r.payload_done = 0;
  r.on_done = std::move(on_done);
  ++active_;
  wait_for_stage(id, costs.base_latency_s);
  return {id, r.serial};
}

double StageFluid::cancel(RunHandle id) {
  if (id.slot >= runs_.size()) return -1;
  Run& r = runs_[id.slot];
  if (r.plan == nullptr || r.serial != id.serial) return -1;
  double delivered = r.payload_done;
  const auto moving = std::find(moving_.begin(), moving_.end(), id.slot);
  if (moving != moving_.end()) {
    const double moved = 1 - std::clamp(r.remaining - r.rate * (sim_.now() - last_update_), 0.0, 1.0);
    delivered += r.plan->payload_share(r.stage) * r.scale * r.costs.bandwidth_efficiency * moved;
    moving_.erase(moving);
    stop_moving(id.slot, moved);
    changed_neighbours();
    request_update();
  } else if (r.wait_event.valid()) {
    sim_.cancel(r.wait_event);
    assign(r, -1);
  } else {
    // Its stage ended at this instant and finish_due has not moved it on yet (it checks the
    // serial): the stage's bytes were delivered.
    delivered += r.plan->payload_share(r.stage) * r.scale * r.costs.bandwidth_efficiency;
  }
  release(id.slot);
  return delivered;
}

void StageFluid::release(std::size_t id) {
  Run& r = runs_[id];
  r.plan = nullptr;
  r.wait_event = {};
  r.on_done = nullptr;  // a cancelled run's callback (and what it holds) goes now
  ++r.serial;
  --active_;
  free_.push_back(id);
}

void StageFluid::wait_for_stage(std::size_t id, double extra_latency_s) {
  const Run& r = runs_[id];
  const double latency = r.plan->latency_s(r.stage, r.costs) + extra_latency_s;
  runs_[id].wait_event = sim_.schedule_in(latency, *this, id);
  assign(r, +1);
}

void StageFluid::assign(const Run& r, int delta) {
  // Under a routing of several lanes a run counts its lane crossings, as the flow model counts
  // a flow's and a stage's placements count theirs (Network::model_links); else once a link.
  const auto links = r.plan->links(r.stage);
  const auto crossings = r.plan->crossings(r.stage);
  for (std::size_t i = 0; i < links.size(); ++i)
    assigned_[links[i]] += static_cast<uint32_t>(delta * (lanes_ > 1 ? static_cast<int>(crossings[i]) : 1));
}

void StageFluid::begin_moving(std::size_t id) {
  Run& r = runs_[id];
  r.wait_event = {};
  if (!(r.plan->per_byte_s(r.stage) > 0)) {  // a stage with no transfers: no bytes to wait for
    assign(r, -1);
    end_stage(id);
    return;
  }
  r.remaining = 1;
  r.rate = 0;  // until the update at this instant solves
  // Alone, its busiest link per flow bounds it: min over links of capacity / (unit load x
  // weight) = 1 / (weight x seconds per byte at the busiest link).
  r.cap = 1 / (r.plan->flow_weight(r.stage) * r.plan->per_byte_s(r.stage));
  moving_.push_back(id);
  const auto links = r.plan->links(r.stage);
  r.pos.resize(links.size());
  for (std::size_t k = 0; k < links.size(); ++k) {
    std::vector<OnLink>& on = runs_on_[links[k]];
    if (on.empty()) busy_since_[links[k]] = sim_.now();
    r.pos[k] = static_cast<uint32_t>(on.size());
    on.push_back({static_cast<uint32_t>(id), static_cast<uint32_t>(k)});
  }
  mark_changed(id);
  request_update();
}

void StageFluid::changed_neighbours() {
  // After the stages that stop now have all left: hundreds ending together on a link mark
  // the ones that stay once, not once per leaver.
  for (topo::LinkId l : touched_)
    for (const OnLink& other : runs_on_[l]) mark_changed(other.run);
  touched_.clear();
  ++touch_epoch_;
}

void StageFluid::mark_changed(std::size_t id) {
  Run& r = runs_[id];
  if (r.changed == change_epoch_) return;  // queued already
  r.changed = change_epoch_;
  changed_.push_back(id);
}

void StageFluid::stop_moving(std::size_t id, double moved_share) {
  Run& r = runs_[id];
  assign(r, -1);
  r.remaining = 0;
  r.rate = r.theta = 0;
  const auto links = r.plan->links(r.stage);
  const auto unit = r.plan->unit_loads(r.stage);
  for (std::size_t i = 0; i < links.size(); ++i) {
    const topo::LinkId l = links[i];
    bytes_[l] += unit[i] * r.scale * moved_share;
    std::vector<OnLink>& on = runs_on_[l];
    // Swap-remove: the last entry takes its place (stages that end together, hundreds on a
    // link, leave in O(1) each).
    const OnLink last = on.back();
    on[r.pos[i]] = last;
    runs_[last.run].pos[last.hop] = r.pos[i];
    on.pop_back();
    if (on.empty()) {
      busy_s_[l] += sim_.now() - busy_since_[l];
    } else if (link_touched_[l] != touch_epoch_) {  // its other stages re-solve (once per link)
      link_touched_[l] = touch_epoch_;
      touched_.push_back(l);
    }
  }
}

void StageFluid::end_stage(std::size_t id) {
  Run& r = runs_[id];
  r.payload_done += r.plan->payload_share(r.stage) * r.scale * r.costs.bandwidth_efficiency;
  if (++r.stage < r.plan->stages()) {
    wait_for_stage(id, 0.0);
    return;
  }
  // The callback may start a run, which may reuse this slot: call a moved-out copy.
  auto done = std::move(r.on_done);
  release(id);
  if (done) done();
}

void StageFluid::request_update() {
  if (in_update_) return;  // the update running now solves after every change it makes
  const double now = sim_.now();
  if (update_scheduled_) {
    if (update_at_ <= now) return;
    sim_.cancel(update_event_);
  }
  update_event_ = sim_.schedule_at(now, *this, kUpdate, engine::priority::settle);
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
}

void StageFluid::finish_due() {
  const double now = sim_.now();
  std::vector<RunHandle> due;
  std::erase_if(moving_, [&](std::size_t id) {
    const Run& r = runs_[id];
    const bool done = r.remaining <= 0 || (r.rate > 0 && r.remaining / r.rate <= kSameInstantRel * now);
    if (done) due.push_back({id, r.serial});
    return done;
  });
  // In run order, so that callbacks (which may start runs) come in a deterministic order.
  std::sort(due.begin(), due.end(), [](const RunHandle& a, const RunHandle& b) { return a.slot < b.slot; });
  for (const RunHandle& d : due) stop_moving(d.slot);
  changed_neighbours();
  // A callback may cancel a run that is due too: the serial tells.
  for (const RunHandle& d : due)
    if (runs_[d.slot].serial == d.serial && runs_[d.slot].plan != nullptr) end_stage(d.slot);
}

void StageFluid::solve() {
  // The component of the changed runs: runs joined by shared links. Runs outside it keep
  // their rates (they share no link with it).
  ++epoch_;
  std::vector<std::size_t> runs;
  std::vector<topo::LinkId> shared;
  for (std::size_t seed : changed_) {
    Run& r = runs_[seed];
    if (r.mark == epoch_ || r.plan == nullptr || !(r.remaining > 0)) continue;  // seen, or no longer moving
    r.mark = epoch_;
    runs.push_back(seed);
  }
  changed_.clear();
  ++change_epoch_;
  for (std::size_t i = 0; i < runs.size(); ++i)
    for_each_link(runs_[runs[i]], [&](topo::LinkId l, double) {
      const std::vector<OnLink>& on = runs_on_[l];
      if (on.size() < 2 || unfixed_[l] != 0) return;  // private, or seen (unfixed_ counts below)
      shared.push_back(l);
      unfixed_[l] = static_cast<uint32_t>(on.size());
      left_Bps_[l] = capacity_Bps_[l];
      demand_Bps_[l] = 0;
      for (const OnLink& other : on) {
        Run& o = runs_[other.run];
        if (o.mark == epoch_) continue;
        o.mark = epoch_;
        runs.push_back(other.run);
      }
    });

  // Progressive filling on the common per-flow rate theta. At each level, theta is the least
  // of the stages' own caps and of the shared links' capacity left per unit of demand; the
  // stages at their cap, and those on links that full, are fixed at it. Fixing stages only
  // raises the ratio of the links they leave (or empties them), so a link not full at a level
  // does not become full at that level. At most one level per stage.
  for (std::size_t id : runs) {
    runs_[id].theta = 0;
    for_each_link(runs_[id], [&](topo::LinkId l, double demand) {
      if (unfixed_[l] != 0) demand_Bps_[l] += demand;
    });
  }
  auto fix = [&](std::size_t id, double theta) {
    Run& r = runs_[id];
    r.theta = theta;
    for_each_link(r, [&](topo::LinkId l, double demand) {
      if (unfixed_[l] == 0) return;  // private, or every stage on it fixed
      left_Bps_[l] = std::max(0.0, left_Bps_[l] - demand * theta);
      demand_Bps_[l] -= demand;
      if (--unfixed_[l] == 0) demand_Bps_[l] = 0;
    });
  };
  std::vector<std::size_t> open_runs = runs;  // not fixed yet
  while (!open_runs.empty()) {
    double least = std::numeric_limits<double>::infinity();
    for (std::size_t id : open_runs) least = std::min(least, runs_[id].cap);
    for (topo::LinkId l : shared)
      if (unfixed_[l] > 0) least = std::min(least, left_Bps_[l] / demand_Bps_[l]);
    // Exact arithmetic leaves theta > 0; the floor keeps a rounding residue from stalling a
    // stage (1e-9 of a link's capacity per flow).
    const double theta = std::max(least, 1e-9 * min_capacity_Bps_);
    const double full = least * (1 + kSameRateRel);
    for (std::size_t id : open_runs)
      if (runs_[id].cap <= full) fix(id, theta);
    for (topo::LinkId l : shared)
      if (unfixed_[l] > 0 && left_Bps_[l] <= full * demand_Bps_[l])
        for (const OnLink& on : runs_on_[l])
          if (!(runs_[on.run].theta > 0)) fix(on.run, theta);
    std::erase_if(open_runs, [&](std::size_t id) { return runs_[id].theta > 0; });
    std::erase_if(shared, [&](topo::LinkId l) { return unfixed_[l] == 0; });
  }

  // New rates; then the next finish over every run.
  for (std::size_t id : runs) {
    Run& r = runs_[id];
    r.rate = r.theta * r.plan->flow_weight(r.stage) / r.scale;
  }
  double next = engine::kForever;
  for (std::size_t id : moving_) {
    const Run& r = runs_[id];
    if (r.rate > 0) next = std::min(next, sim_.now() + r.remaining / r.rate);
  }
  if (next < engine::kForever) {
    update_event_ = sim_.schedule_at(next, *this, kUpdate, engine::priority::settle);
    update_scheduled_ = true;
    update_at_ = next;
  }
}

std::vector<double> StageFluid::link_bytes() const {
  std::vector<double> out = bytes_;
  // What moving stages have delivered so far: the moved share of each link's load.
  const double dt = sim_.now() - last_update_;
  for (std::size_t id : moving_) {
    const Run& r = runs_[id];
    const double moved = 1 - std::max(0.0, r.remaining - r.rate * dt);
    const auto links = r.plan->links(r.stage);
    const auto unit = r.plan->unit_loads(r.stage);
    for (std::size_t i = 0; i < links.size(); ++i) out[links[i]] += unit[i] * r.scale * moved;
  }
  return out;
}

std::vector<double> StageFluid::link_busy_s() const {
  std::vector<double> out = busy_s_;
  for (std::size_t l = 0; l < out.size(); ++l)
    if (!runs_on_[l].empty()) out[l] += sim_.now() - busy_since_[l];
  return out;
}

}  // namespace cs::net
