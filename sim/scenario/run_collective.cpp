#include "sim/scenario/run_collective.hpp"

#include <algorithm>
#include <limits>
#include <map>
#include <memory>

#include "sim/network/analytical_model.hpp"
#include "sim/network/collective_run.hpp"
#include "sim/network/ring_collective.hpp"
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
  if (p != "auto") return {{p, nccl_costs(p)}};
  std::vector<Protocol> all;
  for (const char* name : {"ll", "ll128", "simple"}) all.push_back({name, nccl_costs(name)});
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

json result_row(const PlanSet& plans, const Pick& pick, double bytes, double time_s, double fastest_group_s) {
  const double algbw = bytes / time_s;
  json row = {{"bytes", bytes},
              {"time_s", time_s},
              {"algbw_GBps", algbw / 1e9},
              {"busbw_GBps", algbw * work::busbw_factor(plans.spec().op, plans.group_size()) / 1e9},
              {"algorithm", std::string(work::to_string(pick.algorithm))},
              {"protocol", pick.protocol->name}};
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

// ---- Flow model ----

// The background workloads on the flow model: collectives repeat their sizes back to back
// until stop(); traffic runs once.
class FlowBackground {
 public:
  FlowBackground(const Config& config, net::Network& network, const std::vector<Protocol>& protocols)
      : network_(network) {
    const InNetworkConfig& in_network = config.in_network;
    for (std::size_t i = 0; i < config.background.size(); ++i) {
      const auto& b = config.background[i];
      if (b.kind == WorkloadKind::traffic) {
        traffic_.push_back(std::make_unique<net::TrafficRun>(
            network, work::expand_traffic(b.traffic, network.ranks())));
        continue;
      }
      auto loop = std::make_unique<Loop>(b.collective, network.topology(), in_network,
                                         "workload.background." + std::to_string(i));
      for (const auto& plan : loop->plans.plans(b.collective.algorithms.front()))
        loop->runs.push_back(std::make_unique<net::CollectiveRun>(network, plan));
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
    std::vector<std::unique_ptr<net::CollectiveRun>> runs;
    std::vector<std::size_t> next;  // per group: index of the next size
    uint64_t completed = 0;
    double time_sum = 0;
  };
  void launch(Loop& loop, std::size_t g) {
    const auto& sizes = loop.plans.spec().sizes_bytes;
    const double bytes = sizes[loop.next[g]++ % sizes.size()];
    const double t0 = network_.sim().now();
    const Pick pick = loop.tuner->choose(bytes, loop.plans.spec().algorithms.front());
    loop.runs[g]->start(bytes, pick.costs(), [this, &loop, g, t0] {
      ++loop.completed;
      loop.time_sum += network_.sim().now() - t0;
      if (!stopped_) launch(loop, g);
    });
  }
  net::Network& network_;
  std::vector<std::unique_ptr<Loop>> loops_;
  std::vector<std::unique_ptr<net::TrafficRun>> traffic_;
  bool stopped_ = false;
};

}  // namespace

json run_collective_flow(const Config& config, engine::Simulator& sim, net::Network& network) {
  const auto protocols = collective_protocols(config);
  PlanSet plans(config.collective, network.topology(), config.in_network, "workload");
  Tuner tuner(network, plans, protocols);
  const bool step = config.network.granularity == Granularity::step;
  std::map<CollectiveAlgorithm, std::vector<std::unique_ptr<net::CollectiveRun>>> runs;
  FlowBackground background(config, network, protocols);
  background.start();
  const double until = config.run.until_s > 0 ? config.run.until_s : engine::kForever;
  json results = json::array();
  bool cut = false;
  for (CollectiveAlgorithm requested : config.collective.algorithms) {
    for (double bytes : config.collective.sizes_bytes) {
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
      // The textbook ring (every step its own flow) lives only as long as its size.
      std::vector<std::unique_ptr<net::RingAllReduce>> rings;
      if (step) {  // parse_workload allows it for ring all_reduce only
        for (const auto& plan : group_plans) {
          rings.push_back(std::make_unique<net::RingAllReduce>(network, plan.ranks, bytes, finished, pick.costs()));
          rings.back()->start();
        }
      } else {
        auto& alg_runs = runs[alg];
        if (alg_runs.empty())
          for (const auto& plan : group_plans) alg_runs.push_back(std::make_unique<net::CollectiveRun>(network, plan));
        for (auto& run : alg_runs) run->start(bytes, pick.costs(), finished);
      }
      sim.run(until);
      if (done < group_plans.size()) {  // run.until reached: the remaining sizes are not run
        cut = true;
        break;
      }
      const double t = sim.now() - t0;
      sim.recorder().trace_complete(std::string(work::to_string(config.collective.op)) + " " +
                                        std::string(work::to_string(alg)) + " " +
                                        std::to_string(static_cast<long long>(bytes)) + " B",
                                    "collective", 0, 0, t0, t);
      results.push_back(result_row(plans, pick, bytes, t, fastest));
    }
    if (cut) break;
  }
  background.stop();
  json out = block(plans, std::move(results));
  if (!config.background.empty()) out["background"] = background.summary();
  return out;
}

// ---- Analytical model ----

json run_collective_analytical(const Config& config, net::Network& network, double* sim_time_s,
                               std::vector<double>* link_bytes, std::vector<double>* link_busy_s) {
  const auto protocols = collective_protocols(config);
  PlanSet plans(config.collective, network.topology(), config.in_network, "workload");
  Tuner tuner(network, plans, protocols);
  net::AnalyticalModel model(network);
  std::map<CollectiveAlgorithm, std::vector<std::unique_ptr<net::RoutedPlan>>> routed;
  // Background: each collective group at its first size, traffic as one stage of independent
  // transfers; all overlap every foreground estimate completely (analytical_model.hpp).
  std::vector<std::unique_ptr<PlanSet>> bg_sets;
  std::vector<work::CollectivePlan> bg_traffic;
  std::vector<std::unique_ptr<net::RoutedPlan>> bg_routed;
  std::vector<net::AnalyticalModel::Job> bg_jobs;
  for (std::size_t i = 0; i < config.background.size(); ++i) {
    const auto& b = config.background[i];
    if (b.kind == WorkloadKind::traffic) {
      work::CollectivePlan& p = bg_traffic.emplace_back();
      p.op = work::CollectiveOp::send_recv;
      p.algorithm = CollectiveAlgorithm::direct;
      work::Stage& stage = p.stages.emplace_back();
      stage.name = "background traffic";
      for (const auto& f : work::expand_traffic(b.traffic, network.ranks())) stage.transfers.push_back({f.src, f.dst, f.bytes, -1});
    }
  }
  const net::CollectiveCosts wire{};  // background traffic: the wire alone
  for (const auto& p : bg_traffic) {
    bg_routed.push_back(std::make_unique<net::RoutedPlan>(network, p));
    bg_jobs.push_back({bg_routed.back().get(), 1.0, &wire});
  }
  for (std::size_t i = 0; i < config.background.size(); ++i) {
    const auto& b = config.background[i];
    if (b.kind != WorkloadKind::collective) continue;
    auto& set = *bg_sets.emplace_back(
        std::make_unique<PlanSet>(b.collective, network.topology(), config.in_network,
                                  "workload.background." + std::to_string(i)));
    const auto alg = b.collective.algorithms.front();
    const double bytes = b.collective.sizes_bytes.front();
    Tuner bg_tuner(network, set, protocols);
    const net::CollectiveCosts& costs = bg_tuner.choose(bytes, alg).costs();
    for (const auto& plan : set.plans(alg)) {
      bg_routed.push_back(std::make_unique<net::RoutedPlan>(network, plan));
      bg_jobs.push_back({bg_routed.back().get(), bytes, &costs});
    }
  }
  json results = json::array();
  double now = 0;
  const double until = config.run.until_s > 0 ? config.run.until_s : engine::kForever;
  bool cut = false;
  for (CollectiveAlgorithm requested : config.collective.algorithms) {
    for (double bytes : config.collective.sizes_bytes) {
      const Pick pick = tuner.choose(bytes, requested);
      const CollectiveAlgorithm alg = pick.algorithm;
      auto& rp = routed[alg];
      if (rp.empty())
        for (const auto& plan : plans.plans(alg)) rp.push_back(std::make_unique<net::RoutedPlan>(network, plan));
      std::vector<net::AnalyticalModel::Job> jobs;
      for (const auto& r : rp) jobs.push_back({r.get(), bytes, &pick.costs()});
      jobs.insert(jobs.end(), bg_jobs.begin(), bg_jobs.end());
      const auto estimates = model.estimate_concurrent(jobs);
      double t = 0, fastest = engine::kForever;
      for (std::size_t g = 0; g < rp.size(); ++g) {
        t = std::max(t, estimates[g].time_s);
        fastest = std::min(fastest, estimates[g].time_s);
      }
      if (now + t > until) {  // as in the flow model: sizes that would pass run.until are not run
        now = until;
        cut = true;
        break;
      }
      now += t;
      results.push_back(result_row(plans, pick, bytes, t, fastest));
    }
    if (cut) break;
  }
  *sim_time_s = now;
  *link_bytes = model.link_bytes();
  *link_busy_s = model.link_busy_s();
  return block(plans, std::move(results));
}

}  // namespace cs::scenario::detail
