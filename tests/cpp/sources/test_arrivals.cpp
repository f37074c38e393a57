// The load as data and as generated: arrival processes (rates, the diurnal profile, bursts),
// trace replay read record by record, request demands.
#include <catch2/catch.hpp>

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <fstream>
#include <numbers>
#include <sstream>
#include <vector>

#include "sim/engine/simulator.hpp"
#include "sim/sources/arrival_source.hpp"
#include "workloads/job_trace.hpp"

using namespace cs::sources;
using cs::engine::Simulator;
namespace work = cs::work;

namespace {
std::vector<double> arrival_times(const work::ArrivalSpec& spec, double until, uint64_t seed = 5) {
  Simulator sim(seed);
  ArrivalSource source(sim, spec, work::RequestSpec{}, DemandKind::service_time);
  std::vector<double> times;
  while (auto a = source.next()) {
    if (a->time_s > until) break;
    times.push_back(a->time_s);
  }
  return times;
}
}  // namespace

TEST_CASE("Poisson arrivals come at their rate", "[sources][arrivals]") {
  work::ArrivalSpec spec;
  spec.rate_per_s = 50;
  const auto times = arrival_times(spec, 2000);
  const double n = times.size(), expected = 50 * 2000;
  CHECK(std::abs(n - expected) < 4 * std::sqrt(expected));
  CHECK(std::is_sorted(times.begin(), times.end()));
}

TEST_CASE("Diurnal arrivals follow the cosine profile", "[sources][arrivals]") {
  work::ArrivalSpec spec;
  spec.process = work::ArrivalProcess::diurnal;
  spec.rate_per_s = 20;
  spec.diurnal = {3600, 1.8, 900};  // hourly period, peak at 15 min
  const auto times = arrival_times(spec, 10 * 3600.0);
  // Counts per 6-minute phase bin over 10 periods against the integral of rate(t).
  const int bins = 10;
  std::vector<double> counts(bins, 0);
  for (const double t : times) counts[static_cast<std::size_t>(std::fmod(t, 3600) / 360)] += 1;
  for (int b = 0; b < bins; ++b) {
    const auto integral = [&](double t) {
      return 20 * (t + 0.8 * 3600 / (2 * std::numbers::pi) * std::sin(2 * std::numbers::pi * (t - 900) / 3600));
    };
    const double expected = 10 * (integral((b + 1) * 360.0) - integral(b * 360.0));
    INFO("bin " << b);
    CHECK(std::abs(counts[static_cast<std::size_t>(b)] - expected) < 4 * std::sqrt(expected));
  }
  CHECK(work::expected_rate_at(spec, 900) == Approx(36));
  CHECK(work::expected_rate_at(spec, 900 + 1800) == Approx(4));
}

TEST_CASE("Bursty (MMPP-2) arrivals have the stated mean rate", "[sources][arrivals]") {
  work::ArrivalSpec spec;
  spec.process = work::ArrivalProcess::bursty;
  spec.rate_per_s = 10;
  spec.bursty = {6, 30, 270};  // bursts at 60/s for 10% of the time: mean 15/s
  REQUIRE(work::mean_rate(spec) == Approx(15));
  // ~1,300 burst cycles: the share of time in bursts, and so the rate, is within ~1.3% (1 sd).
  const auto times = arrival_times(spec, 400000);
  CHECK(times.size() / 400000.0 == Approx(15).epsilon(0.04));
  // Burstier than Poisson: 10 s counts vary far more than their mean.
  std::vector<double> counts(40000, 0);
  for (const double t : times) counts[static_cast<std::size_t>(t / 10)] += 1;
  double mean = 0, var = 0;
  for (const double c : counts) mean += c / counts.size();
  for (const double c : counts) var += (c - mean) * (c - mean) / counts.size();
  CHECK(var > 5 * mean);
}

TEST_CASE("A trace is read record by record, its token counts used", "[sources][arrivals]") {
  std::istringstream csv(
      "# an excerpt\n"
      "timestamp,prompt_tokens,output_tokens,extra\n"
      "0.5,100,20,x\n"
      "\n"
      "1.25,2000,5,y\n"
      "1.25,7,1,z\n");
  work::TraceReader reader(csv, 2.0);
  auto r1 = reader.next();
  REQUIRE(r1);
  CHECK(r1->time_s == 1.0);
  CHECK(r1->prompt_tokens == 100);
  CHECK(r1->output_tokens == 20);
  CHECK(r1->service_time_s == -1);
  CHECK(reader.next()->time_s == 2.5);
  CHECK(reader.next()->prompt_tokens == 7);
  CHECK_FALSE(reader.next());
  std::istringstream bad("timestamp\n2\n1\n");
  work::TraceReader backwards(bad);
  backwards.next();
  CHECK_THROWS_WITH(backwards.next(), Catch::Contains("line 3"));
  std::istringstream no_time("prompt_tokens\n3\n");
  CHECK_THROWS_AS(work::TraceReader(no_time), std::invalid_argument);
}

