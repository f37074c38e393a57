// The run budget's estimate of what a serving fleet's and a job cluster's books will hold,
// against its closed form: (arrival rate - the most the fleet or cluster can finish) x the run,
// capped by bounded queues; jobs.csv rows for every job; nothing where the fleet keeps up.
#include <catch2/catch.hpp>

#include <optional>
#include <string>

#include "sim/scenario/input_error.hpp"
#include "sim/world/held_estimate.hpp"
#include "sim/world/run_budget.hpp"
#include "world_test_support.hpp"

using cs::world::test::load;
using namespace cs::world;

namespace {

const std::string kBooksErlangC = CS_SOURCE_DIR "/scenarios/serving_mmc_erlang_c.json";
const std::string kBooksLlm = CS_SOURCE_DIR "/scenarios/serving_llm_diurnal_hpa.json";
const std::string kBooksJobs = CS_SOURCE_DIR "/scenarios/jobs_four_teams.json";

// The books' item of an estimate (its key names the rate or the job count), if any.
std::optional<CostItem> held_books(const CostEstimate& e) {
  for (const CostItem& i : e.items)
    if (i.key == "workload.arrivals.rate" || i.key == "workload.jobs") return i;
  return std::nullopt;
}

}  // namespace

TEST_CASE("A plain-server fleet that keeps up holds no predictable pile-up", "[world][budget]") {
  // 64/s against 8 slots of 100 ms: at most 80/s served.
  CHECK(held_books(estimate_cost(load(kBooksErlangC))) == std::nullopt);
}

TEST_CASE("An overloaded plain-server fleet piles up (rate - ceiling) x the run", "[world][budget]") {
  // 100,000/s against 80/s for 130 min: (100,000 - 80) x 7,800 s requests of 160 B.
  const auto config = load(kBooksErlangC, {"workload.arrivals.rate=100000/s"});
  const std::optional<CostItem> b = held_books(estimate_cost(config));
  REQUIRE(b != std::nullopt);
  CHECK(b->bytes == Approx((100000.0 - 80.0) * 7800.0 * kBytesPerServingRequest));
  CHECK(b->what.find("at most 80/s") != std::string::npos);
  // Refused before it runs (run.max_memory 8 GB by default), at the rate, with the estimate.
  try {
    check_cost(config);
    FAIL("not refused");
  } catch (const cs::scenario::InputError& e) {
    CHECK(e.path() == "workload.arrivals.rate");
    CHECK(std::string(e.what()).find("run.max_memory") != std::string::npos);
  }
  // A bounded balancer queue caps it: 1,000 requests, and a 2 s timeout 200,000.
  const std::optional<CostItem> capped = held_books(estimate_cost(load(kBooksErlangC, {"workload.arrivals.rate=100000/s", "fleet.max_queue=1000"})));
  REQUIRE(capped != std::nullopt);
  CHECK(capped->bytes == Approx(1000 * kBytesPerServingRequest));
  const std::optional<CostItem> timed = held_books(estimate_cost(load(kBooksErlangC, {"workload.arrivals.rate=100000/s", "fleet.queue_timeout=2s"})));
  REQUIRE(timed != std::nullopt);
  CHECK(timed->bytes == Approx(200000 * kBytesPerServingRequest));
}

TEST_CASE("An LLM fleet's ceiling is a full batch at one sequence's iteration time", "[world][budget]") {
  // At most `max` replicas; the shipped rate is far below the ceiling.
  CHECK(held_books(estimate_cost(load(kBooksLlm))) == std::nullopt);
  const auto config = load(kBooksLlm, {R"(workload.arrivals={"process":"poisson","rate":"1000000/s"})", "run.until=10min"});
  const std::optional<CostItem> b = held_books(estimate_cost(config));
  REQUIRE(b != std::nullopt);
  // Far less than a million per second are served: nearly all 6e8 requests wait.
  CHECK(b->bytes > 0.9 * 6e8 * kBytesPerServingRequest);
  CHECK(b->bytes < 6e8 * kBytesPerServingRequest);
}

