// The SLO's judgment on hand-made requests: `slo_met` holds only when every bound given holds at
// the percentile, a bound not given is not judged, and `slo_attainment` is the share of
// requests within every bound at once (dropped ones outside), overall and per hour of arrival.
#include <catch2/catch.hpp>

#include <cmath>
#include <limits>
#include <tuple>

#include "sim/serving/serving_stats.hpp"

using namespace cs::serving;

namespace {

// A request and when it completed (ServingStats::on_complete's arguments).
struct CompletedRequest {
  Request request;
  double done_s;
};

// An LLM request that arrived at `arrival_s`, took `ttft_s` to its first token and has `tokens`
// output tokens; completed `latency_s` after arriving.
CompletedRequest llm_request(double arrival_s, double latency_s, double ttft_s, int tokens) {
  Request r;
  r.arrival_s = arrival_s;
  r.start_s = arrival_s;
  r.first_token_s = arrival_s + ttft_s;
  r.output_tokens = tokens;
  return {r, arrival_s + latency_s};
}

ServingResult judged(const SloSpec& slo, std::initializer_list<CompletedRequest> completed, bool llm = true) {
  ServingStats stats(slo, QuantileSketch::Options{}, 0.0, llm);
  for (const CompletedRequest& d : completed) {
    stats.on_arrival(d.request);
    stats.on_complete(d.request, d.done_s);
  }
  ServingResult out;
  stats.fill(out, 3600.0);
  return out;
}

// Every bound given: latency, TTFT and TPOT (seconds), held at `percentile` (a share).
SloSpec every_bound(double latency_s, double ttft_s, double tpot_s, double percentile) {
  return SloSpec{.latency_s = latency_s, .percentile = percentile, .ttft_s = ttft_s, .tpot_s = tpot_s};
}

}  // namespace

TEST_CASE("a TTFT bound missed at the percentile fails the SLO though latency holds", "[serving][slo]") {
  SloSpec slo;
  slo.latency_s = 10.0;
  slo.ttft_s = 0.5;
  slo.percentile = 0.5;
  // TTFTs 0.2, 0.8, 0.9: the median (0.8 s) misses 0.5 s; every latency (2 s) is within 10 s.
  const ServingResult r = judged(slo, {llm_request(0, 2, 0.2, 11), llm_request(1, 2, 0.8, 11),
                                       llm_request(2, 2, 0.9, 11)});
  CHECK(r.slo_latency.given);
  CHECK(r.slo_latency.met);
  CHECK(r.slo_latency.observed_s == Approx(2.0));
  CHECK(r.slo_ttft.given);
  CHECK_FALSE(r.slo_ttft.met);
  CHECK(r.slo_ttft.observed_s == Approx(0.8));
  CHECK_FALSE(r.slo_met);
  CHECK(r.slo_attainment == Approx(1.0 / 3));  // only the first is within both
}

TEST_CASE("each bound failing alone fails the SLO, the others holding", "[serving][slo]") {
  const SloSpec slo = every_bound(10.0, 0.5, 0.1, 0.5);
  // Every request alike: (latency, TTFT, output tokens); TPOT = (latency - TTFT) / (tokens - 1).
  const auto three = [&](double latency, double ttft, int tokens) {
    return judged(slo, {llm_request(0, latency, ttft, tokens), llm_request(1, latency, ttft, tokens),
                        llm_request(2, latency, ttft, tokens)});
  };
  const ServingResult all = three(2.0, 0.2, 101);  // 2 s, 0.2 s, 0.018 s per token
  CHECK(all.slo_met);
  CHECK(all.slo_attainment == 1.0);
  const ServingResult latency = three(20.0, 0.2, 1001);  // 20 s > 10 s; 0.0198 s per token
  const ServingResult ttft = three(2.0, 0.8, 101);       // 0.8 s > 0.5 s; 0.012 s per token
  const ServingResult tpot = three(5.0, 0.2, 11);        // 0.48 s per token > 0.1 s; 5 s, 0.2 s
  for (const ServingResult* r : {&latency, &ttft, &tpot}) {
    CHECK_FALSE(r->slo_met);
    CHECK(r->slo_attainment == 0.0);
  }
  CHECK_FALSE(latency.slo_latency.met);
  CHECK(latency.slo_ttft.met);
  CHECK(latency.slo_tpot.met);
  CHECK(ttft.slo_latency.met);
  CHECK_FALSE(ttft.slo_ttft.met);
  CHECK(ttft.slo_tpot.met);
  CHECK(tpot.slo_latency.met);
  CHECK(tpot.slo_ttft.met);
  CHECK_FALSE(tpot.slo_tpot.met);
  CHECK(tpot.slo_tpot.observed_s == Approx(0.48));
}

