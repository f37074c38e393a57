#include "sim/serving/replica_pool.hpp"

#include <algorithm>
#include <cmath>
#include <functional>
#include <stdexcept>
#include <string>

namespace cs::serving {

std::string_view to_string(DropReason reason) { return name_of(kDropReasonNames, reason); }

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
  validate_market(spec_.market);
  if (!(spec_.queue_timeout_s > 0)) throw std::invalid_argument("queue_timeout: must be > 0");
  const MarketSpec& m = spec_.market;
  for (const Market market : fleet::kAllMarkets) {
    fleet::InstancePoolConfig c;
    c.name = spec_.name + "/" + std::string(fleet::to_string(market));
    c.market = market;
    c.usd_per_hour = m.price_per_hour(market);
    c.failures = m.failures;
    c.reclaims = m.reclaims;
    c.provisioning = sources::Distribution::constant(0);  // the cold start covers the boot
    c.replace_lost = false;  // the pool decides what replaces a replica
    instances_[fleet::index(market)] = std::make_unique<fleet::InstancePool>(
        sim_, std::move(c), ledger_, static_cast<fleet::InstancePoolListener*>(this));
    ledger_.set_committed(instances_[fleet::index(market)]->account(), sim.now(), m.committed()[market]);
  }
  if (std::isfinite(m.fallback_after_s))
    instances_[fleet::index(Market::spot)]->set_fallback(
        {instances_[fleet::index(Market::on_demand)].get(), m.fallback_after_s});
  if (m.serverless) serverless_ = std::make_unique<ServerlessScaling>(sim_, *this, *m.serverless);
}

ReplicaPool::~ReplicaPool() {
  for (Slot& s : slots_) {
    if (s.cold_start.valid()) sim_.cancel(s.cold_start);
  }
}

// ---- lifecycle ----

void ReplicaPool::start(int warm) {
  desired_ = std::max(0, warm);
  for (int i = 0; i < desired_; ++i) launch(/*warm=*/true);
}

fleet::PerMarket<int> ReplicaPool::active_by_market() const {
  fleet::PerMarket<int> n;
  for (const uint32_t id : live_) {
    const ReplicaInfo& info = slots_[id].info;
    if (info.state != ReplicaState::draining) ++n[info.market];
  }
  return n;
}

uint32_t& ReplicaPool::holder(Market m, int instance) {
  auto& v = holders_[fleet::index(m)];
  if (v.size() <= static_cast<std::size_t>(instance)) v.resize(static_cast<std::size_t>(instance) + 1, kNone);
  return v[static_cast<std::size_t>(instance)];
}

uint32_t& ReplicaPool::waiter(Market m, int instance) {
  auto& v = waiters_[fleet::index(m)];
  if (v.size() <= static_cast<std::size_t>(instance)) v.resize(static_cast<std::size_t>(instance) + 1, kNone);
  return v[static_cast<std::size_t>(instance)];
}

uint32_t ReplicaPool::new_replica(Market market, int instance, ReplicaState state) {
  const auto id = static_cast<uint32_t>(slots_.size());
  slots_.emplace_back();
  Slot& s = slots_.back();
  s.info.id = id;
  s.info.market = market;
  s.info.launched_s = sim_.now();
  s.info.state = ReplicaState::stopped;  // set_state counts it in
  s.instance = instance;
  if (free_placement_.empty()) {
    s.info.slot = next_placement_++;
  } else {
    std::pop_heap(free_placement_.begin(), free_placement_.end(), std::greater<>());
    s.info.slot = free_placement_.back();
    free_placement_.pop_back();
  }
  live_.push_back(id);
  set_state(s, state);
  (state == ReplicaState::waiting ? waiter(market, instance) : holder(market, instance)) = id;
  return id;
}

void ReplicaPool::launch(bool warm) {
  const Market market = market_for_launch(spec_.market, active_by_market());
  const int instance = instances_[fleet::index(market)]->start_held(1).front();
  const uint32_t id = new_replica(market, instance, ReplicaState::starting);
  if (warm) make_ready(id);
  else begin_cold_start(id);
}

