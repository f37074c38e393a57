// The executor's stream semantics on hand-built graphs, against hand-worked times.
#include <numeric>

#include "sim/network/comm_factory.hpp"
#include "sim/network/network.hpp"
#include "training_support.hpp"

namespace cs::compute::test {
namespace {

using work::Stream;
using work::TaskKind;

// One worker of ranks 0 .. ranks - 1 (default {0, 1}), one group of them all; tasks added in
// stream order.
struct Builder {
  work::TaskGraph g;
  std::vector<std::vector<uint32_t>> queues = std::vector<std::vector<uint32_t>>(work::kStreams);
  std::vector<std::vector<uint32_t>> preds;
  explicit Builder(int ranks = 2) {
    std::vector<int> all(static_cast<std::size_t>(ranks));
    std::iota(all.begin(), all.end(), 0);
    g.workers.push_back({0, 0, all});
    g.ranks = ranks;
    g.groups.push_back(all);
  }
  uint32_t compute(double seconds_item, std::vector<uint32_t> deps = {}) {
    g.compute_items.push_back({});
    times.push_back(seconds_item);
    return add(Stream::compute, TaskKind::forward, uint32_t(g.compute_items.size() - 1), std::move(deps));
  }
  uint32_t all_reduce(Stream s, double bytes, std::vector<uint32_t> deps = {}) {
    g.comm_items.push_back({{{work::CollectiveOp::all_reduce, bytes, 0}}});
    return add(s, TaskKind::collective, uint32_t(g.comm_items.size() - 1), std::move(deps));
  }
  uint32_t add(Stream s, TaskKind k, uint32_t item, std::vector<uint32_t> deps) {
    const uint32_t id = uint32_t(g.tasks.size());
    g.tasks.push_back({0, item, 0, 0, s, k});
    queues[std::size_t(s)].push_back(id);
    preds.push_back(std::move(deps));
    return id;
  }
  work::TaskGraph finish() {
    g.pred_begin = {0};
    for (auto& p : preds) {
      g.preds.insert(g.preds.end(), p.begin(), p.end());
      g.pred_begin.push_back(uint32_t(g.preds.size()));
    }
    g.stream_begin = {0};
    for (auto& q : queues) {
      g.stream_tasks.insert(g.stream_tasks.end(), q.begin(), q.end());
      g.stream_begin.push_back(uint32_t(g.stream_tasks.size()));
    }
    return g;
  }
  std::vector<double> times;
};

// A 2-rank all-reduce of S bytes at 1 GB/s, no latency, takes S / 1e9 seconds (min of ring
// 2 (n-1) S / (n B) = S / B and tree 2 S / B).
testing::AlphaBetaConfig one_gbps() {
  testing::AlphaBetaConfig c;
  c.inter_node = {0, 1e9};
  return c;
}

struct Ran {
  work::TaskGraph graph;
  std::vector<TaskTiming> timing;
};

Ran execute(Builder& b, double share = 0) {
  Ran r{b.finish(), {}};
  engine::Simulator sim(1);
  testing::AlphaBetaComm comm(sim, 2, one_gbps());
  TrainingExecutor ex(sim, comm, r.graph, b.times, {share});
  ex.start();
  sim.run();
  REQUIRE(ex.done());
  r.timing = ex.timings();
  return r;
}

TEST_CASE("a stream runs its tasks in order; a task waits for its dependencies", "[executor]") {
  Builder b;
  const uint32_t a = b.compute(1.0);
  const uint32_t ar = b.all_reduce(Stream::tp, 0.5e9, {a});    // 0.5 s, after a
  const uint32_t c = b.compute(2.0);                            // no dependency: right after a
  const uint32_t d = b.compute(1.0, {ar});                      // waits for the all-reduce
  const uint32_t gather = b.all_reduce(Stream::tp, 0.25e9);     // queued behind ar on its stream
  const Ran r = execute(b);
  CHECK(r.timing[a].end_s == Approx(1.0));
  CHECK(r.timing[ar].start_s == Approx(1.0));
  CHECK(r.timing[ar].end_s == Approx(1.5));
  CHECK(r.timing[c].start_s == Approx(1.0));
  CHECK(r.timing[c].end_s == Approx(3.0));
  CHECK(r.timing[d].ready_s == Approx(1.5));
  CHECK(r.timing[d].start_s == Approx(3.0));  // the compute stream was busy
  CHECK(r.timing[gather].ready_s == Approx(0.0));
  CHECK(r.timing[gather].start_s == Approx(1.5));
  CHECK(r.timing[gather].end_s == Approx(1.75));
}

TEST_CASE("communication overlapping compute slows it by its share of the GPU", "[executor]") {
  Builder b;
  const uint32_t a = b.compute(1.0);
  b.all_reduce(Stream::dp, 0.5e9);  // 0.5 s beside a
  const Ran r = execute(b, 0.2);
  // 0.5 s at 0.8 speed does 0.4 s of work; the remaining 0.6 s at full speed: ends at 1.1 s.
  CHECK(r.timing[a].end_s == Approx(1.1));
}

TEST_CASE("on a TPU slice a step's all-reduce over every chip is XLA's torus closed form", "[executor][torus]") {
  // A 4 x 4 torus of one chip per node (a v5e slice: 45 GB/s per ICI link each way), the
  // chip's NIC reaching its 4 links at once; no protocol costs.
  constexpr double kLinkBps = 45e9, kLatencyS = 0.5e-6, kBytes = 256e6;
  topo::TopologyParams p;
  p.kind = topo::TopologyKind::torus;
  p.dims = {4, 4};
  p.nodes = 16;
  p.node.gpus = p.node.nics = 1;
  p.node.nic_bandwidth_Bps = p.node.pcie_bandwidth_Bps = 4 * kLinkBps;
  p.node.pcie_latency_s = p.link_latency_s = kLatencyS;
  p.link_bandwidth_Bps = kLinkBps;
  const topo::Topology topology = topo::build_topology(p);
  engine::Simulator sim(1);
  net::Network network(sim, topology, topo::RoutingKind::dor);
  net::CommConfig config;
  config.protocol = net::Protocol::none;
  auto comm = net::make_comm(network, net::Placement::identity(16), config);
  Builder b(16);
  const uint32_t ar = b.all_reduce(Stream::dp, kBytes);
  const work::TaskGraph g = b.finish();
  TrainingExecutor ex(sim, *comm, g, b.times);
  ex.start();
  sim.run();
  REQUIRE(ex.done());
  // Per dimension a reduce-scatter and an all-gather, both ways round: 2 (3/4 + 3/16) S / (2 B),
  // plus 12 neighbour steps of PCIe, NIC, torus and NIC cables and PCIe again (ring: 2 x 15/16 S / B).
  const double expected = 2 * (3.0 / 4 + 3.0 / 16) * kBytes / (2 * kLinkBps) + 12 * 5 * kLatencyS;
  CHECK(ex.timings()[ar].end_s - ex.timings()[ar].start_s == Approx(expected).epsilon(1e-9));
}

TEST_CASE("a graph whose stream order contradicts its dependencies never finishes", "[executor]") {
  Builder b;
  const uint32_t later = 1;
  b.compute(1.0, {later});  // waits for the task queued behind it
  b.compute(1.0);
  work::TaskGraph g = b.finish();
  engine::Simulator sim(1);
  testing::AlphaBetaComm comm(sim, 2);
  TrainingExecutor ex(sim, comm, g, b.times);
  ex.start();
  sim.run();
  CHECK_FALSE(ex.done());
}

}  // namespace
}  // namespace cs::compute::test
