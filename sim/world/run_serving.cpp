#include "sim/world/run_serving.hpp"

#include <cmath>
#include <memory>
#include <numeric>
#include <stdexcept>
#include <string>

#include "sim/report/summary.hpp"
#include "sim/scenario/input_error.hpp"
#include "sim/serving/kv_transfer_comm.hpp"
#include "sim/serving/replica_pool.hpp"
#include "sim/serving/serving_fleet.hpp"
#include "sim/world/run_budget.hpp"
#include "sim/world/serving_tp.hpp"

namespace cs::world::detail {

using namespace cs::scenario;

using nlohmann::json;

namespace {

// The pools' GPU regions: prefill first, decode next, each max replicas x GPUs per replica.
serving::KvPlacement kv_placement(const serving::ServingConfig& c) {
  const serving::DisaggregationSpec& d = c.disaggregated;
  serving::KvPlacement p;
  p.prefill_gpus = d.prefill_replica.timing.gpus;
  p.decode_gpus = c.replica.llm.timing.gpus;
  p.prefill_ranks.resize(static_cast<std::size_t>(d.prefill.autoscaler.max_replicas) * p.prefill_gpus);
  std::iota(p.prefill_ranks.begin(), p.prefill_ranks.end(), 0);
  p.decode_ranks.resize(static_cast<std::size_t>(d.decode.autoscaler.max_replicas) * p.decode_gpus);
  std::iota(p.decode_ranks.begin(), p.decode_ranks.end(), static_cast<int>(p.prefill_ranks.size()));
  return p;
}

json by_market(const fleet::PerMarket<double>& v) {
  json out = json::object();
  for (const fleet::Market m : fleet::kAllMarkets) out[std::string(fleet::to_string(m))] = v[m];
  return out;
}

json latency_summary(const serving::LatencySummary& s) {
  return {{"count", s.count}, {"mean_s", s.mean_s}, {"p50_s", s.p50_s}, {"p90_s", s.p90_s},
          {"p95_s", s.p95_s}, {"p99_s", s.p99_s}, {"max_s", s.max_s}};
}

json pool_block(const serving::PoolSummary& p) {
  return {{"replicas_mean", p.replicas_mean},
          {"replicas_max", p.replicas_max},
          {"ready_mean", p.ready_mean},
          {"cost_usd", p.cost_usd},
          {"cost_usd_by_market", by_market(p.cost_usd_by_market)},
          {"replica_hours_by_market", by_market(p.replica_hours)},
          {"reclaims", p.reclaims},
          {"reclaim_exposure_replica_hours", p.reclaim_exposure_hours},
          {"failures", p.failures},
          {"fallbacks", p.fallbacks}};
}

// A bound of the SLO, or null for none (infinity has no JSON form).
json bound(double s) { return std::isfinite(s) ? json(s) : json(nullptr); }

// A number the run may not have observed (NaN), as null.
json observed(double v) { return std::isnan(v) ? json(nullptr) : json(v); }

// slo.bounds: each bound given, the quantile observed at the SLO's percentile, and whether it holds.
json slo_bounds(const serving::ServingResult& r) {
  json out = json::object();
  const std::pair<const char*, const serving::SloBoundResult*> bounds[] = {
      {"latency", &r.slo_latency}, {"ttft", &r.slo_ttft}, {"tpot", &r.slo_tpot}};
  for (const auto& [name, b] : bounds)
    if (b->given) out[name] = {{"bound_s", b->bound_s}, {"observed_s", observed(b->observed_s)}, {"met", b->met ? 1 : 0}};
  return out;
}

}  // namespace

json serving_block(const serving::ServingResult& r, const serving::ServingConfig& c) {
  json b = {{"requests", r.requests},
            {"completed", r.completed},
            {"dropped", r.dropped},
            {"latency_mean_s", r.latency_mean_s},
            {"latency_p50_s", r.latency_p50_s},
            {"latency_p95_s", r.latency_p95_s},
            {"latency_p99_s", r.latency_p99_s},
            {"wait_mean_s", r.wait_mean_s},
            {"slo_attainment", r.slo_attainment},
            {"replicas_mean", r.replicas_mean},
            {"replicas_max", r.replicas_max},
            {"cost_usd", r.cost_usd}};
  b["latency"] = latency_summary(r.latency);
  b["slo"] = {{"latency_s", bound(c.slo.latency_s)},
              {"percentile", 100.0 * c.slo.percentile},
              {"latency_at_percentile_s", r.latency_at_slo_percentile_s},
              {"met", r.slo_met ? 1 : 0},
              {"bounds", slo_bounds(r)},
              {"peak_hour", r.peak_hour >= 0 ? json(r.peak_hour) : json(nullptr)},
              {"attainment_peak_hour", observed(r.slo_attainment_peak_hour)}};
  json& by_hour = b["slo"]["attainment_by_hour"] = json::array();
  for (const double a : r.slo_attainment_by_hour) by_hour.push_back(observed(a));
  if (r.llm) {
    b["slo"]["ttft_s"] = bound(c.slo.ttft_s);
    b["slo"]["tpot_s"] = bound(c.slo.tpot_s);
    b["ttft"] = latency_summary(r.ttft);
    b["tpot"] = latency_summary(r.tpot);
    b["llm"] = {{"output_tokens_per_s", r.output_tokens_per_s},
                {"output_tokens", r.tokens_out},  // the whole run's, warm-up included
                {"preemptions", r.preemptions}};
  }
  b["latency"]["exact"] = r.percentiles_exact ? 1 : 0;
  b["request_counts"] = {{"in_flight", r.in_flight}, {"missed_unfinished", r.missed_unfinished}, {"undecided", r.undecided_unfinished}, {"retries", r.retries}};
  const auto drops = [](serving::DropReason d) { return std::string(serving::to_string(d)); };
  b["drops"] = {{drops(serving::DropReason::queue_full), r.dropped_queue_full},
                {drops(serving::DropReason::timeout), r.dropped_timeout},
                {drops(serving::DropReason::lost), r.dropped_lost},
                {drops(serving::DropReason::too_large), r.dropped_too_large}};
  // The fleet's totals over its pools (one, or prefill and decode).
  fleet::PerMarket<double> hours = r.pool.replica_hours;
  serving::PoolSummary total = r.pool;
  if (c.disaggregated.enabled) {
    for (const fleet::Market m : fleet::kAllMarkets) {
      hours[m] += r.decode_pool.replica_hours[m];
    }
    total.ready_mean += r.decode_pool.ready_mean;
    total.reclaims += r.decode_pool.reclaims;
    total.reclaim_exposure_hours += r.decode_pool.reclaim_exposure_hours;
    total.failures += r.decode_pool.failures;
    total.fallbacks += r.decode_pool.fallbacks;
  }
  // The fleet's bill (every pool's ledger, owned or rented) and what it bought.
  report::add_grouped_numbers(b, r.money.summary_numbers());
  if (r.llm && r.tokens_out > 0) b["cost_per_million_tokens_usd"] = r.cost_usd / r.tokens_out * 1e6;
  if (!r.llm && r.finished > 0) b["cost_per_million_requests_usd"] = r.cost_usd / static_cast<double>(r.finished) * 1e6;
  b["replica_hours_by_market"] = by_market(hours);
  b["fleet"] = {{"ready_mean", total.ready_mean},
                {"reclaims", total.reclaims},
                {"reclaim_exposure_replica_hours", total.reclaim_exposure_hours},
                {"failures", total.failures},
                {"fallbacks", total.fallbacks}};
  if (c.disaggregated.enabled) {
    b["pools"] = {{"prefill", pool_block(r.pool)}, {"decode", pool_block(r.decode_pool)}};
    b["kv_bytes_transferred"] = r.kv_bytes_transferred;
  }
  return b;
}

json run_serving(const Config& config, engine::Simulator& sim, net::Comm* comm, bool record) {
  serving::ServingConfig c = config.serving;
  if (!record) c.timeseries_interval_s = 0;
  time_tp_collectives(config, c);
  c.max_in_flight = held_at_most(config, kBytesPerServingRequest);
  std::unique_ptr<serving::CommKvTransfer> kv;  // outlives the fleet
  std::unique_ptr<serving::ServingFleet> fleet;
  try {
    if (comm) kv = std::make_unique<serving::CommKvTransfer>(sim, *comm, kv_placement(c));
    fleet = std::make_unique<serving::ServingFleet>(sim, c, kv.get());
  } catch (const std::invalid_argument& e) {
    // parse_config checked every value with its path; what is left is the library's own check.
    throw InputError("workload", std::string("the serving fleet could not be built: ") + e.what());
  }
  fleet->start();
  try {
    sim.run(c.until_s);
  } catch (const serving::InFlightLimitError& e) {
    throw_held_limit(config, double(e.in_flight), "requests queued or in service", e.at_s,
                     "the fleet is overloaded: more replicas (or a higher fleet.autoscaler.max), a lower rate, or "
                     "fleet.max_queue and fleet.queue_timeout to drop what waits too long");
  }
  json block = serving_block(fleet->result(), c);
  if (c.disaggregated.enabled) block["kv_transfer"] = comm ? "network" : "link";
  return block;
}

}  // namespace cs::world::detail
