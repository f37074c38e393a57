#pragma once
// Shared by the network tests: small fabrics, hand-built plans, a flow observer, and a
// by-hand run of a plan in the flow model (a reference independent of CollectiveRun).
#include <map>
#include <numeric>
#include <utility>
#include <vector>

#include <catch2/catch.hpp>

#include "sim/engine/simulator.hpp"
#include "sim/network/collective_costs.hpp"
#include "sim/network/comm_factory.hpp"
#include "sim/network/network.hpp"
#include "topology/topology.hpp"
#include "workloads/collective_plan.hpp"

namespace cs::test {

inline constexpr auto kNvlink = static_cast<std::size_t>(net::TransferClass::nvlink);

// Records when each flow (by its tag) finished.
struct FlowsDone final : net::FlowObserver {
  explicit FlowsDone(engine::Simulator& s) : sim(s) {}
  void on_flow_done(net::FlowId, uint64_t tag) override { at[tag] = sim.now(); }
  engine::Simulator& sim;
  std::map<uint64_t, double> at;
};

// A topology with its network, kept alive together.
struct Fabric {
  explicit Fabric(const topo::TopologyParams& p)
      : topology(topo::build_topology(p)),
        sim(1),
        network(sim, topology,
                p.kind == topo::TopologyKind::fat_tree ? topo::RoutingKind::dmodk
                                                       : topo::RoutingKind::shortest) {}
  topo::Topology topology;
  engine::Simulator sim;
  net::Network network;
};

inline topo::TopologyParams nvswitch_node() {
  topo::TopologyParams p;
  p.kind = topo::TopologyKind::single_node;
  p.node.gpus = 8;
  p.node.gpu_bandwidth_Bps = 450e9;
  p.node.gpu_latency_s = 0.7e-6;
  return p;
}

// 4 nodes of 2 GPUs and 2 NICs, one leaf per rail (radix 8: 4 NIC ports, 4 up-ports).
inline topo::TopologyParams rail_fat_tree() {
  topo::TopologyParams p;
  p.kind = topo::TopologyKind::fat_tree;
  p.nodes = 4;
  p.node.gpus = 2;
  p.node.nics = 2;
  p.node.nic_bandwidth_Bps = 50e9;
  p.node.pcie_bandwidth_Bps = 64e9;
  p.link_bandwidth_Bps = 50e9;
  p.switch_radix = 8;
  p.rail_optimized = true;
  return p;
}

// One pipelined ring all-reduce over `ranks` in order: 2(n-1) steps, each edge carrying
// 2(n-1)/n of S.
inline work::Stage ring_all_reduce(const std::vector<int>& ranks) {
  const int n = static_cast<int>(ranks.size());
  work::Stage st;
  st.name = "ring all_reduce";
  st.steps = 2 * (n - 1);
  for (int i = 0; i < n; ++i)
    st.transfers.push_back({ranks[i], ranks[(i + 1) % n], 2.0 * (n - 1) / n, 0});
  return st;
}

inline work::CollectivePlan ring_plan(const std::vector<int>& ranks) {
  work::CollectivePlan plan;
  plan.ranks = ranks;
  plan.stages.push_back(ring_all_reduce(ranks));
  return plan;
}

inline std::vector<int> first_ranks(int n) {
  std::vector<int> r(n);
  std::iota(r.begin(), r.end(), 0);
  return r;
}

inline net::CollectiveCosts some_costs(double efficiency = 1.0) {
  net::CollectiveCosts c;
  c.base_latency_s = 5e-6;
  c.step_latency_s = {1e-6, 2e-6, 4e-6};
  c.bandwidth_efficiency = efficiency;
  return c;
}

// Runs a plan in the flow model, by hand: stages one after another; a chain is one flow on
// the chained route, an independent transfer one flow on its own route; every flow waits out
// the stage latency (and the first stage the base latency) before it takes bandwidth.
class FlowRun final : public net::FlowObserver {
 public:
  FlowRun(net::Network& network, const work::CollectivePlan& plan, double bytes,
          const net::CollectiveCosts& costs)
      : network_(network), plan_(plan), bytes_(bytes), costs_(costs) {}

  void start() { start_stage(costs_.base_latency_s); }
  double done_at() const { return done_at_; }

  void on_flow_done(net::FlowId, uint64_t) override {
    if (--outstanding_ > 0) return;
    if (++stage_ < plan_.stages.size()) {
      start_stage(0);
    } else {
      done_at_ = network_.sim().now();
    }
  }

 private:
  void start_stage(double extra_s) {
    const work::Stage& st = plan_.stages[stage_];
    const double latency = net::stage_latency_s(network_, st, costs_) + extra_s;
    const double scale = bytes_ / costs_.bandwidth_efficiency;
    std::map<int32_t, std::vector<std::pair<int, int>>> chains;
    std::map<int32_t, double> chain_share;
    outstanding_ = 0;
    st.for_each([&](const work::Transfer& t) {
      if (t.chain >= 0) {
        chains[t.chain].emplace_back(t.src, t.dst);
        chain_share[t.chain] = t.share;
        return;
      }
      const double wire = network_.route(t.src, t.dst).latency_s;
      ++outstanding_;
      network_.flows().start(network_.path(t.src, t.dst), t.share * scale, this, 0, latency - wire);
    });
    for (const auto& [id, pairs] : chains) {
      ++outstanding_;
      network_.flows().start(network_.chain_path(pairs), chain_share[id] * scale, this, 0, latency);
    }
  }

  net::Network& network_;
  const work::CollectivePlan& plan_;
  double bytes_;
  net::CollectiveCosts costs_;
  std::size_t stage_ = 0, outstanding_ = 0;
  double done_at_ = -1;
};

inline double flow_time(const topo::TopologyParams& p, const work::CollectivePlan& plan, double bytes,
                 const net::CollectiveCosts& costs) {
  Fabric f(p);
  FlowRun run(f.network, plan, bytes, costs);
  run.start();
  f.sim.run();
  REQUIRE(run.done_at() > 0);
  return run.done_at();
}

// Seconds one collective of `bytes` over `ranks` (every rank when empty) takes on `topology`
// under `routing`, run through the communication layer with `config`.
inline double collective_seconds(const topo::Topology& topology, topo::RoutingKind routing,
                                 const net::CommConfig& config, work::CollectiveOp op,
                                 work::CollectiveAlgorithm algorithm, double bytes,
                                 std::vector<int> ranks = {}) {
  engine::Simulator sim(1);
  net::Network network(sim, topology, routing);
  auto comm = net::make_comm(network, net::Placement::identity(topology.ranks()), config);
  if (ranks.empty()) {
    ranks.resize(static_cast<std::size_t>(topology.ranks()));
    std::iota(ranks.begin(), ranks.end(), 0);
  }
  net::CollectiveOptions options;
  options.algorithm = algorithm;
  double done = -1;
  comm->collective(comm->group(ranks), op, bytes, [&] { done = sim.now(); }, options);
  sim.run();
  return done;
}

}  // namespace cs::test
