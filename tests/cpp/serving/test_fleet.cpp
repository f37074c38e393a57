// Whole serving runs: determinism, LLM serving with HPA (TTFT and TPOT reported), the SLO,
// disaggregated prefill and decode pools, spot reclaims on a running fleet, time series.
#include <catch2/catch.hpp>

#include "serving_test_support.hpp"

using namespace cs::serving;
using namespace cs::serving::test;
namespace work = cs::work;

namespace {

ServingConfig llm_fleet(double rate, double until) {
  ServingConfig c;
  c.arrivals.rate_per_s = rate;
  c.request.prompt_tokens = work::Distribution::lognormal(1000, 1.0);
  c.request.output_tokens = work::Distribution::lognormal(200, 1.0);
  c.request.max_prompt_tokens = 8000;
  c.request.max_output_tokens = 2000;
  c.replica.kind = ReplicaKind::llm;
  c.fleet.autoscaler.policy = ScalingPolicy::hpa;
  c.fleet.autoscaler.metric = MetricKind::concurrency;
  c.fleet.autoscaler.target = 64;
  c.fleet.autoscaler.min_replicas = 1;
  c.fleet.autoscaler.max_replicas = 20;
  c.fleet.autoscaler.replicas = 2;
  c.slo.latency_s = 30;
  c.slo.ttft_s = 2;
  c.until_s = until;
  c.timeseries_interval_s = 60;
  return c;
}

void same_result(const ServingResult& a, const ServingResult& b) {
  CHECK(a.requests == b.requests);
  CHECK(a.completed == b.completed);
  CHECK(a.latency_mean_s == b.latency_mean_s);
  CHECK(a.latency_p99_s == b.latency_p99_s);
  CHECK(a.ttft.p99_s == b.ttft.p99_s);
  CHECK(a.replicas_mean == b.replicas_mean);
  CHECK(a.cost_usd == b.cost_usd);
  CHECK(a.events == b.events);
}

}  // namespace

TEST_CASE("Same seed, same numbers; another seed, other numbers", "[serving][fleet]") {
  const ServingConfig c = llm_fleet(20, 1800);
  const ServingResult a = run_serving(c, 1), b = run_serving(c, 1), other = run_serving(c, 2);
  same_result(a, b);
  CHECK(a.latency_mean_s != other.latency_mean_s);
}

TEST_CASE("LLM serving with HPA: TTFT, TPOT, SLO and scaling", "[serving][fleet]") {
  cs::engine::Simulator sim(3);
  ServingConfig c = llm_fleet(30, 3 * 3600.0);
  c.arrivals.process = work::ArrivalProcess::diurnal;
  c.arrivals.diurnal = {3 * 3600.0, 1.8, 1.5 * 3600.0};
  ServingFleet fleet(sim, c);
  fleet.start();
  sim.run(c.until_s);
  const ServingResult r = fleet.result();
  REQUIRE(r.completed > 100000);
  CHECK(r.llm);
  CHECK(r.ttft.count == r.completed);
  CHECK(r.ttft.mean_s > 0);
  CHECK(r.ttft.p99_s >= r.ttft.p50_s);
  CHECK(r.tpot.mean_s > 0.005);  // at least a batch-1 step of an 8B model on an H100
  CHECK(r.tpot.mean_s < 0.1);
  CHECK(r.latency_p50_s <= r.latency_p95_s);
  CHECK(r.latency_p95_s <= r.latency_p99_s);
  CHECK(r.slo_attainment > 0.5);
  CHECK(r.slo_attainment <= 1.0);
  CHECK(r.requests == r.completed + r.dropped + r.in_flight);
  CHECK(r.replicas_max > r.replicas_mean);   // it scaled with the daily wave
  CHECK(r.pool.replicas_max <= 20 + 20);
  CHECK(r.cost_usd == Approx(r.pool.replica_hours[Market::on_demand] * c.fleet.pool.market.usd_per_hour[Market::on_demand]));
  CHECK(r.output_tokens_per_s > 0);
  // The time series: one sample a minute of each series.
  const auto* ready = sim.recorder().series("serving.replicas_ready");
  REQUIRE(ready);
  CHECK(ready->size() == 180);
  for (const char* name : {"serving.arrival_rate", "serving.latency_p99_s", "serving.ttft_p50_s",
                           "serving.queue_length", "serving.cost_usd", "serving.replicas_starting",
                           "serving.scaling_metric", "serving.scaling_metric_total"}) {
    INFO(name);
    CHECK(sim.recorder().series(name));
  }
  CHECK_FALSE(sim.recorder().series("serving.total_cost_usd"));  // one cost column, not two
}

