// Every enumerated plan of a small model runs to completion, full and as one replica, with its
// breakdown adding up to the step (no stream order contradicts a dependency) and the shortcut
// equal to the full simulation.
#include "sim/compute/training_step.hpp"
#include "training_support.hpp"
#include "workloads/training_enumerate.hpp"

namespace cs::compute::test {
namespace {

const work::TransformerSpec kSmallMoe{.name = "small-moe", .layers = 4, .hidden = 256, .heads = 8, .kv_heads = 4,
                                      .ffn_hidden = 512, .mlp = work::MlpKind::swiglu, .seq_len = 256, .vocab = 1000,
                                      .tied_embeddings = true, .bias = false, .learned_positions = false,
                                      .moe = {.experts = 4, .top_k = 2, .dense_layers = 1}, .source = ""};

// Each plan simulated full and as one replica: returns how many steps ran.
std::size_t simulate_each(const std::vector<work::PlanCandidate>& plans) {
  testing::AlphaBetaConfig net;
  net.ranks_per_node = 4;
  net.intra_node = {1e-6, 100e9};
  net.inter_node = {5e-6, 10e9};
  std::size_t checked = 0;
  for (const auto& c : plans) {
    const auto& p = c.workload.parallel;
    INFO("tp " << p.tp << " pp " << p.pp << " dp " << p.dp << " cp " << p.cp << " ep " << p.ep << " zero " << p.zero
               << " " << work::to_string(p.schedule) << " v " << p.virtual_stages << " "
               << work::to_string(c.workload.recompute) << " sp " << p.sequence_parallel << " micro "
               << c.workload.batch.micro);
    double full_step = 0, full_bubble = 0;
    for (bool one : {false, true}) {
      engine::Simulator sim(1);
      testing::AlphaBetaComm comm(sim, 8, net);
      TrainingStepOptions o;
      o.graph.one_replica = one;
      o.executor.comm_compute_share = 0.1;
      const auto r = simulate_training_step(sim, comm, c.workload, *find_gpu("A100-80GB"), o);
      CHECK(r.step_time_s > 0);
      CHECK(r.compute_s + r.optimizer_s + r.exposed_comm_s + r.bubble_s == Approx(r.step_time_s).epsilon(1e-9));
      if (!one) {
        full_step = r.step_time_s, full_bubble = r.bubble_s;
      } else {  // the symmetry shortcut, on every plan
        CHECK(r.step_time_s == Approx(full_step).epsilon(1e-12));
        CHECK(r.bubble_s == Approx(full_bubble).epsilon(1e-9).margin(1e-15));
      }
      ++checked;
    }
  }
  return checked;
}

// [heavy]: every plan of the space, the point of the case; the sanitized ctest leaves it out and
// runs the next case's smaller space through the same simulation.
TEST_CASE("every enumerated plan of a small model simulates to completion", "[plans][heavy]") {
  work::PlanSpace space;
  space.micro_batches = {1, 2};
  space.max_cp = 2;
  space.both_sequence_parallel = true;
  const auto plans = work::enumerate_plans(kSmallMoe, 16, {8, 4}, 80e9, space);
  REQUIRE(plans.size() > 500);
  CHECK(simulate_each(plans) == 2 * plans.size());
}

TEST_CASE("every enumerated plan of micro-batch 1 simulates to completion", "[plans]") {
  work::PlanSpace space;
  space.micro_batches = {1};
  space.max_cp = 2;
  const auto plans = work::enumerate_plans(kSmallMoe, 16, {8, 4}, 80e9, space);
  REQUIRE(plans.size() > 50);
  CHECK(simulate_each(plans) == 2 * plans.size());
}

}  // namespace
}  // namespace cs::compute::test
