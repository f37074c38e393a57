#include "sim/serving/serving_fleet.hpp"

#include <cmath>
#include <stdexcept>
#include <string>

#include "common/free_slots.hpp"

namespace cs::serving {

void validate_serving(const ServingConfig& c) {
  const auto require = [](bool ok, const char* field, const char* what) {
    if (!ok) throw std::invalid_argument(std::string(field) + ": " + what);
  };
  work::validate_arrivals(c.arrivals);
  work::validate_request(c.request);
  if (c.replica.kind == ReplicaKind::server) {
    require(c.replica.server.concurrency >= 1, "replica.concurrency", "must be >= 1");
  } else {
    validate_llm_replica(c.replica.llm);
  }
  require(c.until_s > 0 && std::isfinite(c.until_s), "run.until", "must be a finite time > 0");
  require(c.stats_start_s >= 0 && c.stats_start_s < c.until_s, "run.warmup",
          "must be in [0, until)");
  require(c.timeseries_interval_s >= 0, "run.timeseries_interval", "must be >= 0");
  require(c.slo.percentile > 0 && c.slo.percentile <= 1, "slo.percentile", "must be in (0, 1]");
  require(c.slo.latency_s > 0 && c.slo.ttft_s > 0 && c.slo.tpot_s > 0, "slo",
          "latency, ttft and tpot bounds must be > 0");
  if (c.disaggregated.enabled) {
    require(c.replica.kind == ReplicaKind::llm, "disaggregated", "needs an LLM replica");
    validate_llm_replica(c.disaggregated.prefill_replica);
  }
}

namespace {
PoolSpec named(PoolSpec spec, const char* name) {
  spec.name = name;
  return spec;
}
}  // namespace

ServingFleet::ServingFleet(engine::Simulator& sim, const ServingConfig& config, KvTransfer* kv_transfer)
    : sim_(sim),
      config_(config),
      stats_(config.slo, config.sketch, config.stats_start_s, config.replica.kind == ReplicaKind::llm),
      prefill_sink_(*this),
      source_(sim, config.arrivals, config.request,
              config.replica.kind == ReplicaKind::llm ? sources::DemandKind::tokens : sources::DemandKind::service_time) {
  validate_serving(config_);
  const DisaggregationSpec& d = config_.disaggregated;
  if (d.enabled) {
    pool_ = std::make_unique<ReplicaPool>(sim_, named(d.prefill.pool, "serving/prefill"),
                                          factory_for(&d.prefill_replica, LlmRole::prefill),
                                          prefill_sink_);
    decode_pool_ = std::make_unique<ReplicaPool>(sim_, named(d.decode.pool, "serving/decode"),
                                                 factory_for(&config_.replica.llm, LlmRole::decode),
                                                 static_cast<RequestSink&>(*this));
    scaling_ = std::make_unique<ScalingLoop>(sim_, *pool_, make_autoscaler(d.prefill.autoscaler),
                                             d.prefill.autoscaler.metric);
    decode_scaling_ = std::make_unique<ScalingLoop>(
        sim_, *decode_pool_, make_autoscaler(d.decode.autoscaler), d.decode.autoscaler.metric);
    if (kv_transfer) {
      kv_ = kv_transfer;
    } else {
      own_kv_ = std::make_unique<LinkKvTransfer>(sim_, d.link);
      kv_ = own_kv_.get();
    }
  } else {
    const LlmReplicaSpec* llm =
        config_.replica.kind == ReplicaKind::llm ? &config_.replica.llm : nullptr;
    pool_ = std::make_unique<ReplicaPool>(sim_, named(config_.fleet.pool, "serving"),
                                          factory_for(llm, LlmRole::unified),
                                          static_cast<RequestSink&>(*this));
    scaling_ = std::make_unique<ScalingLoop>(sim_, *pool_, make_autoscaler(config_.fleet.autoscaler),
                                             config_.fleet.autoscaler.metric);
  }
}

ServingFleet::~ServingFleet() {
  // The pools, loops and link cancel their own events; these are the fleet's.
  if (arrival_event_.valid()) sim_.cancel(arrival_event_);
  if (sample_event_.valid()) sim_.cancel(sample_event_);
}

ReplicaFactory ServingFleet::factory_for(const LlmReplicaSpec* llm, LlmRole role) {
  engine::Simulator& sim = sim_;
  if (!llm) {
    const ServerSpec server = config_.replica.server;
    return [&sim, server](ReplicaListener& listener, uint32_t id) -> std::unique_ptr<Replica> {
      return std::make_unique<ServerReplica>(sim, listener, id, server);
    };
  }
  const LlmReplicaSpec spec = *llm;
  LlmReplicaStats* totals = &llm_totals_;
  return [&sim, spec, role, totals](ReplicaListener& listener, uint32_t id) -> std::unique_ptr<Replica> {
    return std::make_unique<LlmReplica>(sim, listener, id, spec, role, totals);
  };
}

void ServingFleet::start() {
  last_sample_s_ = sim_.now();
  if (config_.disaggregated.enabled) {
    pool_->start(initial_replicas(config_.disaggregated.prefill.autoscaler));
    decode_pool_->start(initial_replicas(config_.disaggregated.decode.autoscaler));
    decode_scaling_->start();
  } else {
    pool_->start(initial_replicas(config_.fleet.autoscaler));
  }
  // A serverless pool scales itself by requests (serverless_scaling.hpp): no autoscaler runs.
  if (!pool_->serverless()) scaling_->start();
  next_arrival_ = source_.next();
  if (next_arrival_ && next_arrival_->time_s <= config_.until_s) {
    arrival_event_ = sim_.schedule_at(next_arrival_->time_s, *this, 0);
  }
  if (config_.timeseries_interval_s > 0) {
    sample_event_ = sim_.schedule_in(config_.timeseries_interval_s, *this, 1);
  }
}

void ServingFleet::on_event(uint64_t tag) {
  if (tag == 0) {
    arrive();
    return;
  }
  sample_event_ = {};
  sample_timeseries();
  if (sim_.now() + config_.timeseries_interval_s <= config_.until_s) {
    sample_event_ = sim_.schedule_in(config_.timeseries_interval_s, *this, 1);
  }
}

void ServingFleet::arrive() {
  const sources::Arrival& a = *next_arrival_;
  Request r;
  r.id = next_id_++;
  r.arrival_s = a.time_s;
  r.service_s = a.service_s;
  r.prompt_tokens = a.prompt_tokens;
  r.output_tokens = a.output_tokens;
  r.prefix_id = a.prefix_id;
  r.prefix_tokens = a.prefix_tokens;
  stats_.on_arrival(r);
  if (++in_flight_ > config_.max_in_flight) throw InFlightLimitError(in_flight_, sim_.now());
  pool_->route(r);
  arrival_event_ = {};
  next_arrival_ = source_.next();
  if (next_arrival_ && next_arrival_->time_s <= config_.until_s) {
    arrival_event_ = sim_.schedule_at(next_arrival_->time_s, *this, 0);
  }
}

// ---- sinks ----

void ServingFleet::on_complete(const Request& request, uint32_t) {
  left_system();
  stats_.on_complete(request, sim_.now());
}

void ServingFleet::on_dropped(const Request& request, DropReason reason) {
  left_system();
  stats_.on_dropped(request, reason);
}

void ServingFleet::on_first_token(const Request& request) { stats_.on_first_token(request); }

void ServingFleet::PrefillSink::on_first_token(const Request& request) { fleet_.stats_.on_first_token(request); }

void ServingFleet::PrefillSink::on_complete(const Request& request, uint32_t replica) {
  ServingFleet& f = fleet_;
  if (request.output_tokens <= 1) {  // the prefill produced every token
    f.left_system();
    f.stats_.on_complete(request, f.sim_.now());
    return;
  }
  const uint32_t slot = take_slot(f.in_transit_, f.free_transit_);
  InTransit& moving = f.in_transit_[slot];
  moving.request = request;
  moving.request.prefilled = true;
  // The decode replica is chosen now (as Splitwise and DistServe pick the decode instance when
  // the prefill ends), so the KV cache goes to its GPUs.
  moving.decode_replica = f.decode_pool_->pick();
  const uint32_t to = moving.decode_replica == ReplicaPool::kNoReplica
                          ? KvTransfer::kNoReplica
                          : f.decode_pool_->info(moving.decode_replica).slot;
  const double bytes = request.prompt_tokens * f.config_.replica.llm.timing.model.kv_bytes_per_token();
  f.kv_->send(f.pool_->info(replica).slot, to, bytes, f, slot);
}

void ServingFleet::PrefillSink::on_dropped(const Request& request, DropReason reason) {
  fleet_.left_system();
  fleet_.stats_.on_dropped(request, reason);
}

void ServingFleet::on_kv_delivered(uint64_t tag) {
  const auto slot = static_cast<uint32_t>(tag);
  const InTransit moving = in_transit_[slot];
  free_transit_.push_back(slot);
  if (moving.decode_replica == ReplicaPool::kNoReplica) decode_pool_->route(moving.request);
  else decode_pool_->route_to(moving.decode_replica, moving.request);
}

// ---- time series ----

void ServingFleet::sample_pool(const char* prefix, const ReplicaPool& pool, const ScalingLoop& loop) {
  const double now = sim_.now();
  engine::Recorder& rec = sim_.recorder();
  const std::string p = prefix;
  int queued = static_cast<int>(pool.balancer_queue());
  for (const Replica* r : pool.ready_replicas()) queued += r->queued();
  rec.sample(p + "replicas_ready", now, pool.ready_count());
  rec.sample(p + "replicas_starting", now, pool.starting_count());
  rec.sample(p + "replicas_waiting", now, pool.waiting_count());
  rec.sample(p + "replicas_draining", now, pool.draining_count());
  rec.sample(p + "replicas_desired", now, pool.desired());
  rec.sample(p + "queue_length", now, queued);
  // What the autoscaler sees: the metric per ready replica (the unit of its target), and the
  // fleet's total it comes from (the balancer's queue included for concurrency and queue_length).
  const ScalingInput& seen = loop.last_input();
  rec.sample(p + "scaling_metric", now, seen.ready_replicas > 0 ? seen.fleet_total / seen.ready_replicas : 0.0);
  rec.sample(p + "scaling_metric_total", now, seen.fleet_total);
}

void ServingFleet::sample_timeseries() {
  const double now = sim_.now();
  engine::Recorder& rec = sim_.recorder();
  const double interval = now - last_sample_s_;
  last_sample_s_ = now;
  rec.sample("serving.arrival_rate", now,
             interval > 0 ? static_cast<double>(stats_.window_arrivals()) / interval : 0.0);
  if (decode_pool_) {
    sample_pool("serving.prefill.", *pool_, *scaling_);
    sample_pool("serving.decode.", *decode_pool_, *decode_scaling_);
  } else {
    sample_pool("serving.", *pool_, *scaling_);
  }
  rec.sample("serving.latency_p50_s", now, stats_.window_latency_quantile(0.50));
  rec.sample("serving.latency_p95_s", now, stats_.window_latency_quantile(0.95));
  rec.sample("serving.latency_p99_s", now, stats_.window_latency_quantile(0.99));
  if (config_.replica.kind == ReplicaKind::llm) {
    rec.sample("serving.ttft_p50_s", now, stats_.window_ttft_quantile(0.50));
    rec.sample("serving.ttft_p99_s", now, stats_.window_ttft_quantile(0.99));
  }
  // The cost so far: the fleet's, and each pool's apart when disaggregated.
  if (decode_pool_) {
    rec.sample("serving.prefill.cost_usd", now, pool_->cost_usd());
    rec.sample("serving.decode.cost_usd", now, decode_pool_->cost_usd());
  }
  rec.sample("serving.cost_usd", now, pool_->cost_usd() + (decode_pool_ ? decode_pool_->cost_usd() : 0.0));
  stats_.reset_window();
}

// ---- result ----

PoolSummary ServingFleet::summarize(const ReplicaPool& pool) const {
  const double now = sim_.now();
  PoolSummary s;
  s.replicas_mean = pool.billed_over_time().mean(now);
  s.replicas_max = pool.billed_over_time().max();
  s.ready_mean = pool.ready_over_time().mean(now);
  for (const fleet::Market m : fleet::kAllMarkets) {
    s.replica_hours[m] = pool.replica_seconds(m) / 3600.0;
    s.cost_usd_by_market[m] = pool.cost_usd(m);
    const fleet::PoolStats& stats = pool.instances(m).stats();
    s.failures += static_cast<uint64_t>(stats.failures);
    s.fallbacks += static_cast<uint64_t>(stats.fallbacks);
  }
  s.money = pool.money();
  s.cost_usd = s.money.cost_usd;  // the ledger's, and an owned fabric's share
  s.reclaims = pool.reclaims();
  s.reclaim_exposure_hours = pool.instances(fleet::Market::spot).reclaim_exposure_s() / 3600.0;
  return s;
}

ServingResult ServingFleet::result() const {
  ServingResult out;
  stats_.fill(out, sim_.now());
  out.pool = summarize(*pool_);
  out.replicas_mean = out.pool.replicas_mean;
  out.replicas_max = out.pool.replicas_max;
  out.cost_usd = out.pool.cost_usd;
  out.money = out.pool.money;
  if (decode_pool_) {
    out.decode_pool = summarize(*decode_pool_);
    // Each pool's peak may fall at another time: their sum bounds the fleet's peak from above.
    out.replicas_mean += out.decode_pool.replicas_mean;
    out.replicas_max += out.decode_pool.replicas_max;
    out.cost_usd += out.decode_pool.cost_usd;
    out.money += out.decode_pool.money;
    out.kv_bytes_transferred = kv_->bytes_sent();
  }
  if (config_.replica.kind == ReplicaKind::llm) {
    LlmReplicaStats totals = llm_totals_;
    for (const ReplicaPool* pool : {pool_.get(), decode_pool_.get()}) {
      if (!pool) continue;
      for (const uint32_t id : pool->live()) {
        if (const auto* llm = dynamic_cast<const LlmReplica*>(pool->info(id).replica)) {
          totals += llm->stats();
        }
      }
    }
    out.preemptions = totals.preemptions;
    out.tokens_out = static_cast<double>(totals.tokens_out);
  }
  out.sim_time_s = sim_.now();
  out.events = sim_.events_processed();
  return out;
}

ServingResult run_serving(const ServingConfig& config, uint64_t seed) {
  engine::Simulator sim(seed);
  ServingFleet fleet(sim, config);
  fleet.start();
  sim.run(config.until_s);
  return fleet.result();
}

}  // namespace cs::serving