TEST_CASE("Disaggregated serving: prefill and decode pools, KV moved between them",
          "[serving][fleet]") {
  ServingConfig c = llm_fleet(20, 1800);
  c.request.prompt_tokens = work::Distribution::constant(2000);
  c.request.output_tokens = work::Distribution::constant(100);
  DisaggregationSpec& d = c.disaggregated;
  d.enabled = true;
  d.prefill.autoscaler = c.fleet.autoscaler;
  d.prefill.autoscaler.metric = MetricKind::queue_length;
  d.prefill.autoscaler.target = 2;
  d.decode.autoscaler = c.fleet.autoscaler;
  d.decode.autoscaler.target = 128;
  d.link.bandwidth_Bps = 10e9;
  const ServingResult r = run_serving(c, 4);
  REQUIRE(r.completed > 10000);
  // Every completed request's KV cache crossed once (plus those still in flight).
  const double kv = 2000 * c.replica.llm.timing.model.kv_bytes_per_token();
  CHECK(r.kv_bytes_transferred >= r.completed * kv);
  CHECK(r.kv_bytes_transferred <= (r.completed + r.in_flight) * kv);
  CHECK(r.decode_pool.replicas_mean > 0);
  CHECK(r.pool.replicas_mean > 0);
  CHECK(r.cost_usd == Approx(r.pool.cost_usd + r.decode_pool.cost_usd));
  // TTFT is the prefill pool's: a 2,000-token prefill, well under a second when not queued.
  CHECK(r.ttft.p50_s < 1.0);
  CHECK(r.tpot.p50_s > 0);
}

TEST_CASE("A fifth of the spot capacity reclaimed at peak: lost work retried, replaced",
          "[serving][fleet]") {
  cs::engine::Simulator sim(8);
  ServingConfig c = plain_fleet(10, 4, 300, work::Distribution::exponential(0.1), 1200);
  c.fleet.pool.market.spot_share = 1.0;
  c.fleet.pool.market.reclaims.rate.base_per_s = 0;  // only the scripted reclaims below
  c.fleet.pool.market.reclaims.warning_s = 30;
  c.fleet.pool.market.reclaims.capacity_return = work::Distribution::constant(0);
  c.fleet.pool.cold_start = ColdStartSpec::none();
  c.fleet.pool.cold_start.node_boot = work::Distribution::constant(60);
  ServingFleet fleet(sim, c);
  fleet.start();
  sim.run(600);
  const std::vector<uint32_t> spot = fleet.pool().replicas_in(Market::spot);
  REQUIRE(spot.size() == 10);
  for (std::size_t i = 0; i < 2; ++i) REQUIRE(fleet.pool().reclaim(spot[i]));
  sim.run(c.until_s);
  const ServingResult r = fleet.result();
  CHECK(r.pool.reclaims == 2);
  CHECK(r.dropped == 0);
  // Replacements came as spot (capacity was back at once): everything billed at the spot price.
  CHECK(r.pool.replica_hours[Market::on_demand] == 0);
  CHECK(r.pool.cost_usd_by_market[Market::spot] ==
        Approx(r.pool.replica_hours[Market::spot] * c.fleet.pool.market.usd_per_hour[Market::spot]));
  CHECK(r.cost_usd == Approx(r.pool.cost_usd_by_market[Market::spot]));
  CHECK(fleet.pool().ready_count() == 10);  // replaced after their cold start
  CHECK(r.requests == r.completed + r.in_flight);
}

TEST_CASE("Requests too large for a replica's KV cache are dropped, not stuck",
          "[serving][fleet]") {
  ServingConfig c = llm_fleet(5, 600);
  c.fleet.autoscaler.policy = ScalingPolicy::fixed;
  c.replica.llm.timing.kv_cache_bytes = 256 * 16 * c.replica.llm.timing.model.kv_bytes_per_token();
  c.request.prompt_tokens = work::Distribution::uniform(1000, 6000);  // some exceed 4,096 tokens
  c.request.output_tokens = work::Distribution::constant(10);
  const ServingResult r = run_serving(c, 6);
  CHECK(r.dropped_too_large > 0);
  CHECK(r.dropped == r.dropped_too_large);
  CHECK(r.completed > 0);
}

TEST_CASE("Requests still decoding at the end whose TPOT is already missed count as missed, unified or disaggregated",
          "[serving][fleet][slo]") {
  // 2,000-token outputs at a few ms a step on one replica, for 20 s: most requests are still
  // decoding at the end. Under a 1 ms TPOT bound, one whose first token came more than
  // 1 ms x 1,999 = 2 s before the end has missed it, which the fleet knows only from the
  // replica's first-token notice (the prefill pool's, disaggregated).
  for (const bool disaggregated : {false, true}) {
    ServingConfig c = llm_fleet(2, 20);
    c.request.prompt_tokens = work::Distribution::constant(100);
    c.request.output_tokens = work::Distribution::constant(2000);
    c.fleet.autoscaler.policy = ScalingPolicy::fixed;
    c.fleet.autoscaler.replicas = 1;
    c.slo = SloSpec{.percentile = 0.5, .tpot_s = 1e-3};
    if (disaggregated) {
      c.disaggregated.enabled = true;
      c.disaggregated.prefill.autoscaler = c.fleet.autoscaler;
      c.disaggregated.decode.autoscaler = c.fleet.autoscaler;
      c.disaggregated.link.bandwidth_Bps = 10e9;
    }
    const ServingResult r = run_serving(c, 1);
    INFO("disaggregated " << disaggregated);
    REQUIRE(r.in_flight > 10);
    CHECK(r.missed_unfinished > 0);
    CHECK(r.missed_unfinished + r.undecided_unfinished == r.in_flight);
    CHECK(r.slo_attainment == 0.0);  // the completed ones miss too
    CHECK_FALSE(r.slo_tpot.met);
  }
}
