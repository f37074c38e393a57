#include "sim/scenario/run_collective.hpp"

#include <algorithm>
#include <functional>
#include <limits>
#include <map>
#include <memory>

#include "sim/network/analytical_model.hpp"
#include "sim/network/collective_run.hpp"
#include "sim/network/fluid_traffic.hpp"
#include "sim/network/ring_collective.hpp"
#include "sim/network/stage_fluid.hpp"
#include "sim/network/traffic_run.hpp"
#include "sim/scenario/input_error.hpp"
#include "sim/scenario/nccl_tuning.hpp"
#include "workloads/collective_plan.hpp"

namespace cs::scenario::detail {

using nlohmann::json;
using work::CollectiveAlgorithm;

std::vector<Protocol> collective_protocols(const Config& config) {
  const std::string& p = config.network.protocol;
  if (p == "none") return {{"none", {}}};
  std::vector<Protocol> all;
  for (const char* name : {"ll", "ll128", "simple"})
    if (p == "auto" || p == name) all.push_back({name, nccl_costs(name)});
  // In NVSwitch nodes that reduce, in_network runs at NVLS's share of the NVLink bandwidth.
  if (config.in_network.nvls)
    for (Protocol& protocol : all)
      protocol.costs[CollectiveAlgorithm::in_network].bandwidth_efficiency *= nccl_nvls_efficiency(config.gpu.arch);
  return all;
}

namespace {

constexpr int kMaxAutoDirectRanks = 64;

// The plans of one collective spec: per algorithm, one per communicator group, built when
// first asked for. Plans never move once built (runs and routed plans refer to them).
class PlanSet {
 public:
  PlanSet(const work::CollectiveSpec& spec, const topo::Topology& topology, const InNetworkConfig& in_network,
          std::string at)
      : spec_(spec), at_(std::move(at)), in_network_(in_network) {
    for (const auto& ranks : work::collective_groups(spec, topology.ranks())) {
      work::GroupLayout layout{ranks, {}, spec.channels > 0 ? spec.channels : topology.nics_per_node()};
      for (int r : ranks) layout.node_of.push_back(topology.node_of_rank(r));
      layouts_.push_back(std::move(layout));
    }
  }
  std::size_t groups() const { return layouts_.size(); }
  int group_size() const { return static_cast<int>(layouts_.front().ranks.size()); }
  const work::CollectiveSpec& spec() const { return spec_; }

  // Throws InputError at <at>.algorithm when the algorithm has no plan for this op or group.
  const std::vector<work::CollectivePlan>& plans(CollectiveAlgorithm a) {
    auto it = plans_.find(a);
    if (it != plans_.end()) return it->second;
    if (a == CollectiveAlgorithm::in_network) check_in_network();
    std::vector<work::CollectivePlan> built;
    try {
      for (const auto& layout : layouts_) built.push_back(work::make_plan(spec_.op, a, layout));
    } catch (const work::PlanError& e) {
      throw InputError(at_ + ".algorithm", std::string(work::to_string(a)) + " " +
                                               std::string(work::to_string(spec_.op)) + ": " + e.what());
    }
    return plans_.emplace(a, std::move(built)).first->second;
  }
  // The algorithms with a plan for every group (auto chooses among them), in_network too
  // where the fabric reduces.
  std::vector<CollectiveAlgorithm> candidates() {
    std::vector<CollectiveAlgorithm> out;
    auto all = work::algorithms_for(spec_.op);
    all.push_back(CollectiveAlgorithm::in_network);
    for (CollectiveAlgorithm a : all) {
      // Direct all-pairs is n^2 transfers; like NCCL, offer it beyond all-to-all and
      // send/recv only to small groups.
      const bool p2p = spec_.op == work::CollectiveOp::all_to_all || spec_.op == work::CollectiveOp::send_recv;
      if (a == CollectiveAlgorithm::direct && !p2p && group_size() > kMaxAutoDirectRanks) continue;
      if (a == CollectiveAlgorithm::in_network && !in_network_allowed()) continue;
      try {
        plans(a);
        out.push_back(a);
      } catch (const InputError&) {
      }
    }
    return out;
  }