TEST_CASE("A job cluster's books: the pile-up, every wait, and jobs.csv rows", "[world][budget]") {
  // 1,000 one-GPU one-hour jobs a second for a day on the shipped cluster: nearly all wait.
  const std::vector<std::string> sets = {R"(workload.classes=[{"name":"short","gpus":1,"duration":"1h"}])",
                                         "workload.arrivals.rate=1000/s", "run.until=1d",
                                         R"(fleet.scheduler.queues=[{"name":"default"}])"};
  const auto config = load(kBooksJobs, sets);
  const double submitted = 1000.0 * 86400, gpus = config.jobs.total_gpus();
  const double finished = gpus / 3600.0 * 86400;  // the cluster's ceiling x the day
  const std::optional<CostItem> b = held_books(estimate_cost(config));
  REQUIRE(b != std::nullopt);
  CHECK(b->bytes == Approx((submitted - finished) * kBytesPerJob + finished * kBytesPerJobWait));
  // With jobs.csv every finished job keeps its row too.
  const std::optional<CostItem> rows = held_books(estimate_cost(config, true));
  REQUIRE(rows != std::nullopt);
  CHECK(rows->bytes == Approx(submitted * kBytesPerJob + finished * kBytesPerJobWait));
  // One-second jobs the cluster keeps up with (100/s on 512 GPUs) still keep a wait each: 8.64 M.
  std::vector<std::string> quick = sets;
  quick[0] = R"(workload.classes=[{"name":"short","gpus":1,"duration":"1s"}])";
  quick[1] = "workload.arrivals.rate=100/s";
  const std::optional<CostItem> waits = held_books(estimate_cost(load(kBooksJobs, quick)));
  REQUIRE(waits != std::nullopt);
  CHECK(waits->bytes == Approx(8.64e6 * kBytesPerJobWait));
  CHECK(waits->what.find("8.64 M jobs submitted") != std::string::npos);
  CHECK(held_books(estimate_cost(load(kBooksJobs))) != std::nullopt);  // the shipped file's waits: small
  CHECK(estimate_cost(load(kBooksJobs)).total_bytes() < 1e8);
}

namespace {

// The estimate's item for the extra lanes of a routing's routes, if any.
std::optional<CostItem> lanes_item(const CostEstimate& e) {
  for (const CostItem& i : e.items)
    if (i.key == "network.routing") return i;
  return std::nullopt;
}

}  // namespace

TEST_CASE("Routes of several lanes are counted lane by lane, once per pair", "[world][budget]") {
  // 144 GPUs in 9 groups: valiant_packet 7 lanes, ugal_packet 28.
  const std::string shift = CS_SOURCE_DIR "/scenarios/dragonfly_group_shift.json";
  const std::string a2a = R"(workload={"kind":"collective","op":"all_to_all","algorithm":"direct","sizes":["1MiB"]})";
  const auto item = [&](const std::string& routing, const std::string& workload) {
    return lanes_item(estimate_cost(load(shift, {"network.routing=" + routing, workload})));
  };
  CHECK(item("minimal", a2a) == std::nullopt);
  CHECK(item("ugal", a2a) == std::nullopt);
  const std::optional<CostItem> valiant = item("valiant_packet", a2a), ugal = item("ugal_packet", a2a);
  REQUIRE(valiant != std::nullopt);
  REQUIRE(ugal != std::nullopt);
  // The all-to-all's 144 x 143 pairs, each route's lanes past the first.
  CHECK(ugal->what.find("20592 routes") != std::string::npos);
  CHECK(ugal->what.find("28 lanes") != std::string::npos);
  CHECK(ugal->bytes == Approx(valiant->bytes * 27 / 6));
  // The group shift's 144 flows.
  const std::optional<CostItem> flows = item("ugal_packet", "workload.shift=16");
  REQUIRE(flows != std::nullopt);
  CHECK(flows->bytes == Approx(ugal->bytes * 144 / 20592));
}