void ReplicaPool::begin_cold_start(uint32_t id) {
  slots_[id].cold_start = sim_.schedule_in(draw_cold_start(spec_.cold_start, cold_start_rng_), *this, id);
}

// A successor that waits for an instance of `market` to be granted after `delay`.
void ReplicaPool::wait_for(Market market, const sources::Distribution& delay) {
  const int instance = instances_[fleet::index(market)]->request(1, delay).front();
  new_replica(market, instance, ReplicaState::waiting);
}

void ReplicaPool::set_state(Slot& s, ReplicaState state) {
  const auto count = [&](ReplicaState st) -> int& {
    switch (st) {
      case ReplicaState::waiting: return waiting_;
      case ReplicaState::starting: return starting_;
      case ReplicaState::ready: return ready_;
      default: return draining_;
    }
  };
  if (s.info.state != ReplicaState::stopped) --count(s.info.state);
  if (state != ReplicaState::stopped) ++count(state);
  s.info.state = state;
  const double now = sim_.now();
  billed_tw_.set(now, billed_count());
  ready_tw_.set(now, ready_);
}

void ReplicaPool::make_ready(uint32_t id) {
  Slot& s = slots_[id];
  s.cold_start = {};
  s.replica = factory_(*this, id);
  s.info.replica = s.replica.get();
  s.info.ready_s = sim_.now();
  set_state(s, ReplicaState::ready);
  const auto pos = std::lower_bound(ready_list_.begin(), ready_list_.end(), id,
                                    [](const Replica* r, uint32_t v) { return r->id() < v; });
  ready_list_.insert(pos, s.replica.get());
  if (spec_.balance == BalancePolicy::central_queue) push_idle(*s.replica);
  flush_queue();
  if (serverless_ && slots_[id].info.state == ReplicaState::ready && slots_[id].replica->outstanding() == 0)
    serverless_->on_idle(id);
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
  if (s.cold_start.valid()) {
    sim_.cancel(s.cold_start);
    s.cold_start = {};
  }
  if (s.info.state == ReplicaState::ready) {
    const auto pos = std::find(ready_list_.begin(), ready_list_.end(), s.replica.get());
    if (pos != ready_list_.end()) ready_list_.erase(pos);
  }
  if (s.instance >= 0) {
    // Waiting: cancel the request; otherwise give the instance back (billing stops now).
    uint32_t& owner = s.info.state == ReplicaState::waiting ? waiter(s.info.market, s.instance)
                                                            : holder(s.info.market, s.instance);
    owner = kNone;
    const int ids[] = {s.instance};
    s.instance = -1;
    instances_[fleet::index(s.info.market)]->release(ids);
  }
  s.info.stopped_s = sim_.now();
  s.info.replica = nullptr;
  free_placement_.push_back(s.info.slot);
  std::push_heap(free_placement_.begin(), free_placement_.end(), std::greater<>());
  set_state(s, ReplicaState::stopped);
  live_.erase(std::find(live_.begin(), live_.end(), id));
  if (s.replica) graveyard_.push_back(std::move(s.replica));
}

void ReplicaPool::lose(uint32_t id) {
  Slot& s = slots_[id];
  s.instance = -1;  // gone with the instance: nothing to release
  std::vector<Request> lost;
  if (s.replica && (s.info.state == ReplicaState::ready || s.info.state == ReplicaState::draining)) {
    s.replica->abort(scratch_);
    lost.swap(scratch_);
  }
  stop(id);
  reroute(lost, /*lost=*/true);
}

void ReplicaPool::retire(uint32_t id) {
  if (slots_.at(id).info.state != ReplicaState::ready) return;
  desired_ = std::max(0, desired_ - 1);
  drain(id);
}

void ReplicaPool::set_desired(int replicas) {
  desired_ = std::max(0, replicas);
  reconcile();
}

