// Pipeline schedules: every pass once, in an order that respects each micro-batch's data flow.
#include <map>
#include <tuple>

#include <catch2/catch.hpp>

#include "workloads/training_schedule.hpp"

namespace cs::work {
namespace {

void check_complete(Schedule s, int p, int m, int v) {
  for (int stage = 0; stage < p; ++stage) {
    INFO(to_string(s) << " p " << p << " m " << m << " v " << v << " stage " << stage);
    std::map<std::tuple<int, int, PassKind>, int> position;
    const auto order = stage_schedule(s, stage, p, m, v);
    for (std::size_t i = 0; i < order.size(); ++i) {
      const auto& pass = order[i];
      CHECK(position.emplace(std::tuple{pass.micro, pass.chunk, pass.kind}, int(i)).second);
    }
    const bool split = s == Schedule::zb_h1;
    CHECK(order.size() == std::size_t(m * v * (split ? 3 : 2)));
    for (int i = 0; i < m; ++i)
      for (int c = 0; c < v; ++c) {
        const int f = position.at({i, c, PassKind::forward});
        const int b = position.at({i, c, split ? PassKind::backward_input : PassKind::backward});
        CHECK(f < b);
        if (split) CHECK(b < position.at({i, c, PassKind::backward_weight}));
      }
  }
}

TEST_CASE("schedules run every pass once, forward before backward", "[training][schedule]") {
  for (int p : {1, 2, 4})
    for (int m : {1, 4, 8}) {
      check_complete(Schedule::gpipe, p, m, 1);
      check_complete(Schedule::one_f_one_b, p, m, 1);
      check_complete(Schedule::zb_h1, p, m, 1);
      if (p > 1 && m % p == 0)
        for (int v : {2, 3}) check_complete(Schedule::interleaved, p, m, v);
    }
}

TEST_CASE("1f1b warms up with p - s - 1 forwards; interleaved follows Megatron's order", "[training][schedule]") {
  const int p = 4, m = 8;
  for (int s = 0; s < p; ++s) {
    const auto order = stage_schedule(Schedule::one_f_one_b, s, p, m, 1);
    int warmup = 0;
    while (order[std::size_t(warmup)].kind == PassKind::forward) ++warmup;
    CHECK(warmup == p - s - 1 + 1);  // the warm-up forwards, then the steady state's first forward
  }
  // Megatron-Core, p = 2, v = 2, m = 4, stage 0: four warm-up forwards over both chunks, then
  // one forward / one backward, backwards through the chunks in reverse.
  using K = PassKind;
  const std::vector<std::tuple<K, int, int>> expected{
      {K::forward, 0, 0},  {K::forward, 1, 0},  {K::forward, 0, 1},  {K::forward, 1, 1},
      {K::forward, 2, 0},  {K::backward, 0, 1}, {K::forward, 3, 0},  {K::backward, 1, 1},
      {K::forward, 2, 1},  {K::backward, 0, 0}, {K::forward, 3, 1},  {K::backward, 1, 0},
      {K::backward, 2, 1}, {K::backward, 3, 1}, {K::backward, 2, 0}, {K::backward, 3, 0}};
  const auto order = stage_schedule(Schedule::interleaved, 0, 2, 4, 2);
  REQUIRE(order.size() == expected.size());
  for (std::size_t i = 0; i < order.size(); ++i) {
    INFO("pass " << i);
    CHECK(std::tuple{order[i].kind, order[i].micro, order[i].chunk} == expected[i]);
  }
}

}  // namespace
}  // namespace cs::work