TEST_CASE("a bound not given is not judged", "[serving][slo]") {
  SloSpec slo;
  slo.ttft_s = 1.0;  // no latency or TPOT bound
  // 100 s latencies and 1 s per token: no bound judges them.
  const ServingResult r = judged(slo, {llm_request(0, 100, 0.5, 100), llm_request(5, 100, 0.6, 100)});
  CHECK_FALSE(r.slo_latency.given);
  CHECK(r.slo_latency.met);
  CHECK_FALSE(r.slo_tpot.given);
  CHECK(r.slo_tpot.met);
  CHECK(r.slo_ttft.met);
  CHECK(r.slo_met);
  CHECK(r.slo_attainment == 1.0);
  // A plain server has no TTFT or TPOT: only its latency is judged.
  const ServingResult plain = judged(SloSpec{}, {llm_request(0, 3, 0, 1)}, false);
  CHECK(plain.slo_met);
  CHECK_FALSE(plain.slo_ttft.given);
}

TEST_CASE("attainment counts requests within every bound at once, drops outside, by hour", "[serving][slo]") {
  const SloSpec slo = every_bound(5.0, 1.0, 0.1, 0.99);
  ServingStats stats(slo, QuantileSketch::Options{}, 0.0, true);
  const CompletedRequest hour0[] = {
      llm_request(10, 2, 0.5, 11),  // TPOT (2 - 0.5) / 10 = 0.15 s > 0.1 s: out
      llm_request(20, 1, 0.5, 11),  // TPOT 0.05 s: within all three
      llm_request(30, 6, 0.5, 101), // latency 6 s > 5 s: out
      llm_request(40, 2, 1.5, 1),   // TTFT 1.5 s > 1 s: out (one token: no TPOT)
      llm_request(50, 0.8, 0.8, 1), // within latency and TTFT, no TPOT to judge: within
  };
  const CompletedRequest hour2[] = {llm_request(7300, 1, 0.2, 10), llm_request(7310, 1, 0.2, 10), llm_request(7320, 1, 0.2, 10)};
  for (const CompletedRequest& d : hour0) {
    stats.on_arrival(d.request);
    stats.on_complete(d.request, d.done_s);
  }
  Request dropped;
  dropped.arrival_s = 60;
  stats.on_arrival(dropped);
  stats.on_dropped(dropped, DropReason::timeout);
  for (const CompletedRequest& d : hour2) {
    stats.on_arrival(d.request);
    stats.on_complete(d.request, d.done_s);
  }
  ServingResult r;
  stats.fill(r, 3 * 3600.0);
  // 2 of hour 0's 6 (one dropped) and all 3 of hour 2's: 5 of 9.
  CHECK(r.slo_attainment == Approx(5.0 / 9));
  REQUIRE(r.slo_attainment_by_hour.size() == 3);
  CHECK(r.slo_attainment_by_hour[0] == Approx(2.0 / 6));
  CHECK(std::isnan(r.slo_attainment_by_hour[1]));  // nothing arrived
  CHECK(r.slo_attainment_by_hour[2] == Approx(1.0));
  CHECK(r.peak_hour == 0);  // 6 arrivals against 3
  CHECK(r.slo_attainment_peak_hour == Approx(2.0 / 6));
  // At p99 the latency (6 s), TTFT (1.5 s) and TPOT (0.15 s) quantiles all miss.
  CHECK_FALSE(r.slo_latency.met);
  CHECK_FALSE(r.slo_ttft.met);
  CHECK_FALSE(r.slo_tpot.met);
  CHECK_FALSE(r.slo_met);
}

TEST_CASE("nothing completed: the SLO is not met", "[serving][slo]") {
  SloSpec slo;
  slo.ttft_s = 1.0;
  const ServingResult r = judged(slo, {});
  CHECK_FALSE(r.slo_met);
  CHECK(r.peak_hour == -1);
  CHECK(std::isnan(r.slo_attainment_peak_hour));
}

TEST_CASE("attainment counts a request unfinished past its latency deadline at the end as outside", "[serving][slo]") {
  // At the end (100 s), under a 5 s latency bound: one completed within it, one dropped, one
  // unfinished since 30 s (past its deadline: it can no longer meet the SLO) and one since 97 s
  // (its deadline, 102 s, is after the end: undecided, left out).
  auto judged_at_end = [](const SloSpec& slo) {
    ServingStats stats(slo, QuantileSketch::Options{}, 0.0, false);
    Request within, dropped, late, recent;
    within.id = 1, within.arrival_s = 10, within.start_s = 10;
    dropped.id = 2, dropped.arrival_s = 20;
    late.id = 3, late.arrival_s = 30;
    recent.id = 4, recent.arrival_s = 97;
    for (const Request* r : {&within, &dropped, &late, &recent}) stats.on_arrival(*r);
    stats.on_complete(within, 12);
    stats.on_dropped(dropped, DropReason::queue_full);
    ServingResult r;
    stats.fill(r, 100.0);
    return r;
  };
  SloSpec slo;
  slo.latency_s = 5.0;
  const ServingResult r = judged_at_end(slo);
  CHECK(r.in_flight == 2);
  CHECK(r.missed_unfinished == 1);
  CHECK(r.slo_attainment == Approx(1.0 / 3));
  REQUIRE(r.slo_attainment_by_hour.size() == 1);
  CHECK(r.slo_attainment_by_hour[0] == Approx(1.0 / 3));
  // No latency bound: no deadline passes, the unfinished stay out.
  const ServingResult unbounded = judged_at_end(SloSpec{});
  CHECK(unbounded.missed_unfinished == 0);
  CHECK(unbounded.slo_attainment == Approx(1.0 / 2));
}

