// Data-parallel gradient reduction overlaps the backward: long compute hides it, short compute
// exposes it, by the alpha-beta double's closed-form times.
#include "training_support.hpp"

namespace cs::compute::test {
namespace {

work::TrainingWorkload data_parallel() {
  auto w = small_workload(1, 1, work::Schedule::one_f_one_b, 1, 8);
  w.parallel.dp = 4;
  w.batch = {4, 1};
  return w;
}

struct DpTimes {
  double all = 0;   // every data-parallel task in turn
  double last = 0;  // the last bucket and the gradient-norm all-reduce
};

DpTimes dp_times(const StepRun& run) {
  DpTimes t;
  const auto& g = run.graph;
  std::vector<double> times;
  for (uint32_t id : g.stream(0, work::Stream::dp)) {
    double longest = 0;
    for (const auto& part : g.comm_items[g.tasks[id].item].parts)
      longest = std::max(longest, run.comm->op_time_s(g.groups[part.group], part.op, part.bytes));
    times.push_back(longest);
  }
  for (double x : times) t.all += x;
  t.last = times[times.size() - 2] + times.back();
  return t;
}

TEST_CASE("long compute hides data-parallel communication, short compute exposes it", "[overlap]") {
  testing::AlphaBetaConfig net;
  net.inter_node = {5e-6, 10e9};  // every rank its own node
  work::GraphOptions graph;
  graph.bucket_params = 5e4;  // a bucket a layer
  const auto w = data_parallel();

  auto long_run = run_step(w, {}, {1, 1, 1}, net, graph);
  const DpTimes t = dp_times(*long_run);
  REQUIRE(long_run->graph.stream(0, work::Stream::dp).size() > 3);
  check_accounting(long_run->analysis);
  // Every bucket but the last (closed after the last layer's gradients) ran under the backward.
  CHECK(long_run->analysis.exposed_s[work::Stream::dp] == Approx(t.last).epsilon(1e-9));
  CHECK(long_run->analysis.exposed_s[work::Stream::dp] < 0.5 * t.all);

  auto short_run = run_step(w, {}, {0, 0, 0}, net, graph);
  check_accounting(short_run->analysis);
  // No compute to hide behind: the step is the data-parallel stream, end to end.
  CHECK(short_run->analysis.exposed_s[work::Stream::dp] == Approx(t.all).epsilon(1e-9));
  CHECK(short_run->analysis.step_time_s == Approx(t.all).epsilon(1e-9));
}

}  // namespace
}  // namespace cs::compute::test