TEST_CASE("A trace row that cannot be is refused naming its line and column", "[sources][arrivals]") {
  const auto second_row_fails = [](const std::string& text, const char* where) {
    std::istringstream csv(text);
    work::TraceReader reader(csv);
    REQUIRE(reader.next());
    CHECK_THROWS_WITH(reader.next(), Catch::Contains(where));
  };
  second_row_fails("timestamp,prompt_tokens\n0,10\n1,-5\n", "line 3: column prompt_tokens");
  second_row_fails("timestamp,prompt_tokens\n0,10\n1,1e30\n", "line 3: column prompt_tokens");
  second_row_fails("timestamp,output_tokens\n0,10\n1,0\n", "line 3: column output_tokens");
  second_row_fails("timestamp,output_tokens\n0,10\n1,2.5\n", "whole number");
  second_row_fails("timestamp,service_time\n0,0.1\n1,-0.1\n", "line 3: column service_time");
  second_row_fails("timestamp,service_time\n0,0.1\n1,1e13\n", "seconds from 0 to 1e12");
  second_row_fails("timestamp\n0\n2e12\n", "line 3: column timestamp");
  std::istringstream jobs("submit_time,gpus,duration\n0,1,5\n1,8,-1\n");
  work::JobTraceReader job_reader(jobs);
  REQUIRE(job_reader.next());
  CHECK_THROWS_WITH(job_reader.next(), Catch::Contains("line 3: column duration"));
}

TEST_CASE("A byte-order mark or quotes around the header's names read as the plain header",
          "[sources][arrivals]") {
  for (const char* header : {"\xEF\xBB\xBFtimestamp,service_time\n", "\"timestamp\",\"service_time\"\r\n"}) {
    std::istringstream csv(std::string(header) + "0.5,\"0.25\"\n");
    work::TraceReader reader(csv);
    const auto r = reader.next();
    REQUIRE(r);
    CHECK(r->time_s == 0.5);
    CHECK(r->service_time_s == 0.25);
  }
  std::istringstream jobs("\xEF\xBB\xBF\"submit_time\",gpus,duration\n3,2,60\n");
  work::JobTraceReader job_reader(jobs);
  CHECK(job_reader.next()->gpus == 2);
}

TEST_CASE("Trace replay drives an ArrivalSource lazily", "[sources][arrivals]") {
  const std::string path = std::string(CS_SOURCE_DIR) + "/build/test_serving_trace.csv";
  {
    std::ofstream out(path);
    out << "timestamp,prompt_tokens\n";
    for (int i = 0; i < 1000; ++i) out << i * 0.1 << "," << (i % 7 + 1) << "\n";
  }
  work::ArrivalSpec spec;
  spec.process = work::ArrivalProcess::trace;
  spec.trace_path = path;
  work::RequestSpec request;
  request.output_tokens = work::Distribution::constant(9);
  Simulator sim;
  ArrivalSource source(sim, spec, request, DemandKind::tokens);
  int n = 0;
  while (auto a = source.next()) {
    CHECK(a->prompt_tokens == n % 7 + 1);
    CHECK(a->output_tokens == 9);  // not in the file: drawn from the distribution
    ++n;
  }
  CHECK(n == 1000);
  std::remove(path.c_str());
}

TEST_CASE("Token counts are drawn, rounded and clamped", "[sources][arrivals]") {
  work::ArrivalSpec spec;
  work::RequestSpec request;
  request.prompt_tokens = work::Distribution::lognormal(500, 1.5);
  request.max_prompt_tokens = 4096;
  Simulator sim(9);
  ArrivalSource source(sim, spec, request, DemandKind::tokens);
  double sum = 0;
  int top = 0, bottom = 1 << 30;
  for (int i = 0; i < 100000; ++i) {
    const Arrival a = *source.next();
    sum += a.prompt_tokens;
    top = std::max(top, a.prompt_tokens);
    bottom = std::min(bottom, a.prompt_tokens);
  }
  CHECK(bottom >= 1);
  CHECK(top == 4096);
  CHECK(sum / 100000 < 500);  // clamping trims the heavy tail
  CHECK(sum / 100000 > 400);
}
