// The step's lower bound without a simulation (compute/step_bound.hpp): with instant transfers
// and no slowdown it is the simulated step itself; with transfers that take time and compute
// slowed beside them it stays below the step; from the graph of the first extrapolation point
// it bounds the longer step too.
#include "sim/compute/step_bound.hpp"
#include "sim/compute/step_extrapolation.hpp"
#include "training_support.hpp"

namespace cs::compute::test {
namespace {

work::TrainingWorkload bounded_plan(work::Schedule schedule, int zero) {
  auto w = small_workload(4, 16, schedule, schedule == work::Schedule::interleaved ? 2 : 1);
  w.parallel.dp = 2;
  w.parallel.zero = zero;
  return with_micro_batches(w, 16);
}

TEST_CASE("step bound: the step itself with instant transfers, below it when they take time", "[training][bound]") {
  using S = work::Schedule;
  const PassTimes pass{1.0, 0.7, 0.5};
  for (S schedule : {S::gpipe, S::one_f_one_b, S::interleaved, S::zb_h1})
    for (int zero : {0, 3}) {
      INFO("schedule " << int(schedule) << ", ZeRO " << zero);
      const work::TrainingWorkload w = bounded_plan(schedule, zero);
      const auto instant = run_step(w, {}, pass);  // the alpha-beta double's defaults: transfers take no time
      const std::vector<double> times = uniform_times(instant->graph, pass);
      const StepBound whole = step_time_lower_bound(instant->graph, times, 16);
      CHECK(whole.step_time_s == Approx(instant->analysis.step_time_s).epsilon(1e-12));
      CHECK(whole.compute_s == Approx(instant->analysis.compute_s).epsilon(1e-12));

      // Transfers with latency and bandwidth, compute slowed while they run: the step is longer.
      testing::AlphaBetaConfig wire;
      wire.intra_node = {0.1, 1e6};
      wire.inter_node = {0.1, 1e6};
      ExecutorOptions slowed;
      slowed.comm_compute_share = 0.16;
      const auto timed = run_step(w, {}, pass, wire, {}, slowed);
      CHECK(whole.step_time_s <= timed->analysis.step_time_s);
      CHECK(timed->analysis.step_time_s > 1.01 * whole.step_time_s);  // the transfers do cost time here

      // From the graph of the first extrapolation point: the same work, a bound no higher.
      const auto points = extrapolation_points(w);
      REQUIRE(points);
      const work::TaskGraph short_graph = work::build_training_graph(with_micro_batches(w, points->a));
      const StepBound from_short = step_time_lower_bound(short_graph, uniform_times(short_graph, pass), 16);
      CHECK(from_short.compute_s == Approx(whole.compute_s).epsilon(1e-12));
      CHECK(from_short.step_time_s <= whole.step_time_s * (1 + 1e-12));
      CHECK(from_short.step_time_s >= whole.compute_s);
    }
}

}  // namespace
}  // namespace cs::compute::test
