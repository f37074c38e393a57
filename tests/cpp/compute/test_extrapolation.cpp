// The steady-state extrapolation of a step in its micro-batches equals the full simulation on
// the flow network for every schedule and ZeRO stage (within 0.3% for ZeRO-3 under gpipe and
// ZB-H1); and the contention-free screening layer gives a lower bound of the step.
#include "sim/compute/alone_time_comm.hpp"
#include "sim/compute/step_extrapolation.hpp"
#include "sim/network/comm_factory.hpp"
#include "topology/topology.hpp"
#include "training_support.hpp"
#include "workloads/training_placement.hpp"

namespace cs::compute::test {
namespace {

topo::TopologyParams two_tier(int nodes) {
  topo::TopologyParams p;
  p.kind = topo::TopologyKind::fat_tree;
  p.nodes = nodes;
  p.switch_radix = 8;
  p.node.gpus = 4;
  p.node.nics = 4;
  p.node.gpu_bandwidth_Bps = 370.8e9;
  p.node.gpu_latency_s = 0.3e-6;
  p.node.nic_bandwidth_Bps = 50e9;
  p.link_bandwidth_Bps = 50e9;
  return p;
}

// One step of `w` on 4 nodes of 4 GPUs, on the flow network, or contention-free.
TrainingResult run(const work::TrainingWorkload& w, bool alone = false) {
  const topo::Topology topology = topo::build_topology(two_tier(4));
  engine::Simulator sim(1);
  net::Network network(sim, topology, topo::RoutingKind::dmodk);
  auto flow = net::make_comm(network, net::Placement(work::RankLayout(w.parallel).gpu_of_rank(), topology.ranks()), {});
  AloneTimeComm screening(sim, *flow);
  net::Comm& comm = alone ? static_cast<net::Comm&>(screening) : *flow;
  return simulate_training_step(sim, comm, w, *find_gpu("H100-SXM"));
}

work::TrainingWorkload plan(work::Schedule schedule, int zero) {
  auto w = small_workload(2, 4, schedule, schedule == work::Schedule::interleaved ? 2 : 1);
  w.model.hidden = 512;
  w.model.heads = 8;
  w.model.kv_heads = 8;
  w.model.ffn_hidden = 2048;
  w.model.seq_len = 256;
  w.parallel.tp = 2;
  w.parallel.dp = 4;
  w.parallel.zero = zero;
  w.parallel.sequence_parallel = true;
  return with_micro_batches(w, 16);  // 8 pp
}

TEST_CASE("a step extrapolated from 2 pp and 3 pp micro-batches equals the whole step", "[extrapolation]") {
  for (auto schedule : {work::Schedule::gpipe, work::Schedule::one_f_one_b, work::Schedule::interleaved,
                        work::Schedule::zb_h1})
    for (int zero : {0, 1, 2, 3}) {
      const auto w = plan(schedule, zero);
      const auto points = extrapolation_points(w);
      REQUIRE(points);
      CHECK(points->a == (schedule == work::Schedule::interleaved ? 4 : 2));
      CHECK(points->b == points->a + 2);
      const auto full = run(w);
      const auto at_a = run(with_micro_batches(w, points->a));
      const auto at_b = run(with_micro_batches(w, points->b));
      const auto x = extrapolate_step(w, *points, at_a, at_b, *find_gpu("H100-SXM"), {});
      INFO(work::to_string(schedule) << " ZeRO " << zero);
      // ZeRO-3's per-layer gathers under gpipe and ZB-H1 meet the pipeline's traffic a little
      // differently from one micro-batch to the next: there the line is off by 0.11% and 0.30%.
      const bool approximate = zero == 3 && (schedule == work::Schedule::gpipe || schedule == work::Schedule::zb_h1);
      if (approximate) {
        CHECK(x.step_time_s == Approx(full.step_time_s).epsilon(0.004));
        continue;
      }
      CHECK(x.step_time_s == Approx(full.step_time_s).epsilon(1e-9));
      CHECK(x.compute_s == Approx(full.compute_s).epsilon(1e-9));
      CHECK(x.bubble_s == Approx(full.bubble_s).epsilon(1e-9).margin(1e-12));
      for (std::size_t i = 0; i < x.exposed_by_group.seconds.size(); ++i)
        CHECK(x.exposed_by_group.seconds[i] == Approx(full.exposed_by_group.seconds[i]).epsilon(1e-9).margin(1e-12));
      CHECK(x.tokens_per_s == Approx(full.tokens_per_s).epsilon(1e-9));
      CHECK(x.mfu == Approx(full.mfu).epsilon(1e-9));
      CHECK(x.memory_per_gpu_bytes == full.memory_per_gpu_bytes);
      for (std::size_t i = 0; i < x.ops.size(); ++i) CHECK(x.ops[i].seconds == Approx(full.ops[i].seconds).epsilon(1e-9));
    }
  // Few micro-batches: simulate the step whole.
  CHECK_FALSE(extrapolation_points(with_micro_batches(plan(work::Schedule::one_f_one_b, 1), 6)));
}

TEST_CASE("contention-free screening is a lower bound of the step on the network", "[extrapolation][screening]") {
  for (int zero : {0, 1, 3}) {
    const auto w = plan(work::Schedule::one_f_one_b, zero);
    const auto network = run(w);
    const auto screened = run(w, true);
    INFO("ZeRO " << zero);
    CHECK(screened.step_time_s <= network.step_time_s * (1 + 1e-12));
    CHECK(screened.compute_s == Approx(network.compute_s));
    CHECK(screened.step_time_s > 0.8 * network.step_time_s);  // the same step, less contention
  }
}

}  // namespace
}  // namespace cs::compute::test
