// Plan enumeration: every candidate is valid, the space is what PlanSpace says.
#include <set>
#include <tuple>

#include <catch2/catch.hpp>

#include "workloads/training_enumerate.hpp"

namespace cs::work {
namespace {

TEST_CASE("every enumerated plan is valid and sized; the space covers the factorizations", "[training][enumerate]") {
  const auto model = *find_model_preset("llama3-8b");
  const ClusterShape cluster{16, 8};
  const auto plans = enumerate_plans(model, 64, cluster, 80e9);
  REQUIRE_FALSE(plans.empty());
  std::set<std::tuple<int, int, int, int>> shapes;
  std::set<Schedule> schedules;
  for (const auto& c : plans) {
    const auto& p = c.workload.parallel;
    CHECK_NOTHROW(validate(c.workload, cluster));
    CHECK(c.memory.per_stage.size() == std::size_t(p.pp));
    CHECK(c.memory.fits == (c.memory.max_bytes <= 0.95 * 80e9));  // the default 5% headroom
    CHECK(c.memory.within_capacity == (c.memory.max_bytes <= 80e9));
    CHECK(p.tp <= 8);
    CHECK(p.sequence_parallel == (p.tp > 1));
    if (p.pp == 1) CHECK(p.schedule == Schedule::one_f_one_b);
    shapes.insert({p.tp, p.pp, p.dp, p.cp});
    schedules.insert(p.schedule);
  }
  // tp in {1, 2, 4, 8} x pp dividing 32 layers x cp in {1, 2, 4, 8}, with dp filling 16 GPUs.
  CHECK(shapes.count({8, 2, 1, 1}) == 1);
  CHECK(shapes.count({2, 2, 2, 2}) == 1);
  CHECK(shapes.count({1, 1, 16, 1}) == 1);
  CHECK(shapes.count({8, 1, 1, 2}) == 1);
  CHECK(schedules.size() == 4);
  // Deterministic.
  const auto again = enumerate_plans(model, 64, cluster, 80e9);
  REQUIRE(again.size() == plans.size());
  for (std::size_t i = 0; i < plans.size(); ++i) CHECK(again[i].memory.max_bytes == plans[i].memory.max_bytes);

  PlanSpace fitting;
  fitting.only_fitting = true;
  const auto fit = enumerate_plans(model, 64, cluster, 80e9, fitting);
  std::size_t expected = 0;
  for (const auto& c : plans) expected += c.memory.fits;
  CHECK(fit.size() == expected);
  CHECK(fit.size() < plans.size());
}

TEST_CASE("MoE plans enumerate expert parallelism within data parallelism", "[training][enumerate]") {
  const auto model = *find_model_preset("mixtral-8x7b");
  PlanSpace space;
  space.schedules = {Schedule::one_f_one_b};
  space.recompute = {Recompute::full};
  space.zero_stages = {1};
  const auto plans = enumerate_plans(model, 32, {16, 8}, 80e9, space);
  std::set<int> eps;
  for (const auto& c : plans) {
    eps.insert(c.workload.parallel.ep);
    CHECK(c.workload.parallel.dp % c.workload.parallel.ep == 0);
  }
  CHECK(eps == std::set<int>{1, 2, 4, 8});
}

}  // namespace
}  // namespace cs::work
