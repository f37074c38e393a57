// The symmetry shortcut (one expert-data-parallel replica simulated) equals the full
// simulation where replicas are symmetric: here the alpha-beta double, which has no contention.
#include "training_support.hpp"

namespace cs::compute::test {
namespace {

void check_same(const StepAnalysis& full, const StepAnalysis& one) {
  CHECK(one.step_time_s == Approx(full.step_time_s).epsilon(1e-12));
  CHECK(one.bubble_fraction == Approx(full.bubble_fraction).epsilon(1e-12).margin(1e-15));
  CHECK(one.compute_s == Approx(full.compute_s).epsilon(1e-12));
  CHECK(one.slowdown_s == Approx(full.slowdown_s).epsilon(1e-12).margin(1e-15));
  for (std::size_t i = 0; i < full.exposed_s.seconds.size(); ++i)
    CHECK(one.exposed_s.seconds[i] == Approx(full.exposed_s.seconds[i]).epsilon(1e-12).margin(1e-15));
}

void compare(const work::TrainingWorkload& w, double share) {
  testing::AlphaBetaConfig net;
  net.ranks_per_node = 4;
  net.intra_node = {1e-6, 100e9};
  net.inter_node = {5e-6, 10e9};
  ExecutorOptions ex;
  ex.comm_compute_share = share;
  work::GraphOptions full_graph, one, mirrored;
  full_graph.bucket_params = one.bucket_params = mirrored.bucket_params = 1e5;
  one.one_replica = mirrored.one_replica = true;
  one.mirror_replica_traffic = false;
  // Compute times from a plausible roofline-free scale: 1 ms per pass item.
  const PassTimes t{1e-3, 1e-3, 1e-3};
  auto a = run_step(w, {}, t, net, full_graph, ex);
  auto b = run_step(w, {}, t, net, one, ex);
  auto c = run_step(w, {}, t, net, mirrored, ex);
  REQUIRE(a->graph.workers.size() > b->graph.workers.size());
  check_accounting(a->analysis);
  INFO("shortcut without mirrored traffic");
  check_same(a->analysis, b->analysis);
  INFO("shortcut with mirrored traffic");
  check_same(a->analysis, c->analysis);
  // Mirrored, the double carries every collective and send of the full run.
  CHECK(c->comm->collectives_started() == a->comm->collectives_started());
  CHECK(c->comm->sends_started() == a->comm->sends_started());
}

TEST_CASE("simulating one data-parallel replica equals simulating all", "[symmetry]") {
  for (int zero : {0, 1, 3})
    for (double share : {0.0, 0.2}) {
      auto w = small_workload(2, 4, work::Schedule::one_f_one_b);
      w.parallel.tp = 2;
      w.parallel.dp = 4;
      w.parallel.zero = zero;
      w.parallel.sequence_parallel = true;
      w.batch = {16, 1};
      INFO("zero " << zero << " share " << share);
      compare(w, share);
    }
}

TEST_CASE("simulating one expert-data-parallel replica of an MoE plan equals all", "[symmetry]") {
  auto w = small_workload(2, 4, work::Schedule::zb_h1);
  w.model.moe = {.experts = 4, .top_k = 2};
  w.parallel.tp = 2;
  w.parallel.dp = 4;
  w.parallel.ep = 2;
  w.batch = {16, 1};
  compare(w, 0.1);
}

}  // namespace
}  // namespace cs::compute::test
