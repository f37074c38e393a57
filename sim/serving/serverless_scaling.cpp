#include "sim/serving/serverless_scaling.hpp"

#include "sim/serving/replica_pool.hpp"

namespace cs::serving {

ServerlessScaling::ServerlessScaling(engine::Simulator& sim, ReplicaPool& pool, const ServerlessSpec& spec)
    : sim_(sim), pool_(pool), spec_(spec) {}

ServerlessScaling::~ServerlessScaling() {
  for (engine::EventId& e : idle_timer_)
    if (e.valid()) sim_.cancel(e);
}

void ServerlessScaling::on_queued() {
  // Requests the replicas already starting will take, and the live count the limit caps.
  const auto waiting = static_cast<int64_t>(pool_.balancer_queue());
  while (int64_t{pool_.starting_count() + pool_.waiting_count()} * spec_.requests_per_replica < waiting &&
         pool_.starting_count() + pool_.waiting_count() + pool_.ready_count() < spec_.max_replicas) {
    pool_.set_desired(pool_.starting_count() + pool_.waiting_count() + pool_.ready_count() + 1);
    ++scale_ups_;
  }
}

void ServerlessScaling::on_idle(uint32_t replica) {
  if (idle_timer_.size() <= replica) idle_timer_.resize(replica + std::size_t{1});
  engine::EventId& timer = idle_timer_[replica];
  if (timer.valid()) sim_.cancel(timer);
  timer = sim_.schedule_in(spec_.idle_timeout_s, *this, replica);
}

void ServerlessScaling::on_busy(uint32_t replica) {
  if (replica < idle_timer_.size() && idle_timer_[replica].valid()) {
    sim_.cancel(idle_timer_[replica]);
    idle_timer_[replica] = {};
  }
}

void ServerlessScaling::on_event(uint64_t tag) {
  const auto id = static_cast<uint32_t>(tag);
  idle_timer_[id] = {};
  const ReplicaInfo& info = pool_.info(id);
  // A timer outlives its reason only if the replica left the ready state meanwhile.
  if (info.state != ReplicaState::ready || info.replica->outstanding() > 0) return;
  if (pool_.ready_count() + pool_.starting_count() + pool_.waiting_count() <= spec_.min_replicas) return;
  pool_.retire(id);
  ++idle_stops_;
}

}  // namespace cs::serving