 private:
  // in_network needs NVLS for ranks that share a node and SHARP for ranks on several nodes.
  std::pair<bool, bool> spans() const {  // (some group spans several nodes, some shares a node)
    bool several_nodes = false, shared_node = false;
    for (const auto& layout : layouts_) {
      std::map<int, int> per_node;
      for (int node : layout.node_of) ++per_node[node];
      several_nodes |= per_node.size() > 1;
      for (const auto& [node, count] : per_node) shared_node |= count > 1;
    }
    return {several_nodes, shared_node};
  }
  bool in_network_allowed() const {
    const auto [several_nodes, shared_node] = spans();
    return (!shared_node || in_network_.nvls) && (!several_nodes || in_network_.sharp);
  }
  void check_in_network() const {
    const auto [several_nodes, shared_node] = spans();
    if (shared_node && !in_network_.nvls)
      throw InputError(at_ + ".algorithm", "in_network: ranks share a node, and its fabric does not reduce (NVLS)",
                       "set hardware.node.nvls to true (NVSwitch nodes)");
    if (several_nodes && !in_network_.sharp)
      throw InputError(at_ + ".algorithm", "in_network: ranks on several nodes need the fabric's switches to reduce (SHARP)",
                       "set topology.sharp to true");
  }

  const work::CollectiveSpec& spec_;
  std::string at_;
  InNetworkConfig in_network_;
  std::vector<work::GroupLayout> layouts_;
  std::map<CollectiveAlgorithm, std::vector<work::CollectivePlan>> plans_;
};

// NCCL's tuner, with the analytical model as its cost model: for this size, the fastest
// (algorithm, protocol) among the candidates (ties: the first, in algorithms_for order and
// the protocol list's). A fixed algorithm and protocol need no estimate. Choosing records no
// link loads (AnalyticalModel::time_s).
struct Pick {
  CollectiveAlgorithm algorithm;
  const Protocol* protocol;
  const net::CollectiveCosts& costs() const { return protocol->costs[algorithm]; }
};

class Tuner {
 public:
  Tuner(net::Network& network, PlanSet& plans, const std::vector<Protocol>& protocols)
      : network_(network), plans_(plans), protocols_(protocols) {}
  Pick choose(double bytes, CollectiveAlgorithm requested) {
    const bool any_algorithm = requested == CollectiveAlgorithm::automatic;
    if (!any_algorithm && protocols_.size() == 1) return {requested, &protocols_.front()};
    std::vector<CollectiveAlgorithm> algorithms = any_algorithm ? plans_.candidates() : std::vector{requested};
    if (algorithms.empty()) throw InputError("workload.algorithm", "no algorithm has a plan for this op and group");
    Pick best{algorithms.front(), &protocols_.front()};
    double best_t = std::numeric_limits<double>::infinity();
    for (CollectiveAlgorithm a : algorithms)
      for (const Protocol& p : protocols_) {
        const double t = net::AnalyticalModel::time_s(routed(a), bytes, p.costs[a]);
        if (t < best_t) best_t = t, best = {a, &p};
      }
    return best;
  }

 private:
  const net::RoutedPlan& routed(CollectiveAlgorithm a) {
    auto& r = routed_[a];
    if (!r) r = std::make_unique<net::RoutedPlan>(network_, plans_.plans(a).front());
    return *r;
  }
  net::Network& network_;
  PlanSet& plans_;
  const std::vector<Protocol>& protocols_;
  std::map<CollectiveAlgorithm, std::unique_ptr<net::RoutedPlan>> routed_;
};

// The protocol the collective ran with: NVLS and SHARP run Simple whatever was asked for.
std::string protocol_label(const Pick& pick) {
  if (pick.protocol->name == "none") return "none";
  const std::string pinned = nccl_pinned_protocol(pick.algorithm);
  return pinned.empty() ? pick.protocol->name : pinned;
}

json result_row(const PlanSet& plans, CollectiveAlgorithm requested, const Pick& pick, double bytes, double time_s,
               double fastest_group_s) {
  const double algbw = bytes / time_s;
  json row = {{"bytes", bytes},
              {"time_s", time_s},
              {"algbw_GBps", algbw / 1e9},
              {"busbw_GBps", algbw * work::busbw_factor(plans.spec().op, plans.group_size()) / 1e9},
              {"algorithm", std::string(work::to_string(pick.algorithm))},
              {"requested_algorithm", std::string(work::to_string(requested))},
              {"protocol", protocol_label(pick)}};
  if (plans.groups() > 1) row["fastest_group_time_s"] = fastest_group_s;
  return row;
}

json block(const PlanSet& plans, json results) {
  const auto& algs = plans.spec().algorithms;
  json algorithm = std::string(work::to_string(algs.front()));
  if (algs.size() > 1) {
    algorithm = json::array();
    for (auto a : algs) algorithm.push_back(std::string(work::to_string(a)));
  }
  return {{"op", std::string(work::to_string(plans.spec().op))},
          {"algorithm", algorithm},
          {"ranks", plans.group_size()},
          {"groups", plans.groups()},
          {"results", std::move(results)}};
}

// ---- The network model ----

// Background traffic, in either model: started once, counted when done.
class TrafficJob {
 public:
  virtual ~TrafficJob() = default;
  virtual void start() = 0;
  virtual std::size_t flows() const = 0;
  virtual std::size_t completed() const = 0;
};

template <class Run>
class TrafficJobOf final : public TrafficJob {
 public:
  template <class... Args>
  explicit TrafficJobOf(Args&&... args) : run_(std::forward<Args>(args)...) {}
  void start() override { run_.start(); }
  std::size_t flows() const override { return run_.flows(); }
  std::size_t completed() const override { return run_.completed(); }

