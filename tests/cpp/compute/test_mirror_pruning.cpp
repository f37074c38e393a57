// Under the one-replica shortcut, other replicas' traffic that lies alone in a star node is
// not issued: the step is the same to the last bit, on the flow network.
#include "sim/compute/replica_symmetry.hpp"
#include "sim/compute/training_step.hpp"
#include "sim/network/comm_factory.hpp"
#include "topology/topology.hpp"
#include "training_support.hpp"
#include "workloads/training_placement.hpp"

namespace cs::compute::test {
namespace {

// tp 8 fills a DGX-like node; pp 2 and dp 2 across 4 nodes (rank = tp + 8 dp + 16 pp).
work::TrainingWorkload wide_tp() {
  auto w = small_workload(2, 4, work::Schedule::one_f_one_b);
  w.model.heads = 8;
  w.model.kv_heads = 8;
  w.parallel.tp = 8;
  w.parallel.dp = 2;
  w.parallel.zero = 1;
  w.parallel.sequence_parallel = true;
  w.batch = {8, 1};
  return w;
}

topo::TopologyParams dgx_fat_tree(int nodes) { return small_fat_tree(nodes, 8); }

TrainingResult step(const work::TrainingWorkload& w, bool prune, uint64_t* transfers) {
  const topo::Topology topology = topo::build_topology(dgx_fat_tree(4));
  engine::Simulator sim(1);
  net::Network network(sim, topology, topo::RoutingKind::dmodk);
  const auto gpus = work::RankLayout(w.parallel).gpu_of_rank();
  auto comm = net::make_comm(network, net::Placement(gpus, topology.ranks()), {});
  TrainingStepOptions o;
  o.graph.one_replica = true;
  if (prune) {
    o.gpu_of_rank = gpus;
    o.node = {8, true};
  }
  auto r = simulate_training_step(sim, *comm, w, *find_gpu("H100-SXM"), o);
  *transfers = comm->transfers_completed();
  return r;
}

TEST_CASE("another replica's tensor-parallel groups alone in their nodes are left out", "[symmetry][pruning]") {
  const auto w = wide_tp();
  work::GraphOptions go;
  go.one_replica = true;
  const auto g = work::build_training_graph(w, go);
  const auto flags = isolated_mirrored_groups(w, g, work::RankLayout(w.parallel).gpu_of_rank(), {8, true});
  std::size_t tp_groups = 0, flagged = 0;
  for (std::size_t i = 0; i < g.groups.size(); ++i) {
    const auto& group = g.groups[i];
    const bool replica1_tp = group.size() == 8 && group.front() % 16 == 8 && group.back() == group.front() + 7;
    tp_groups += replica1_tp;
    flagged += flags[i];
    CHECK(bool(flags[i]) == replica1_tp);  // nothing else: pipeline pairs and DP groups span nodes
  }
  CHECK(tp_groups == 2);  // replica 1's two stages
  CHECK(flagged == 2);
  // A node whose fabric is not a star: nothing is left out.
  for (auto f : isolated_mirrored_groups(w, g, work::RankLayout(w.parallel).gpu_of_rank(), {8, false})) CHECK(f == 0);
}

TEST_CASE("leaving isolated mirrored traffic out changes no time", "[symmetry][pruning]") {
  uint64_t all = 0, pruned = 0;
  const auto a = step(wide_tp(), false, &all);
  const auto b = step(wide_tp(), true, &pruned);
  CHECK(pruned < all);
  CHECK(b.step_time_s == a.step_time_s);
  CHECK(b.bubble_s == a.bubble_s);
  CHECK(b.exposed_by_group.seconds == a.exposed_by_group.seconds);
}

}  // namespace
}  // namespace cs::compute::test
