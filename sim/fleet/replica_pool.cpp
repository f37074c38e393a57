#include "sim/fleet/replica_pool.hpp"

#include <algorithm>
#include <stdexcept>

namespace cs::serving {

std::string_view to_string(Market market) {
  return market == Market::spot ? "spot" : "on_demand";
}

std::string_view to_string(DropReason reason) {
  switch (reason) {
    case DropReason::queue_full: return "queue_full";
    case DropReason::timeout: return "timeout";
    case DropReason::lost: return "lost";
    case DropReason::too_large: return "too_large";
  }
  return "?";
}

namespace {
uint64_t event_tag(uint32_t id, uint64_t kind) { return (uint64_t{id} << 1) | kind; }
}  // namespace

ReplicaPool::ReplicaPool(engine::Simulator& sim, PoolSpec spec, ReplicaFactory factory,
                         RequestSink& sink)
    : sim_(sim),
      spec_(std::move(spec)),
      factory_(std::move(factory)),
      sink_(sink),
      cold_start_rng_(sim.random(spec_.name + "/cold_start")),
      balancer_(spec_.balance, sim.random(spec_.name + "/balancer")),
      billed_tw_(sim.now()),
      ready_tw_(sim.now()),
      queue_tw_(sim.now()) {
  validate_cold_start(spec_.cold_start);
  const MarketSpec& m = spec_.market;
  if (!(m.spot_share >= 0 && m.spot_share <= 1))
    throw std::invalid_argument("fleet.market: the spot share must be in [0, 1]");
  if (!(m.on_demand_per_hour >= 0) || !(m.spot_per_hour >= 0))
    throw std::invalid_argument("fleet.prices: prices must be >= 0");
  if (!(spec_.queue_timeout_s > 0)) throw std::invalid_argument("queue_timeout: must be > 0");
}

ReplicaPool::~ReplicaPool() {
  for (Slot& s : slots_) {
    if (s.pending.valid()) sim_.cancel(s.pending);
  }
}

// ---- lifecycle ----

void ReplicaPool::start(int warm) {
  desired_ = std::max(0, warm);
  for (int i = 0; i < desired_; ++i) launch(/*warm=*/true);
}

int ReplicaPool::active_in(Market market) const {
  int n = 0;
  for (const uint32_t id : live_) {
    const ReplicaInfo& info = slots_[id].info;
    if (info.market == market && info.state != ReplicaState::draining) ++n;
  }
  return n;
}

bool ReplicaPool::launch(bool warm) {
  const MarketSpec& m = spec_.market;
  Market market = Market::on_demand;
  if (m.spot_share > 0) {
    const int active = starting_ + ready_;
    const bool wants_spot = active_in(Market::spot) + 1 <= m.spot_share * (active + 1) + 1e-9;
    if (wants_spot) {
      if (spot_available_) market = Market::spot;
      else if (!m.fallback_to_on_demand) return false;
    }
  }
  const auto id = static_cast<uint32_t>(slots_.size());
  slots_.emplace_back();
  Slot& s = slots_.back();
  s.info.id = id;
  s.info.market = market;
  s.info.launched_s = sim_.now();
  live_.push_back(id);
  set_state(s, ReplicaState::starting);
  if (warm) {
    make_ready(id);
  } else {
    s.pending = sim_.schedule_in(draw_cold_start(spec_.cold_start, cold_start_rng_), *this,
                                 event_tag(id, kReady));
  }
  return true;
}

void ReplicaPool::set_state(Slot& s, ReplicaState state) {
  const auto count = [&](ReplicaState st) -> int& {
    return st == ReplicaState::starting ? starting_ : st == ReplicaState::ready ? ready_ : draining_;
  };
  const bool is_new = s.info.state == ReplicaState::starting && state == ReplicaState::starting;
  if (!is_new && s.info.state != ReplicaState::stopped) --count(s.info.state);
  if (state != ReplicaState::stopped) ++count(state);
  s.info.state = state;
  const double now = sim_.now();
  billed_tw_.set(now, billed_count());
  ready_tw_.set(now, ready_);
}

void ReplicaPool::make_ready(uint32_t id) {
  Slot& s = slots_[id];
  s.pending = {};
  s.replica = factory_(*this, id);
  s.info.replica = s.replica.get();
  s.info.ready_s = sim_.now();
  set_state(s, ReplicaState::ready);
  const auto pos = std::lower_bound(ready_list_.begin(), ready_list_.end(), id,
                                    [](const Replica* r, uint32_t v) { return r->id() < v; });
  ready_list_.insert(pos, s.replica.get());
  if (spec_.balance == BalancePolicy::central_queue) push_idle(*s.replica);
  flush_queue();
}

void ReplicaPool::drain(uint32_t id) {
  Slot& s = slots_[id];
  set_state(s, ReplicaState::draining);
  const auto pos = std::find(ready_list_.begin(), ready_list_.end(), s.replica.get());
  if (pos != ready_list_.end()) ready_list_.erase(pos);
  Replica* replica = s.replica.get();
  replica->begin_drain();  // may report drained (and stop) at once
  if (slots_[id].info.state == ReplicaState::stopped) return;
  std::vector<Request> queued;
  replica->take_queued(queued);
  reroute(queued, /*lost=*/false);
}

void ReplicaPool::stop(uint32_t id) {
  Slot& s = slots_[id];
  if (s.info.state == ReplicaState::stopped) return;
  if (s.pending.valid()) {
    sim_.cancel(s.pending);
    s.pending = {};
  }
  if (s.info.state == ReplicaState::ready) {
    const auto pos = std::find(ready_list_.begin(), ready_list_.end(), s.replica.get());
    if (pos != ready_list_.end()) ready_list_.erase(pos);
  }
  closed_seconds_[static_cast<int>(s.info.market)] += sim_.now() - s.info.launched_s;
  s.info.stopped_s = sim_.now();
  s.info.replica = nullptr;
  set_state(s, ReplicaState::stopped);
  live_.erase(std::find(live_.begin(), live_.end(), id));
  if (s.replica) graveyard_.push_back(std::move(s.replica));
}

void ReplicaPool::set_desired(int replicas) {
  desired_ = std::max(0, replicas);
  reconcile();
}

void ReplicaPool::reconcile() {
  graveyard_.clear();  // never called from inside a replica
  int active = starting_ + ready_;
  while (active < desired_ && launch(/*warm=*/false)) ++active;
  // Not-ready replicas go first, newest first.
  for (auto it = live_.rbegin(); it != live_.rend() && active > desired_;) {
    const uint32_t id = *it;
    ++it;
    if (slots_[id].info.state == ReplicaState::starting) {
      stop(id);
      --active;
    }
  }
  // Then the ready replica with the fewest outstanding requests, newest on ties.
  while (active > desired_ && !ready_list_.empty()) {
    Replica* pick = ready_list_.front();
    for (Replica* r : ready_list_) {
      if (r->outstanding() <= pick->outstanding()) pick = r;
    }
    drain(pick->id());
    --active;
  }
}

// ---- requests ----

void ReplicaPool::route(const Request& request) {
  ++routed_;
  forward(request);
}

void ReplicaPool::forward(Request request) {
  if (spec_.balance == BalancePolicy::central_queue) {
    if (queue_.empty()) {
      if (Replica* r = pop_idle()) {
        dispatch(*r, request);
        return;
      }
    }
    enqueue(request);
    return;
  }
  if (ready_list_.empty()) {
    enqueue(request);
    return;
  }
  dispatch(*ready_list_[static_cast<std::size_t>(balancer_.pick(ready_list_))], request);
}

void ReplicaPool::dispatch(Replica& replica, const Request& request) {
  if (!replica.admissible(request)) {
    sink_.on_dropped(request, DropReason::too_large);
    return;
  }
  replica.submit(request);
  if (spec_.balance == BalancePolicy::central_queue && replica.can_start_now()) push_idle(replica);
}

void ReplicaPool::enqueue(const Request& request) {
  if (queue_.size() >= spec_.max_queue) {
    sink_.on_dropped(request, DropReason::queue_full);
    return;
  }
  queue_.push_back(request);
  queue_tw_.set(sim_.now(), static_cast<double>(queue_.size()));
}

Request ReplicaPool::pop_queue() {
  const Request request = queue_.front();
  queue_.pop_front();
  queue_tw_.set(sim_.now(), static_cast<double>(queue_.size()));
  return request;
}

bool ReplicaPool::expired(const Request& request) const {
  return sim_.now() - request.arrival_s > spec_.queue_timeout_s;
}

void ReplicaPool::flush_queue() {
  while (!queue_.empty()) {
    Replica* target = nullptr;
    if (spec_.balance == BalancePolicy::central_queue) {
      target = pop_idle();
    } else if (!ready_list_.empty()) {
      target = ready_list_[static_cast<std::size_t>(balancer_.pick(ready_list_))];
    }
    if (!target) return;
    const Request request = pop_queue();
    if (expired(request)) {
      sink_.on_dropped(request, DropReason::timeout);
      if (spec_.balance == BalancePolicy::central_queue) push_idle(*target);
      continue;
    }
    dispatch(*target, request);
  }
}

void ReplicaPool::push_idle(Replica& replica) {
  Slot& s = slots_[replica.id()];
  if (!s.in_idle) {
    s.in_idle = true;
    idle_.push_back(replica.id());
  }
}

Replica* ReplicaPool::pop_idle() {
  while (!idle_.empty()) {
    const uint32_t id = idle_.back();
    idle_.pop_back();
    Slot& s = slots_[id];
    s.in_idle = false;
    if (s.info.state == ReplicaState::ready && s.replica->can_start_now()) return s.replica.get();
  }
  return nullptr;
}

void ReplicaPool::reroute(std::vector<Request>& requests, bool lost) {
  for (Request& r : requests) {
    if (lost) {
      if (spec_.lost_work == LostWork::drop) {
        sink_.on_dropped(r, DropReason::lost);
        continue;
      }
      ++r.attempts;
    }
    forward(r);
  }
  requests.clear();
}

// ---- listener ----

void ReplicaPool::on_complete(Replica& replica, const Request& request) {
  sink_.on_complete(request, replica.id());
}

void ReplicaPool::on_slot_free(Replica& replica) {
  if (spec_.balance != BalancePolicy::central_queue) return;
  while (!queue_.empty() && replica.can_start_now()) {
    const Request request = pop_queue();
    if (expired(request)) {
      sink_.on_dropped(request, DropReason::timeout);
      continue;
    }
    dispatch(replica, request);
  }
  if (replica.can_start_now()) push_idle(replica);
}

void ReplicaPool::on_drained(Replica& replica) {
  if (slots_[replica.id()].info.state == ReplicaState::draining) stop(replica.id());
}

// ---- spot seam ----

bool ReplicaPool::reclaim(uint32_t id, double warning_s) {
  if (id >= slots_.size()) return false;
  Slot& s = slots_[id];
  switch (s.info.state) {
    case ReplicaState::stopped: return false;
    case ReplicaState::starting: stop(id); break;
    case ReplicaState::ready:
      drain(id);
      [[fallthrough]];
    case ReplicaState::draining:
      if (slots_[id].info.state == ReplicaState::draining) {
        Slot& d = slots_[id];
        if (d.pending.valid()) sim_.cancel(d.pending);
        d.pending = sim_.schedule_in(std::max(0.0, warning_s), *this, event_tag(id, kDeadline));
      }
      break;
  }
  ++reclaims_;
  reconcile();
  return true;
}

void ReplicaPool::set_spot_available(bool available) {
  spot_available_ = available;
  if (available) reconcile();
}

std::vector<uint32_t> ReplicaPool::replicas_in(Market market) const {
  std::vector<uint32_t> out;
  for (const uint32_t id : live_) {
    if (slots_[id].info.market == market) out.push_back(id);
  }
  return out;
}

// ---- events ----

void ReplicaPool::on_event(uint64_t tag) {
  graveyard_.clear();
  const auto id = static_cast<uint32_t>(tag >> 1);
  Slot& s = slots_[id];
  s.pending = {};
  if ((tag & 1) == kReady) {
    if (s.info.state == ReplicaState::starting) make_ready(id);
    return;
  }
  // A reclaim warning ran out: what is still there is lost.
  if (s.info.state != ReplicaState::draining) return;
  s.replica->abort(scratch_);
  std::vector<Request> lost;
  lost.swap(scratch_);
  stop(id);
  reroute(lost, /*lost=*/true);
}

// ---- billing ----

double ReplicaPool::replica_seconds(Market market) const {
  double seconds = closed_seconds_[static_cast<int>(market)];
  for (const uint32_t id : live_) {
    if (slots_[id].info.market == market) seconds += sim_.now() - slots_[id].info.launched_s;
  }
  return seconds;
}

double ReplicaPool::cost_usd() const {
  const MarketSpec& m = spec_.market;
  return replica_seconds(Market::on_demand) / 3600.0 * m.on_demand_per_hour +
         replica_seconds(Market::spot) / 3600.0 * m.spot_per_hour;
}

}  // namespace cs::serving