void ReplicaPool::reconcile() {
  graveyard_.clear();  // never called from inside a replica
  int active = waiting_ + starting_ + ready_;
  for (; active < desired_; ++active) launch(/*warm=*/false);
  // Not-ready replicas go first (waiting or starting), newest first.
  for (auto it = live_.rbegin(); it != live_.rend() && active > desired_;) {
    const uint32_t id = *it;
    ++it;
    const ReplicaState st = slots_[id].info.state;
    if (st == ReplicaState::waiting || st == ReplicaState::starting) {
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

uint32_t ReplicaPool::pick() {
  if (spec_.balance == BalancePolicy::central_queue) return kNoReplica;
  Replica* r = balanced_target();
  return r ? r->id() : kNoReplica;
}

bool ReplicaPool::holds_at_balancer() const {
  return spec_.max_queue != std::numeric_limits<std::size_t>::max() || std::isfinite(spec_.queue_timeout_s) ||
         spec_.market.serverless.has_value();
}

Replica* ReplicaPool::balanced_target() {
  if (!holds_at_balancer()) {
    if (ready_list_.empty()) return nullptr;
    return ready_list_[static_cast<std::size_t>(balancer_.pick(ready_list_))];
  }
  // With a queue limit or timeout the balancer's queue is where requests wait: a replica takes
  // one only into a free slot (else the limits would never see the requests queued at it).
  free_list_.clear();
  for (Replica* r : ready_list_)
    if (r->can_start_now()) free_list_.push_back(r);
  if (free_list_.empty()) return nullptr;
  return free_list_[static_cast<std::size_t>(balancer_.pick(free_list_))];
}

void ReplicaPool::route_to(uint32_t id, const Request& request) {
  if (id >= slots_.size() || slots_[id].info.state != ReplicaState::ready) {
    route(request);
    return;
  }
  ++routed_;
  dispatch(*slots_[id].replica, request);
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
  Replica* target = queue_.empty() ? balanced_target() : nullptr;  // first come, first served
  if (!target) {
    enqueue(request);
    return;
  }
  dispatch(*target, request);
}

void ReplicaPool::dispatch(Replica& replica, const Request& request) {
  if (!replica.admissible(request)) {
    sink_.on_dropped(request, DropReason::too_large);
    return;
  }
  replica.submit(request);
  if (serverless_) serverless_->on_busy(replica.id());
  if (spec_.balance == BalancePolicy::central_queue && replica.can_start_now()) push_idle(replica);
}

void ReplicaPool::enqueue(const Request& request) {
  if (queue_.size() >= spec_.max_queue) {
    sink_.on_dropped(request, DropReason::queue_full);
    return;
  }
  queue_.push_back(request);
  queue_tw_.set(sim_.now(), static_cast<double>(queue_.size()));
  if (serverless_) serverless_->on_queued();
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
    } else {
      target = balanced_target();
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
  if (spec_.balance != BalancePolicy::central_queue) {
    if (holds_at_balancer()) flush_queue();
  } else {
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
  if (serverless_ && replica.outstanding() == 0 && slots_[replica.id()].info.state == ReplicaState::ready)
    serverless_->on_idle(replica.id());
}

void ReplicaPool::on_drained(Replica& replica) {
  if (slots_[replica.id()].info.state == ReplicaState::draining) stop(replica.id());
}

// ---- spot reclaims and failures ----

bool ReplicaPool::reclaim(uint32_t id) {
  if (id >= slots_.size()) return false;
  const Slot& s = slots_[id];
  const ReplicaState st = s.info.state;
  if (s.info.market != Market::spot || s.instance < 0 || st == ReplicaState::stopped ||
      st == ReplicaState::waiting || s.info.noticed)
    return false;
  const int ids[] = {s.instance};
  instances_[fleet::index(Market::spot)]->reclaim(ids);
  return true;
}

void ReplicaPool::on_reclaim_notice(fleet::InstancePool& pool, std::span<const int> ids, double) {
  const Market m = pool.market();
  for (const int instance : ids) {
    const uint32_t id = holder(m, instance);
    if (id == kNone) continue;
    const ReplicaState state = slots_[id].info.state;
    slots_[id].info.noticed = true;
    // The successor waits for spot capacity to come back (or falls back to on demand); a
    // replica already draining (scaled in) has none. (wait_for adds a slot: no reference to
    // slots_ is held across it.)
    if (state != ReplicaState::draining) wait_for(m, spec_.market.reclaims.capacity_return);
    if (state == ReplicaState::starting) stop(id);  // it would never serve: give it back
    else if (state == ReplicaState::ready) drain(id);
  }
  reconcile();
}

void ReplicaPool::on_interruption(fleet::InstancePool& pool, std::span<const int> ids,
                                  const fleet::Interruption& event) {
  const Market m = pool.market();
  // Unbind every instance first: the pool has freed them and may hand them out again.
  std::vector<uint32_t> hit;
  for (const int instance : ids) {
    uint32_t& id = holder(m, instance);
    if (id != kNone) hit.push_back(id);
    if (event.instances_lost) id = kNone;
  }
  for (const uint32_t id : hit) {
    Slot& s = slots_[id];
    if (s.info.state == ReplicaState::stopped) continue;
    const bool replace = !s.info.noticed && s.info.state != ReplicaState::draining;
    if (event.instances_lost) {
      lose(id);
      if (event.kind == fleet::LossKind::hardware_failure && replace)
        wait_for(m, spec_.market.failures.replacement);
      continue;
    }
    // A fault that leaves the node in service: the replica restarts on the same instance.
    const int instance = s.instance;
    s.instance = -1;
    lose(id);
    holder(m, instance) = kNone;
    if (replace) begin_cold_start(new_replica(m, instance, ReplicaState::starting));
    else instances_[fleet::index(m)]->release(std::span<const int>(&instance, 1));
  }
  reconcile();
}

void ReplicaPool::on_ready(fleet::InstancePool& pool, std::span<const int> ids) {
  const Market m = pool.market();
  for (const int instance : ids) {
    uint32_t& w = waiter(m, instance);
    const uint32_t id = w;
    w = kNone;
    if (id == kNone || slots_[id].info.state != ReplicaState::waiting) {  // nobody waits for it
      instances_[fleet::index(m)]->release(std::span<const int>(&instance, 1));
      continue;
    }
    Slot& s = slots_[id];
    holder(m, instance) = id;
    s.info.launched_s = sim_.now();
    set_state(s, ReplicaState::starting);
    begin_cold_start(id);
  }
}

void ReplicaPool::on_fallback(fleet::InstancePool& from, int id, fleet::InstancePool& to, int new_id) {
  uint32_t& w = waiter(from.market(), id);
  const uint32_t replica = w;
  w = kNone;
  if (replica == kNone || slots_[replica].info.state != ReplicaState::waiting) {
    to.release(std::span<const int>(&new_id, 1));
    return;
  }
  Slot& s = slots_[replica];
  s.info.market = to.market();
  s.instance = new_id;
  waiter(to.market(), new_id) = replica;
}

std::vector<uint32_t> ReplicaPool::replicas_in(Market market) const {
  std::vector<uint32_t> out;
  for (const uint32_t id : live_) {
    if (slots_[id].info.market == market) out.push_back(id);
  }
  return out;
}

uint64_t ReplicaPool::reclaims() const {
  return static_cast<uint64_t>(instances_[fleet::index(Market::spot)]->stats().reclaim_notices);
}

// ---- events ----

void ReplicaPool::on_event(uint64_t tag) {
  graveyard_.clear();
  const auto id = static_cast<uint32_t>(tag);
  slots_[id].cold_start = {};
  if (slots_[id].info.state == ReplicaState::starting) make_ready(id);
}

// ---- billing ----

double ReplicaPool::replica_seconds(Market market) const {
  return ledger_.instance_seconds(instances_[fleet::index(market)]->account(), sim_.now());
}

double ReplicaPool::cost_usd(Market market) const {
  return ledger_.usd(instances_[fleet::index(market)]->account(), sim_.now());
}

double ReplicaPool::cost_usd() const { return ledger_.usd(sim_.now()); }

fleet::Money ReplicaPool::money() const {
  return fleet::money(ledger_, sim_.now(), spec_.market.owned_billing(), sim_.now() / 3600.0);  // the run starts at 0
}

}  // namespace cs::serving