 private:
  Run run_;
};

// What network.model selects: plans run on the flow model (CollectiveRun) or on the analytical
// model's stage fluid (FluidCollectiveRun), and so does background traffic.
class ModelBackend {
 public:
  ModelBackend(const Config& config, net::Network& network) : network_(network) {
    if (config.network.model == NetworkModel::analytical)
      fluid_ = std::make_unique<net::StageFluid>(network);
  }
  std::unique_ptr<net::CollectiveRunner> runner(const work::CollectivePlan& plan) {
    if (fluid_) return std::make_unique<net::FluidCollectiveRun>(*fluid_, network_, plan);
    return std::make_unique<net::CollectiveRun>(network_, plan);
  }
  std::unique_ptr<TrafficJob> traffic(const std::vector<work::FlowSpec>& flows) {
    if (fluid_) return std::make_unique<TrafficJobOf<net::FluidTraffic>>(*fluid_, network_, flows);
    return std::make_unique<TrafficJobOf<net::TrafficRun>>(network_, flows);
  }
  LinkUsage usage() const {
    if (!fluid_) return flow_model_usage(network_);
    LinkUsage u;
    u.elapsed_s = network_.sim().now();
    u.bytes = fluid_->link_bytes();
    u.busy_s = fluid_->link_busy_s();
    return u;
  }

 private:
  net::Network& network_;
  std::unique_ptr<net::StageFluid> fluid_;
};

// The background workloads: collectives repeat their sizes back to back until stop(); traffic
// runs once.
class Background {
 public:
  Background(const Config& config, ModelBackend& model, net::Network& network, const std::vector<Protocol>& protocols)
      : sim_(network.sim()) {
    for (std::size_t i = 0; i < config.background.size(); ++i) {
      const auto& b = config.background[i];
      if (b.kind == WorkloadKind::traffic) {
        traffic_.push_back(model.traffic(work::expand_traffic(b.traffic, network.ranks())));
        continue;
      }
      auto loop = std::make_unique<Loop>(b.collective, network.topology(), config.in_network,
                                         "workload.background." + std::to_string(i));
      for (const auto& plan : loop->plans.plans(b.collective.algorithms.front()))
        loop->runs.push_back(model.runner(plan));
      loop->tuner = std::make_unique<Tuner>(network, loop->plans, protocols);
      loop->next.assign(loop->runs.size(), 0);
      loops_.push_back(std::move(loop));
    }
  }
  void start() {
    for (auto& t : traffic_) t->start();
    for (auto& loop : loops_)
      for (std::size_t g = 0; g < loop->runs.size(); ++g) launch(*loop, g);
  }
  void stop() { stopped_ = true; }
  json summary() const {
    json out = json::array();
    for (const auto& loop : loops_)
      out.push_back({{"kind", "collective"},
                     {"op", std::string(work::to_string(loop->plans.spec().op))},
                     {"groups", loop->runs.size()},
                     {"completed", loop->completed},
                     {"mean_time_s", loop->completed ? loop->time_sum / loop->completed : 0.0}});
    for (const auto& t : traffic_)
      out.push_back({{"kind", "traffic"}, {"flows", t->flows()}, {"completed", t->completed()}});
    return out;
  }

