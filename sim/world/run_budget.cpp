#include "sim/world/run_budget.hpp"

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <thread>

#include "sim/network/collective_run.hpp"
#include "sim/scenario/input_error.hpp"
#include "sim/scenario/quantity.hpp"
#include "sim/scenario/quantity_range.hpp"
#include "sim/world/held_estimate.hpp"
#include "workloads/collective_plan.hpp"
#include "sim/world/run_training.hpp"
#include "topology/routing.hpp"
#include "topology/topology.hpp"

namespace cs::world {

using namespace cs::scenario;
namespace {

// Bytes per unit, measured on this build (peak RSS over the inputs' sizes; README, "Limits")
// and rounded up.
constexpr double kPerCable = 700;      // two directed links in the topology, router, both models
constexpr double kPerVertex = 300;
constexpr double kPerFlow = 700;       // a traffic flow on its own route, with its outputs
constexpr double kPerTransfer = 500;   // a plan transfer: plan, routed matrix, flow route
// A pair of a flow-model exchange (flow_exchange.hpp): its level, its crossings while solving
// and its links' levels after (4,096 GPUs: 35-66 B measured, by routing). Past the solve's
// list budget (PairExchange::kListBudget crossings of 4 B) a pair costs its level and the
// budget is shared: kPerListedPair each, plus kExchangeLists for the lists, the route batches
// and the links' levels (16,384 GPUs, D-mod-K: see docs/benchmarks.md).
constexpr double kPerExchangePair = 80;
constexpr double kPerListedPair = 8;
constexpr double kExchangeLists = 1.5e9;
double exchange_bytes(double pairs) {
  return std::min(pairs * kPerExchangePair, pairs * kPerListedPair + kExchangeLists);
}
// A training step's task: graph, timing and its transfers (GPT-3 175B on 1,024 GPUs, every
// replica: 2.1 M tasks in 200 MB, about 66 B each).
constexpr double kPerTask = 150;
// Tasks per worker, micro-batch and layer of a stage (forward, backward and its weight part,
// recomputation, tensor/context/expert/pipeline transfers: 11.4 measured on GPT-3 175B), and per
// worker and layer once a step (gradient reductions, ZeRO gathers, optimizer).
constexpr double kTasksPerLayerMicroBatch = 16;
constexpr double kTasksPerLayerStep = 8;

// A held route of a routing of several lanes (topo::route_lanes: valiant_packet, ugal_packet)
// lists every lane: each lane past the first costs about this much per held route (the route,
// the flow model's copy and its links' lists). Measured: a direct all-to-all over the 144-GPU
// fabric of dragonfly_group_shift.json (20,592 pairs, flow model) peaks 18 MB above minimal's
// 23 MB under valiant_packet (7 lanes) and 87 MB above under ugal_packet (28 lanes): 142 and
// 156 B per pair and extra lane.
constexpr double kPerExtraLane = 160;
void add_lanes(double routes, const Config& config, const std::string& at, CostEstimate& out) {
  const int lanes = topo::route_lanes(config.topology, config.network.routing);
  if (lanes <= 1 || routes <= 0) return;
  out.items.push_back({"network.routing",
                       count_text(routes) + " routes of " + at + ", " + std::to_string(lanes) + " lanes each",
                       routes * (lanes - 1) * kPerExtraLane, {}});
}

void add_traffic(const work::TrafficSpec& t, const Config& config, double ranks, const std::string& at,
                 CostEstimate& out) {
  double flows = 0;
  std::string key = at + ".pattern", what;
  switch (t.pattern) {
    case work::TrafficPattern::permutation:
    case work::TrafficPattern::incast: flows = ranks; break;
    case work::TrafficPattern::all_to_all:
      flows = ranks * (ranks - 1);
      what = "all_to_all over " + count_text(ranks) + " ranks: ";
      break;
    case work::TrafficPattern::flows:
      flows = static_cast<double>(t.flows.size());
      key = at + ".flows";
      break;
  }
  out.items.push_back({key, what + count_text(flows) + " flows", flows * kPerFlow, {}});
  add_lanes(flows, config, at, out);
}

// How a run holds a direct plan's all pairs (work::Stage::all_pairs: implicit in the plan).
enum class Pairs : uint8_t {
  streamed,  // the analytical model counts them link by link (analytical_model.hpp)
  exchange,  // the flow model solves a large all-pairs stage as one exchange (collective_run.hpp)
  held,      // one item per pair: the flow model's flows, or `shortest` routes
};

// What the plan of one group of n ranks spread over several nodes with c channels holds, for
// one algorithm: upper bounds of the plan builders' counts (workloads/collective_plan*.cpp),
// in bytes. Direct's all pairs are one item per pair where held, and its listed stages (a
// star, a send) at most 2n; an exchange holds exchange_bytes of its one stage at a time,
// and all-pairs stages below CollectiveRun::kExchangePairs are held.
double plan_bytes(work::CollectiveAlgorithm a, work::CollectiveOp op, double n, double c, Pairs pairs) {
  using A = work::CollectiveAlgorithm;
  switch (a) {
    case A::ring: return 2 * c * n * kPerTransfer;
    case A::tree: return 4 * c * n * kPerTransfer;
    case A::halving_doubling: return 2 * n * std::ceil(std::log2(std::max(n, 2.0)) + 1) * kPerTransfer;
    case A::direct: {
      const double stage = n * (n - 1);
      if (pairs == Pairs::held ||
          (pairs == Pairs::exchange && stage < static_cast<double>(net::CollectiveRun::kExchangePairs)))
        return 2 * stage * kPerTransfer;
      return 2 * n * kPerTransfer + (pairs == Pairs::exchange ? exchange_bytes(stage) : 0);
    }
    case A::hierarchical: return 3 * c * n * kPerTransfer;
    case A::in_network: return 2 * c * n * kPerTransfer;
    // all_reduce: a scatter and a gather stage per dimension (at most 3), each a ring both ways.
    case A::torus: return 2 * 3 * 2 * n * kPerTransfer;
    case A::automatic: {  // the largest of the plans auto weighs for the op (comm_base.hpp)
      double most = 0;
      for (A x : work::tuned_algorithms_for(op)) most = std::max(most, plan_bytes(x, op, n, c, pairs));
      return most;
    }
  }
  return 0;
}

// The task graph of one training step: a worker per pipeline stage and simulated replica.
void add_training(const Config& config, CostEstimate& out) {
  const work::TrainingWorkload& w = config.training.workload;
  const bool all = !detail::choose_replicas(config, w).one_replica;
  const double workers = double(w.parallel.pp) * (all ? double(w.parallel.dp) : 1.0);
  const double tasks = training_step_tasks(w, work::micro_batches(w), all);
  out.items.push_back({all ? "workload.one_replica" : "workload.batch.global",
                       count_text(workers) + " workers (" + (all ? "every data-parallel replica" : "one replica") + ") x " +
                           count_text(double(work::micro_batches(w))) + " micro-batches: " + count_text(tasks) + " tasks",
                       tasks * kPerTask, {}});
}

void add_collective(const work::CollectiveSpec& s, const Config& config, double ranks, double cables,
                    const std::string& at, CostEstimate& out) {
  const double base = !s.rank_list.empty() ? static_cast<double>(s.rank_list.size()) : s.ranks > 0 ? s.ranks : ranks;
  const double n = s.group_size > 0 ? s.group_size : base;
  const double groups = s.group_size > 0 ? std::floor(base / s.group_size) : 1;
  const double c = s.channels > 0 ? s.channels : std::min(config.topology.node.nics, work::kMaxChannels);
  // The flow model solves a large all-pairs stage as one exchange only while nothing else
  // runs: one group, no background (else it runs as flows, one per pair).
  const topo::RoutingKind routing = config.network.routing;
  const bool alone = groups == 1 && config.background.empty();
  const Pairs pairs = config.network.model == NetworkModel::analytical
                          ? (topo::routes_without_cache(routing) ? Pairs::streamed : Pairs::held)
                          : (topo::computes_routes_uncached(routing) && alone ? Pairs::exchange : Pairs::held);
  double per_group = 0;
  work::CollectiveAlgorithm worst = s.algorithms.front();
  for (work::CollectiveAlgorithm a : s.algorithms) {
    const double b = plan_bytes(a, s.op, n, c, pairs);
    if (b > per_group) per_group = b, worst = a;
  }
  const double bytes = per_group * groups;
  // The key whose value drives the count: the n^2 of direct, the channels, or the ranks.
  std::string key = at + ".ranks";
  const bool p2p = s.op == work::CollectiveOp::all_to_all || s.op == work::CollectiveOp::send_recv;
  if (worst == work::CollectiveAlgorithm::direct || (worst == work::CollectiveAlgorithm::automatic && p2p))
    key = at + ".algorithm";
  else if (c > 8)
    key = s.channels > 0 ? at + ".channels" : "hardware.node.nics";
  const double stage_pairs = n * (n - 1);
  const bool exchange = pairs == Pairs::exchange &&
                        stage_pairs >= static_cast<double>(net::CollectiveRun::kExchangePairs) &&
                        per_group == plan_bytes(work::CollectiveAlgorithm::direct, s.op, n, c, pairs);
  out.items.push_back({key,
                       count_text(groups) + " group(s) of " + count_text(n) + " ranks, " + count_text(c) + " channels, " +
                           std::string(work::to_string(worst)) + ": " +
                           (exchange ? count_text(stage_pairs) + " pairs solved as one flow-model exchange"
                                     : count_text(bytes / kPerTransfer) + " plan transfers"),
                       bytes, {}});
  // Routes are held per pair (the router's cache, the flow model's): at most a group's ordered
  // pairs. An exchange holds none (its batches aside); streamed pairs neither.
  if (!exchange && pairs != Pairs::streamed)
    add_lanes(std::min(bytes / kPerTransfer, groups * stage_pairs), config, at, out);
  // Streamed pairs (analytical_model.hpp) count on every link, in one array per thread and a
  // total: 8 bytes per directed link, two per cable.
  const bool may_stream = std::any_of(s.algorithms.begin(), s.algorithms.end(), [](work::CollectiveAlgorithm a) {
    return a == work::CollectiveAlgorithm::direct || a == work::CollectiveAlgorithm::automatic;
  });
  if (pairs == Pairs::streamed && may_stream) {
    const double threads = std::max(1u, std::thread::hardware_concurrency());
    out.items.push_back({at + ".algorithm", "all pairs streamed: a count per link on " + count_text(threads) + " threads",
                         16 * cables * (threads + 1), {}});
  }
}

}  // namespace

std::string count_text(double n) {
  char buf[32];
  if (n >= 1e9) std::snprintf(buf, sizeof buf, "%.3g G", n / 1e9);
  else if (n >= 1e6) std::snprintf(buf, sizeof buf, "%.3g M", n / 1e6);
  else std::snprintf(buf, sizeof buf, "%.0f", n);
  return buf;
}

double training_step_tasks(const work::TrainingWorkload& w, int micro_batches, bool every_replica) {
  const work::ParallelPlan& p = w.parallel;
  const double workers = double(p.pp) * (every_replica ? double(p.dp) : 1.0);
  const double layers = std::ceil(double(w.model.layers) / p.pp) + 2;  // + embedding and head
  return workers * layers * (double(micro_batches) * kTasksPerLayerMicroBatch + kTasksPerLayerStep);
}

double CostEstimate::total_bytes() const {
  double total = 0;
  for (const CostItem& i : items) total += i.bytes;
  return total;
}

const CostItem& CostEstimate::largest() const {
  return *std::max_element(items.begin(), items.end(), [](const CostItem& a, const CostItem& b) { return a.bytes < b.bytes; });
}

CostEstimate estimate_cost(const Config& config, bool keeps_job_rows) {
  CostEstimate out;
  // A training run has no fabric and bounds its own events (run_training_run.cpp), unless its
  // step is simulated first on the topology.
  if (config.workload == WorkloadKind::training_run && !config.training_run_simulates_step) return out;
  topo::TopologySize size;
  try {
    size = topo::topology_size(config.topology);
  } catch (const topo::BuildError&) {
    // The parser checks the same parameters first; a builder-only error shows when building.
  }
  const double gpus = double(config.topology.nodes) * config.topology.node.gpus;
  out.items.push_back({"topology.nodes",
                       count_text(gpus) + " GPUs: " + count_text(double(size.vertices)) + " vertices and " +
                           count_text(double(size.cables)) + " cables",
                       double(size.cables) * kPerCable + double(size.vertices) * kPerVertex, {}});
  // Serving and jobs draw their requests and jobs as the run goes: the fabric they may be
  // placed on, and the books their load predicts.
  if (config.workload == WorkloadKind::serving || config.workload == WorkloadKind::jobs) {
    add_held_books(config, keeps_job_rows, out);
    return out;
  }
  if (config.workload == WorkloadKind::traffic) add_traffic(config.traffic, config, gpus, "workload", out);
  else if (config.workload == WorkloadKind::training || config.workload == WorkloadKind::training_run)
    add_training(config, out);
  else add_collective(config.collective, config, gpus, double(size.cables), "workload", out);
  for (std::size_t i = 0; i < config.background.size(); ++i) {
    const std::string at = "workload.background." + std::to_string(i);
    const BackgroundWorkload& b = config.background[i];
    if (b.kind == WorkloadKind::traffic) add_traffic(b.traffic, config, gpus, at, out);
    else add_collective(b.collective, config, gpus, double(size.cables), at, out);
  }
  return out;
}

void check_cost(const Config& config, bool keeps_job_rows) {
  const CostEstimate e = estimate_cost(config, keeps_job_rows);
  const double total = e.total_bytes(), limit = config.run.max_memory_bytes;
  if (e.items.empty() || total <= limit) return;
  const CostItem& worst = e.largest();
  throw InputError(worst.key,
                   "this run needs about " + format_quantity(total, QuantityKind::bytes) + " of memory (" + worst.what +
                       ": " + format_quantity(worst.bytes, QuantityKind::bytes) + "); the limit is " +
                       format_quantity(limit, QuantityKind::bytes) + " (run.max_memory)",
                   worst.hint.empty() ? "make it smaller, or raise run.max_memory if the machine has the memory" : worst.hint);
}

uint64_t held_at_most(const Config& config, double bytes_each) {
  return static_cast<uint64_t>(std::max(1.0, std::floor(config.run.max_memory_bytes / bytes_each)));
}

void throw_held_limit(const Config& config, double held, const std::string& what, double at_s, const std::string& hint) {
  throw InputError("run.max_memory", "this run held " + count_text(held) + " " + what + " at t = " +
                                         format_quantity(at_s, QuantityKind::time) + ", and the count kept growing: at their "
                                         "size that is the limit of " +
                                         format_quantity(config.run.max_memory_bytes, QuantityKind::bytes) +
                                         " (run.max_memory); the run stopped, nothing was written",
                   hint);
}

}  // namespace cs::world