TEST_CASE("unfinished requests past a TTFT or TPOT bound are misses, the others undecided", "[serving][slo]") {
  // TTFT 1 s and TPOT 100 ms at the median, no latency bound; the run ends at 100 s. One request
  // completed within both (TTFT 0.5 s, TPOT 0.05 s); five still unfinished:
  //   b: since 90 s, no first token: TTFT already above 10 s, a miss;
  //   c: since 99.5 s, no first token: 0.5 s so far, undecided;
  //   d: first token in time (50.5 s) of 101: 100 tokens at 100 ms were due by 60.5 s, a TPOT
  //      miss, above (100 - 50.5) / 100 = 0.495 s;
  //   e: first token at 95.2 s of 1001: 100 s allowed, undecided;
  //   f: first token at 82 s (TTFT 2 s, a miss) of 2: its second was due by 82.1 s (TPOT above 18 s).
  const SloSpec slo{.percentile = 0.5, .ttft_s = 1.0, .tpot_s = 0.1};
  const auto at_end = [](const SloSpec& judged_by) {
    ServingStats stats(judged_by, QuantileSketch::Options{}, 0.0, true);
    const CompletedRequest a = llm_request(0, 1.0, 0.5, 11);
    stats.on_arrival(a.request);
    stats.on_first_token(a.request);
    stats.on_complete(a.request, a.done_s);
    // (id, arrival, first token or -1, output tokens)
    const std::tuple<uint64_t, double, double, int> unfinished[] = {
        {2, 90, -1, 10}, {3, 99.5, -1, 10}, {4, 50, 50.5, 101}, {5, 95, 95.2, 1001}, {6, 80, 82, 2}};
    for (const auto& [id, arrival, first_token, tokens] : unfinished) {
      Request r;
      r.id = id, r.arrival_s = arrival, r.output_tokens = tokens;
      stats.on_arrival(r);
      r.first_token_s = first_token;
      if (first_token >= 0) stats.on_first_token(r);
    }
    ServingResult r;
    stats.fill(r, 100.0);
    return r;
  };
  const ServingResult r = at_end(slo);
  CHECK(r.in_flight == 5);
  CHECK(r.missed_unfinished == 3);     // b, d, f
  CHECK(r.undecided_unfinished == 2);  // c, e
  CHECK(r.slo_attainment == Approx(1.0 / 4));
  REQUIRE(r.slo_attainment_by_hour.size() == 1);
  CHECK(r.slo_attainment_by_hour[0] == Approx(1.0 / 4));
  // The medians: TTFT of {0.5, 2 (f), > 10 (b)} is f's 2 s; TPOT of {0.05, > 0.495 (d), > 18 (f)}
  // is at least d's 0.495 s. Both miss, though the one completed request is within both.
  CHECK_FALSE(r.slo_ttft.met);
  CHECK(r.slo_ttft.observed_s == Approx(2.0));
  CHECK_FALSE(r.slo_tpot.met);
  CHECK(r.slo_tpot.observed_s == Approx(0.495));
  CHECK(r.slo_latency.met);  // not given
  CHECK_FALSE(r.slo_met);
  // The latency summaries hold the completed request alone.
  CHECK(r.ttft.count == 1);
  CHECK(r.tpot.count == 1);
  // With no bound, nothing unfinished is judged.
  const ServingResult unbounded = at_end(SloSpec{});
  CHECK(unbounded.missed_unfinished == 0);
  CHECK(unbounded.undecided_unfinished == 5);
  CHECK(unbounded.slo_attainment == 1.0);
  CHECK(unbounded.slo_met);
}

TEST_CASE("a request reported done after its last token is timed at its last token", "[serving][slo]") {
  // Arrived at 0, first token at 1 s, 11 tokens, its last at 3 s; the replica held its slot and
  // reported it at 5 s (JetStream's slot lag): latency 3 s and TPOT 0.2 s, as the user saw them.
  CompletedRequest d = llm_request(0, 5, 1, 11);
  d.request.last_token_s = 3;
  const ServingResult r = judged(SloSpec{}, {d});
  CHECK(r.latency_mean_s == Approx(3));
  CHECK(r.tpot.mean_s == Approx(0.2));
}
