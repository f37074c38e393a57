#include "sim/serving/replica.hpp"

namespace cs::serving {

inline void Replica::advance_integrals() {
  const double now = sim_.now();
  const double dt = now - last_change_s_;
  if (dt > 0) {
    integrals_.busy += dt * in_service_ * per_slot_;
    integrals_.in_service += dt * in_service_;
    integrals_.queued += dt * queued_;
    integrals_.kv_usage += dt * kv_share_;
    last_change_s_ = now;
  }
}

void Replica::change_load(int in_service, int queued, double kv_share) {
  advance_integrals();
  in_service_ = in_service;
  queued_ = queued;
  kv_share_ = kv_share;
}

LoadIntegrals Replica::integrals() const {
  LoadIntegrals out = integrals_;
  const double dt = sim_.now() - last_change_s_;
  out.busy += dt * in_service_ * per_slot_;
  out.in_service += dt * in_service_;
  out.queued += dt * queued_;
  out.kv_usage += dt * kv_share_;
  out.time_s = sim_.now();
  out.arrivals = arrivals_;
  out.completions = completions_;
  return out;
}

void Replica::complete(const Request& request) {
  ++completions_;
  listener_.on_complete(*this, request);
}

void Replica::begin_drain() {
  draining_ = true;
  maybe_drained();
}

void Replica::maybe_drained() {
  if (draining_ && !drained_reported_ && in_service_ == 0 && queued_ == 0) {
    drained_reported_ = true;
    listener_.on_drained(*this);
  }
}

}  // namespace cs::serving
