#include "sim/fleet/instance_pool.hpp"
#include "common/free_slots.hpp"

#include <cmath>
#include <stdexcept>
#include <utility>

namespace cs::fleet {

void InstancePoolConfig::validate() const {
  if (!(usd_per_hour >= 0.0) || !std::isfinite(usd_per_hour))
    throw std::invalid_argument(name + ".usd_per_hour: expected a finite price >= 0");
  failures.validate((name + ".failures").c_str());
  if (market == Market::spot) reclaims.validate((name + ".reclaims").c_str());
  provisioning.validate(name + ".provisioning");
}

void InstancePool::IndexedSet::insert(std::vector<Slot>& slots, int id, std::size_t Slot::*pos) {
  slots[static_cast<std::size_t>(id)].*pos = ids.size();
  ids.push_back(id);
}

void InstancePool::IndexedSet::erase(std::vector<Slot>& slots, int id, std::size_t Slot::*pos) {
  const std::size_t at = slots[static_cast<std::size_t>(id)].*pos;
  const int last = ids.back();
  ids[at] = last;
  slots[static_cast<std::size_t>(last)].*pos = at;
  ids.pop_back();
}

InstancePool::InstancePool(engine::Simulator& sim, InstancePoolConfig config, CostLedger& ledger,
                           InstancePoolListener* listener)
    : sim_(sim),
      config_(std::move(config)),
      ledger_(ledger),
      listener_(listener),
      account_(0),
      failure_rng_(sim.random(config_.name + "/failures")),
      reclaim_rng_(sim.random(config_.name + "/reclaims")),
      provisioning_rng_(sim.random(config_.name + "/provisioning")),
      per_node_failures_(config_.failures.weibull_shape != 1.0) {
  config_.validate();
  account_ = ledger_.open(config_.name, config_.market, config_.usd_per_hour);
  for (const FailureCause& c : config_.failures.causes) cause_weights_.push_back(c.share);
  exposure_since_ = sim_.now();
  // Processes that do not depend on how many instances are held start with the pool.
  schedule_correlated_reclaim();
  if (!config_.failures.trace.empty())
    failure_trace_event_ = schedule(config_.failures.trace[0].time_s, Kind::failure_trace, 0);
  if (config_.market == Market::spot && !config_.reclaims.trace.empty())
    reclaim_trace_event_ = schedule(config_.reclaims.trace[0].time_s, Kind::reclaim_trace, 0);
}

engine::EventId InstancePool::schedule(engine::Time t, Kind k, uint64_t payload) {
  return sim_.schedule_at(std::max(t, sim_.now()), *this, tag(k, payload));
}

double InstancePool::reclaim_exposure_s() const {
  return exposure_closed_s_ + static_cast<double>(exposed_.size()) * (sim_.now() - exposure_since_);
}

// Closes the exposure interval before the exposed set changes.
void InstancePool::set_exposed_accounting() {
  exposure_closed_s_ += static_cast<double>(exposed_.size()) * (sim_.now() - exposure_since_);
  exposure_since_ = sim_.now();
}

void InstancePool::book_count() { ledger_.set_count(account_, sim_.now(), held()); }

int InstancePool::new_slot() {
  const std::size_t before = slots_.size();
  const int slot = take_slot(slots_, free_slots_);
  // One more slot may mean one more failure domain.
  if (slots_.size() != before) schedule_domain_failure();
  return slot;
}

std::vector<int> InstancePool::start_held(int n) {
  set_exposed_accounting();
  std::vector<int> ids;
  for (int i = 0; i < n; ++i) {
    ids.push_back(new_slot());
    make_ready(ids.back());
  }
  book_count();
  redraw_failures();
  redraw_reclaims();
  return ids;
}

std::vector<int> InstancePool::request(int n) { return request(n, config_.provisioning); }

std::vector<int> InstancePool::request(int n, const sources::Distribution& delay) {
  std::vector<int> ids;
  for (int i = 0; i < n; ++i) {
    ids.push_back(new_slot());
    ask_for(ids.back(), delay);
  }
  return ids;
}

void InstancePool::reclaim(std::span<const int> ids) {
  if (config_.market != Market::spot || released_) return;
  std::vector<int> held;
  for (const int id : ids)
    if (state(id) == SlotState::held) held.push_back(id);
  const bool several = held.size() > 1;
  notice(std::move(held), several);
}

InstancePool::InstanceState InstancePool::state(int id) const {
  if (id < 0 || static_cast<std::size_t>(id) >= slots_.size()) return InstanceState::empty;
  return slots_[static_cast<std::size_t>(id)].state;
}

void InstancePool::release(std::span<const int> ids) {
  set_exposed_accounting();
  for (const int id : ids) {
    const SlotState st = state(id);
    if (st == SlotState::empty) continue;
    Slot& s = slots_[static_cast<std::size_t>(id)];
    if (st == SlotState::requested) {
      --pending_;
    } else {
      if (st == SlotState::held) exposed_.erase(slots_, id, &Slot::exposed_pos);
      held_.erase(slots_, id, &Slot::held_pos);
    }
    sim_.cancel(std::exchange(s.ready, engine::EventId{}));
    sim_.cancel(std::exchange(s.fallback, engine::EventId{}));
    sim_.cancel(std::exchange(s.failure, engine::EventId{}));
    s.state = SlotState::empty;  // a pending notice's take skips it
    free_slots_.push_back(id);
  }
  book_count();
  redraw_failures();
  redraw_reclaims();
}

void InstancePool::ask_for(int slot, const sources::Distribution& delay) {
  Slot& s = slots_[static_cast<std::size_t>(slot)];
  s.state = SlotState::requested;
  ++pending_;
  s.ready = schedule(sim_.now() + sources::sample(delay, provisioning_rng_), Kind::ready,
                     static_cast<uint64_t>(slot));
  if (fallback_.pool != nullptr && std::isfinite(fallback_.after_s))
    s.fallback = schedule(sim_.now() + fallback_.after_s, Kind::fallback,
                          static_cast<uint64_t>(slot));
}

void InstancePool::make_ready(int slot) {
  Slot& s = slots_[static_cast<std::size_t>(slot)];
  s.state = SlotState::held;
  held_.insert(slots_, slot, &Slot::held_pos);
  exposed_.insert(slots_, slot, &Slot::exposed_pos);
  if (per_node_failures_) schedule_node_failure(slot);
}

void InstancePool::schedule_node_failure(int slot) {
  const FailureConfig& f = config_.failures;
  if (!std::isfinite(f.node_mtbf_s)) return;
  const double life = sources::sample(sources::Distribution::weibull(f.node_mtbf_s, f.weibull_shape), failure_rng_);
  slots_[static_cast<std::size_t>(slot)].failure =
      schedule(sim_.now() + life, Kind::node_failure, static_cast<uint64_t>(slot));
}

void InstancePool::redraw_failures() {
  if (per_node_failures_) return;
  sim_.cancel(failure_event_);
  failure_event_ = {};
  const double mtbf = config_.failures.node_mtbf_s;
  if (released_ || held_.size() == 0 || !std::isfinite(mtbf)) return;
  // n independent exponential lifetimes: the first ends after Exp(mtbf / n).
  failure_event_ = schedule(
      sim_.now() + failure_rng_.exponential(mtbf / static_cast<double>(held_.size())),
      Kind::failure);
}

void InstancePool::redraw_reclaims() {
  if (config_.market != Market::spot || !config_.reclaims.trace.empty()) return;
  sim_.cancel(reclaim_event_);
  reclaim_event_ = {};
  if (released_ || exposed_.size() == 0) return;
  const engine::Time t = config_.reclaims.rate.next_event(
      sim_.now(), static_cast<double>(exposed_.size()), reclaim_rng_.exponential(1.0));
  if (std::isfinite(t)) reclaim_event_ = schedule(t, Kind::reclaim);
}

void InstancePool::schedule_domain_failure() {
  const CorrelatedFailures& c = config_.failures.correlated;
  if (released_ || c.domain_nodes <= 0 || !std::isfinite(c.domain_mtbf_s)) return;
  const std::size_t k = static_cast<std::size_t>(c.domain_nodes);
  const std::size_t domains = (slots_.size() + k - 1) / k;
  if (domains == domain_count_ && domain_event_.valid()) return;
  sim_.cancel(domain_event_);
  domain_count_ = domains;
  domain_event_ = {};
  if (domains == 0) return;
  domain_event_ = schedule(
      sim_.now() + failure_rng_.exponential(c.domain_mtbf_s / static_cast<double>(domains)),
      Kind::domain_failure);
}

void InstancePool::schedule_correlated_reclaim() {
  const CorrelatedReclaims& c = config_.reclaims.correlated;
  if (released_ || config_.market != Market::spot || !config_.reclaims.trace.empty() ||
      !(c.events_per_s > 0.0) || !(c.pool_share > 0.0))
    return;
  correlated_reclaim_event_ = schedule(
      sim_.now() + reclaim_rng_.exponential(1.0 / c.events_per_s), Kind::correlated_reclaim);
}

std::vector<int> InstancePool::draw(const IndexedSet& from, std::size_t k,
                                    engine::RandomStream& rng) const {
  k = std::min(k, from.size());
  if (k == 1) return {from.ids[rng.uniform_int(from.size())]};
  // Partial Fisher-Yates on a copy: the first k entries are a uniform k-subset.
  std::vector<int> ids = from.ids;
  for (std::size_t i = 0; i < k; ++i)
    std::swap(ids[i], ids[i + rng.uniform_int(ids.size() - i)]);
  ids.resize(k);
  return ids;
}

int InstancePool::draw_cause() {
  if (cause_weights_.empty()) return -1;
  return static_cast<int>(failure_rng_.discrete(cause_weights_.data(), cause_weights_.size()));
}

void InstancePool::take(std::span<const int> ids, const sources::Distribution& replacement) {
  set_exposed_accounting();
  for (const int id : ids) {
    Slot& s = slots_[static_cast<std::size_t>(id)];
    if (s.state == SlotState::held) exposed_.erase(slots_, id, &Slot::exposed_pos);
    held_.erase(slots_, id, &Slot::held_pos);
    sim_.cancel(s.failure);
    s.failure = {};
    s.state = SlotState::empty;
  }
  book_count();
  for (const int id : ids) {
    if (config_.replace_lost) {
      ask_for(id, replacement);
    } else {
      free_slots_.push_back(id);
    }
  }
}

void InstancePool::fail(std::vector<int> ids, const Interruption& event) {
  stats_.failures += static_cast<int64_t>(ids.size());
  ++stats_.failure_events;
  if (event.correlated) ++stats_.correlated_failure_events;
  if (event.instances_lost) {
    take(ids, config_.failures.replacement);
    redraw_reclaims();
  } else {
    stats_.restart_only_failures += static_cast<int64_t>(ids.size());
    if (per_node_failures_)
      for (const int id : ids) schedule_node_failure(id);  // the node starts a new lifetime
  }
  redraw_failures();
  if (listener_) listener_->on_interruption(*this, ids, event);
}

void InstancePool::notice(std::vector<int> ids, bool correlated) {
  if (ids.empty()) return;
  set_exposed_accounting();
  const std::size_t batch = take_slot(batches_, free_batches_);
  for (const int id : ids) {
    exposed_.erase(slots_, id, &Slot::exposed_pos);
    Slot& s = slots_[static_cast<std::size_t>(id)];
    s.state = SlotState::noticed;
    s.batch = batch;
  }
  stats_.reclaim_notices += static_cast<int64_t>(ids.size());
  const double warning = config_.reclaims.warning_s;
  batches_[batch] = Batch{ids, correlated, schedule(sim_.now() + warning, Kind::reclaim_take, batch)};
  redraw_reclaims();
  if (listener_) listener_->on_reclaim_notice(*this, ids, warning);
}

void InstancePool::take_batch(std::size_t batch) {
  std::vector<int> ids;
  // Some may have failed during the notice, and their replacement may be under a notice of
  // its own: take only the slots still noticed by this batch.
  for (const int id : batches_[batch].ids) {
    const Slot& s = slots_[static_cast<std::size_t>(id)];
    if (s.state == SlotState::noticed && s.batch == batch) ids.push_back(id);
  }
  const bool correlated = batches_[batch].correlated;
  batches_[batch] = Batch{};
  free_batches_.push_back(batch);
  if (ids.empty()) return;
  stats_.reclaims += static_cast<int64_t>(ids.size());
  ++stats_.reclaim_events;
  take(ids, config_.reclaims.capacity_return);
  redraw_failures();
  if (listener_)
    listener_->on_interruption(*this, ids, Interruption{LossKind::spot_reclaim, true, correlated});
}

void InstancePool::fall_back(int slot) {
  Slot& s = slots_[static_cast<std::size_t>(slot)];
  sim_.cancel(s.ready);
  s.ready = {};
  s.fallback = {};
  s.state = SlotState::empty;
  --pending_;
  free_slots_.push_back(slot);
  ++stats_.fallbacks;
  const int moved = fallback_.pool->request(1).front();
  if (listener_) listener_->on_fallback(*this, slot, *fallback_.pool, moved);
}

void InstancePool::on_event(uint64_t t) {
  if (released_) return;
  const auto kind = static_cast<Kind>(t & 0xff);
  const uint64_t payload = t >> 8;
  const FailureConfig& f = config_.failures;
  switch (kind) {
    case Kind::failure: {
      failure_event_ = {};
      const int cause = draw_cause();
      const bool lost = cause < 0 || f.causes[static_cast<std::size_t>(cause)].replaces_node;
      fail(draw(held_, 1, failure_rng_), Interruption{LossKind::hardware_failure, lost, false, cause});
      break;
    }
    case Kind::node_failure: {
      const int slot = static_cast<int>(payload);
      slots_[payload].failure = {};
      const int cause = draw_cause();
      const bool lost = cause < 0 || f.causes[static_cast<std::size_t>(cause)].replaces_node;
      fail({slot}, Interruption{LossKind::hardware_failure, lost, false, cause});
      break;
    }
    case Kind::domain_failure: {
      domain_event_ = {};
      const std::size_t k = static_cast<std::size_t>(f.correlated.domain_nodes);
      const std::size_t d = failure_rng_.uniform_int(domain_count_);
      std::vector<int> ids;
      for (std::size_t i = d * k; i < std::min((d + 1) * k, slots_.size()); ++i) {
        const SlotState st = slots_[i].state;
        if (st == SlotState::held || st == SlotState::noticed) ids.push_back(static_cast<int>(i));
      }
      schedule_domain_failure();
      if (!ids.empty()) fail(std::move(ids), Interruption{LossKind::hardware_failure, true, true});
      break;
    }
    case Kind::failure_trace: {
      const TraceEvent& e = f.trace[payload];
      failure_trace_event_ = {};
      if (payload + 1 < f.trace.size())
        failure_trace_event_ = schedule(f.trace[payload + 1].time_s, Kind::failure_trace, payload + 1);
      if (held_.size() > 0) {
        std::vector<int> ids = draw(held_, static_cast<std::size_t>(e.instances), failure_rng_);
        const bool correlated = ids.size() > 1;
        fail(std::move(ids), Interruption{LossKind::hardware_failure, true, correlated});
      }
      break;
    }
    case Kind::reclaim:
      reclaim_event_ = {};
      notice(draw(exposed_, 1, reclaim_rng_), false);
      break;
    case Kind::correlated_reclaim: {
      correlated_reclaim_event_ = {};
      const double share = config_.reclaims.correlated.pool_share;
      const auto k = static_cast<std::size_t>(std::ceil(share * static_cast<double>(exposed_.size())));
      schedule_correlated_reclaim();
      if (exposed_.size() > 0) notice(draw(exposed_, std::max<std::size_t>(k, 1), reclaim_rng_), true);
      break;
    }
    case Kind::reclaim_trace: {
      const EventTrace& trace = config_.reclaims.trace;
      reclaim_trace_event_ = {};
      if (payload + 1 < trace.size())
        reclaim_trace_event_ = schedule(trace[payload + 1].time_s, Kind::reclaim_trace, payload + 1);
      if (exposed_.size() > 0) {
        std::vector<int> ids = draw(exposed_, static_cast<std::size_t>(trace[payload].instances), reclaim_rng_);
        const bool correlated = ids.size() > 1;
        notice(std::move(ids), correlated);
      }
      break;
    }
    case Kind::reclaim_take:
      take_batch(payload);
      break;
    case Kind::ready: {
      const int slot = static_cast<int>(payload);
      Slot& s = slots_[payload];
      s.ready = {};
      sim_.cancel(s.fallback);
      s.fallback = {};
      --pending_;
      ++stats_.ready;
      set_exposed_accounting();
      make_ready(slot);
      book_count();
      redraw_failures();
      redraw_reclaims();
      const int ids[] = {slot};
      if (listener_) listener_->on_ready(*this, ids);
      break;
    }
    case Kind::fallback:
      fall_back(static_cast<int>(payload));
      break;
  }
}

InstancePool::~InstancePool() { cancel_events(); }

void InstancePool::release_all() {
  set_exposed_accounting();
  released_ = true;
  cancel_events();
  for (Slot& s : slots_) s = Slot{};
  held_.ids.clear();
  exposed_.ids.clear();
  pending_ = 0;
  book_count();
}

void InstancePool::cancel_events() {
  for (Slot& s : slots_) {
    sim_.cancel(std::exchange(s.failure, engine::EventId{}));
    sim_.cancel(std::exchange(s.ready, engine::EventId{}));
    sim_.cancel(std::exchange(s.fallback, engine::EventId{}));
  }
  for (engine::EventId* id : {&failure_event_, &domain_event_, &reclaim_event_,
                              &correlated_reclaim_event_, &failure_trace_event_,
                              &reclaim_trace_event_})
    sim_.cancel(std::exchange(*id, engine::EventId{}));
  for (Batch& b : batches_) sim_.cancel(std::exchange(b.take, engine::EventId{}));
}

}  // namespace cs::fleet