 private:
  struct Loop {
    Loop(const work::CollectiveSpec& spec, const topo::Topology& topology, const InNetworkConfig& in_network,
         std::string at)
        : plans(spec, topology, in_network, std::move(at)) {}
    PlanSet plans;
    std::unique_ptr<Tuner> tuner;  // the protocol, when network.protocol is auto
    std::vector<std::unique_ptr<net::CollectiveRunner>> runs;
    std::vector<std::size_t> next;  // per group: index of the next size
    uint64_t completed = 0;
    double time_sum = 0;
  };
  void launch(Loop& loop, std::size_t g) {
    const auto& sizes = loop.plans.spec().sizes_bytes;
    const double bytes = sizes[loop.next[g]++ % sizes.size()];
    const double t0 = sim_.now();
    const Pick pick = loop.tuner->choose(bytes, loop.plans.spec().algorithms.front());
    loop.runs[g]->start(bytes, pick.costs(), [this, &loop, g, t0] {
      ++loop.completed;
      loop.time_sum += sim_.now() - t0;
      if (!stopped_) launch(loop, g);
    });
  }
  engine::Simulator& sim_;
  std::vector<std::unique_ptr<Loop>> loops_;
  std::vector<std::unique_ptr<TrafficJob>> traffic_;
  bool stopped_ = false;
};

// The textbook ring all-reduce (network.granularity "step", flow model): every rank's every
// step its own flow, one ring per channel of the plan, each with its share of the bytes.
std::vector<std::unique_ptr<net::RingAllReduce>> start_step_rings(net::Network& network, const work::CollectivePlan& plan,
                                                                  double bytes, const net::CollectiveCosts& costs,
                                                                  const std::function<void()>& finished) {
  std::map<int32_t, std::vector<const work::Transfer*>> chains;
  for (const work::Transfer& t : plan.stages.front().transfers) chains[t.chain].push_back(&t);
  auto left = std::make_shared<std::size_t>(chains.size());
  std::vector<std::unique_ptr<net::RingAllReduce>> rings;
  for (const auto& [chain, edges] : chains) {
    std::vector<int> members;
    for (const work::Transfer* t : edges) members.push_back(t->src);  // edges in ring order
    // A chain's share is 2(n-1)/n of its part of S: its part is share x n / (2(n-1)).
    const double n = static_cast<double>(members.size());
    const double part = edges.front()->share * n / (2 * (n - 1));
    rings.push_back(std::make_unique<net::RingAllReduce>(network, members, bytes * part, [left, finished] {
      if (--*left == 0) finished();
    }, costs));
  }
  for (auto& r : rings) r->start();
  return rings;
}

}  // namespace

LinkUsage flow_model_usage(net::Network& network) {
  LinkUsage u;
  u.elapsed_s = network.sim().now();
  u.bytes = network.flows().link_bytes();
  u.busy_s = network.flows().link_busy_s();
  u.peak_utilization = network.flows().link_peak_utilization();
  return u;
}

json run_collective(const Config& config, engine::Simulator& sim, net::Network& network, LinkUsage* usage) {
  const auto protocols = collective_protocols(config);
  ModelBackend model(config, network);
  PlanSet plans(config.collective, network.topology(), config.in_network, "workload");
  Tuner tuner(network, plans, protocols);
  const bool step = config.network.granularity == Granularity::step;
  std::map<CollectiveAlgorithm, std::vector<std::unique_ptr<net::CollectiveRunner>>> runs;
  Background background(config, model, network, protocols);
  background.start();
  const double until = config.run.until_s > 0 ? config.run.until_s : engine::kForever;
  json results = json::array();
  std::size_t not_run = 0;
  for (CollectiveAlgorithm requested : config.collective.algorithms) {
    for (double bytes : config.collective.sizes_bytes) {
      if (not_run > 0) {  // run.until came first: the remaining sizes are not run
        ++not_run;
        continue;
      }
      const Pick pick = tuner.choose(bytes, requested);
      const CollectiveAlgorithm alg = pick.algorithm;
      const auto& group_plans = plans.plans(alg);
      const double t0 = sim.now();
      std::size_t done = 0;
      double fastest = engine::kForever;
      auto finished = [&] {
        fastest = std::min(fastest, sim.now() - t0);
        if (++done == group_plans.size()) sim.stop();
      };
      // The textbook rings live only as long as their size.
      std::vector<std::unique_ptr<net::RingAllReduce>> rings;
      if (step) {  // parse_workload allows it for ring all_reduce on the flow model only
        for (const auto& plan : group_plans) {
          auto part = start_step_rings(network, plan, bytes, pick.costs(), finished);
          for (auto& r : part) rings.push_back(std::move(r));
        }
      } else {
        auto& alg_runs = runs[alg];
        if (alg_runs.empty())
          for (const auto& plan : group_plans) alg_runs.push_back(model.runner(plan));
        for (auto& run : alg_runs) run->start(bytes, pick.costs(), finished);
      }
      sim.run(until);
      if (done < group_plans.size()) {
        not_run = 1;
        continue;
      }
      const double t = sim.now() - t0;
      sim.recorder().trace_complete(std::string(work::to_string(config.collective.op)) + " " +
                                        std::string(work::to_string(alg)) + " " +
                                        std::to_string(static_cast<long long>(bytes)) + " B",
                                    "collective", 0, 0, t0, t);
      results.push_back(result_row(plans, requested, pick, bytes, t, fastest));
    }
  }
  background.stop();
  *usage = model.usage();
  json out = block(plans, std::move(results));
  out["sizes_not_run"] = not_run;
  if (!config.background.empty()) out["background"] = background.summary();
  return out;
}

}  // namespace cs::scenario::detail
