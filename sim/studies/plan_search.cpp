#include "sim/studies/plan_search.hpp"

#include <algorithm>
#include <chrono>
#include <cmath>
#include <cstdio>
#include <optional>
#include <exception>
#include <iterator>
#include <map>
#include <memory>
#include <mutex>
#include <numeric>
#include <sstream>

#include <tbb/enumerable_thread_specific.h>
#include <tbb/parallel_for.h>
#include <tbb/task_arena.h>

#include "common/enum_table.hpp"
#include "sim/compute/step_extrapolation.hpp"
#include "sim/network/comm_base.hpp"
#include "sim/scenario/input_error.hpp"
#include "sim/scenario/quantity.hpp"
#include "sim/scenario/quantity_range.hpp"
#include "sim/scenario/training_gpu.hpp"
#include "sim/studies/plan_screening.hpp"
#include "sim/world/run.hpp"
#include "sim/world/run_budget.hpp"
#include "sim/world/run_collective.hpp"
#include "sim/world/run_training.hpp"
#include "topology/topology.hpp"
#include "workloads/training_placement.hpp"
#include "workloads/training_plan.hpp"

namespace cs::studies {

using namespace cs::scenario;
using namespace cs::world;

using nlohmann::json;

namespace {

// The rows' keys, in the order tables and CSV show them.
constexpr const char* kColumns[] = {
    "rank", "tokens_per_s", "step_time_s", "mfu", "model_tflops_per_gpu", "tflops_per_gpu", "bubble_fraction",
    "compute_s", "exposed_comm_s", "memory_per_gpu_bytes", "tp", "pp", "dp", "cp", "ep", "zero",
    "sequence_parallel", "schedule", "virtual_stages", "micro_batch", "micro_batches", "recompute", "simulation",
    "screening_tokens_per_s"};

// Plans bounded or screened on one fabric at most (then a fresh one: its caches stay small).
constexpr std::size_t kScreeningBatch = 64;
// Plans screened together at least, when screening is what a round needs.
constexpr std::size_t kScreeningRound = 32;
// Each plan's placement (the GPU of each of its ranks: what its screening fabric is built
// for) as a number, the same for the same placement, numbered in the placements' order; and how
// many fabrics bounding every plan builds at most (the estimate's). Neither depends on the
// thread count.
std::vector<uint32_t> placement_ids(const std::vector<const work::TrainingWorkload*>& plans, std::size_t& fabrics) {
  std::map<std::vector<int>, std::vector<std::size_t>> by_placement;
  for (std::size_t i = 0; i < plans.size(); ++i)
    by_placement[work::RankLayout(plans[i]->parallel).gpu_of_rank()].push_back(i);
  std::vector<uint32_t> ids(plans.size());
  uint32_t id = 0;
  fabrics = 0;
  for (const auto& [placement, indices] : by_placement) {
    for (std::size_t i : indices) ids[i] = id;
    fabrics += (indices.size() + kScreeningBatch - 1) / kScreeningBatch;
    ++id;
  }
  return ids;
}

// The pace of a search on this build (seconds of one core), measured with `clustersim plan`
// on Llama 3 70B, GPT-3 175B and a 7B model (scripts' numbers in docs/benchmarks.md, "plan"):
// a screened step's task, a cable of a screening fabric (built once per kScreeningBatch plans),
// a task of a whole step refined on the flow network. Rounded up: an estimate errs long.
constexpr double kScreenSecondsPerTask = 2e-6;
constexpr double kFabricSecondsPerCable = 2e-6;
constexpr double kRefineSecondsPerTask = 4e-6;

// A count for a message: whole below a million, else 3 significant digits.
std::string plan_count(double n) {
  char buf[32];
  std::snprintf(buf, sizeof buf, n < 1e6 ? "%.0f" : "%.3g", n);
  return buf;
}

PlanSearchEstimate estimate_search(const Config& config, const std::vector<const work::TrainingWorkload*>& fitting,
                                   std::size_t fabrics, const PlanSearchOptions& options) {
  PlanSearchEstimate e;
  e.fitting = fitting.size();
  e.fabrics = fabrics;
  double full = 0;  // one replica's whole step, summed over the plans
  for (const work::TrainingWorkload* w : fitting) {
    const int m = work::micro_batches(*w);
    if (const auto points = compute::extrapolation_points(*w))
      e.screening_tasks += training_step_tasks(*w, points->a, false) + training_step_tasks(*w, points->b, false);
    else
      e.screening_tasks += training_step_tasks(*w, m, false);
    full += training_step_tasks(*w, m, false);
  }
  const double refined = std::min<double>(double(fitting.size()), double(options.refine));
  if (!fitting.empty()) e.refine_tasks = full / double(fitting.size()) * refined;
  double cables = 0;
  try {
    cables = double(topo::topology_size(config.topology).cables);
  } catch (const topo::BuildError&) {
    // Building reports it, at its key.
  }
  const double jobs = std::max(1, options.jobs);
  e.seconds = (e.screening_tasks * kScreenSecondsPerTask + double(fabrics) * cables * kFabricSecondsPerCable) / jobs +
              e.refine_tasks * kRefineSecondsPerTask / std::min(jobs, std::max(1.0, refined));
  return e;
}

// Pass 2: the whole step on the scenario's network, as `clustersim run` simulates it.
json refine(const Config& config, const topo::Topology& topology, const work::TrainingWorkload& w,
           const std::function<bool()>& interrupted) {
  engine::Simulator sim(config.seed);
  if (interrupted) sim.set_interrupt_check(interrupted);
  sim.poll_interrupt();
  Fabric fabric = build_fabric(config, sim, topology, world::detail::training_placement(w, topology.ranks()));
  const auto replicas = world::detail::choose_replicas(config, w);
  return plan_row(w, world::detail::simulate_step(config, w, replicas, sim, *fabric.comm), "network");
}

// body(i) for every i of `indices` on `jobs` threads; the first index's exception (in the
// list's order, whatever `jobs` is) is rethrown.
template <class Body>
void for_each(const std::vector<std::size_t>& indices, int jobs, Body body) {
  std::vector<std::exception_ptr> errors(indices.size());
  tbb::task_arena arena(std::max(1, jobs));
  arena.execute([&] {
    tbb::parallel_for(std::size_t{0}, indices.size(), [&](std::size_t k) {
      try {
        body(indices[k]);
      } catch (...) {
        errors[k] = std::current_exception();
      }
    });
  });
  for (const auto& e : errors)
    if (e) std::rethrow_exception(e);
}

double tokens(const json& row) { return row["tokens_per_s"].get<double>(); }

}  // namespace

work::PlanSpace plan_space(const std::vector<std::string>& only, const std::string& at) {
  work::PlanSpace space;
  const auto integers = [&](const std::string& key, const std::vector<std::string>& values, int min, int max) {
    std::vector<int> out;
    for (const std::string& v : values) {
      std::size_t used = 0;
      int n = 0;
      try {
        n = std::stoi(v, &used);
      } catch (const std::exception&) {
        used = 0;
      }
      if (used != v.size() || n < min || n > max)
        throw InputError(at, key + ": expected integers from " + std::to_string(min) + " to " + std::to_string(max) +
                                 "; got \"" + v + "\"");
      out.push_back(n);
    }
    return out;
  };
  // Values by their names in an enumeration's table (every name of it).
  const auto names = [&](const std::string& key, const std::vector<std::string>& values, const auto& table) {
    std::vector<std::decay_t<decltype(table.front().value)>> out;
    for (const std::string& v : values) {
      const auto value = value_of(table, v);
      if (!value) {
        std::string list;
        for (const auto& e : table) list += (list.empty() ? "" : ", ") + std::string(e.name);
        throw InputError(at, key + ": expected some of " + list + "; got \"" + v + "\"");
      }
      out.push_back(*value);
    }
    return out;
  };
  for (const std::string& item : only) {
    const auto eq = item.find('=');
    if (eq == std::string::npos || eq + 1 == item.size())
      throw InputError(at, "expected KEY=V1,V2 (schedule, zero, recompute, micro, virtual_stages, max_cp); got \"" +
                               item + "\"");
    const std::string key = item.substr(0, eq);
    std::vector<std::string> values;
    std::stringstream list(item.substr(eq + 1));
    for (std::string v; std::getline(list, v, ',');) values.push_back(v);
    if (key == "schedule") space.schedules = names(key, values, work::kScheduleNames);
    else if (key == "recompute") space.recompute = names(key, values, work::kRecomputeNames);
    else if (key == "zero") space.zero_stages = integers(key, values, 0, 3);
    else if (key == "micro") space.micro_batches = integers(key, values, 1, 1 << 20);
    else if (key == "virtual_stages") space.virtual_stages = integers(key, values, 2, 1 << 10);
    else if (key == "max_cp" && values.size() == 1) space.max_cp = integers(key, values, 1, 1 << 20).front();
    else
      throw InputError(at, "unknown restriction \"" + key + "\"", "one of schedule, zero, recompute, micro, "
                                                                   "virtual_stages, max_cp (one value)");
  }
  return space;
}

double plan_time_limit(const std::string& text, const std::string& at) {
  std::optional<double> s = parse_quantity_text(text, QuantityKind::time);
  if (!s) {
    std::size_t used = 0;
    try {
      s = std::stod(text, &used);
    } catch (const std::exception&) {
      used = 0;
    }
    if (used != text.size()) s.reset();
  }
  if (!s || !(*s > 0) || !std::isfinite(*s))
    throw InputError(at, "expected a duration above 0 (\"30min\", \"2h\", or seconds); got \"" + text + "\"");
  return *s;
}

PlanSearch search_plans(const Config& config, const PlanSearchOptions& options) {
  if (config.workload != WorkloadKind::training)
    throw InputError("workload.kind", "clustersim plan needs a \"training\" workload (its model, batch and cluster)");
  const TrainingConfig& t = config.training;
  work::PlanSpace space = options.space;
  space.precision = t.workload.precision;
  space.only_fitting = false;
  const int gpus = config.topology.nodes * config.topology.node.gpus;
  const compute::GpuSpec gpu = scenario::detail::gpu_spec(config.gpu);
  auto candidates =
      work::enumerate_plans(t.workload.model, work::global_batch(t.workload),
                            {gpus, config.topology.node.gpus, t.allow_tp_across_nodes}, gpu.memory_bytes, space,
                            t.step.memory);
  // The overlaps are the training stack's, not the plan's: every plan runs the file's (where the
  // file is silent, the chip's: AWS Neuron cannot overlap tensor-parallel collectives), as
  // `clustersim run` runs the plan chosen.
  for (auto& c : candidates) {
    c.workload.parallel.tp_comm_overlap = t.workload.parallel.tp_comm_overlap;
    c.workload.parallel.overlap_grad_reduce = t.workload.parallel.overlap_grad_reduce;
    c.workload.parallel.overlap_p2p = t.workload.parallel.overlap_p2p;
    c.workload.parallel.overlap_tp_wgrad = t.workload.parallel.overlap_tp_wgrad;
  }
  std::vector<const work::TrainingWorkload*> fitting;
  PlanSearch out;
  for (const auto& c : candidates) {
    if (c.memory.fits) fitting.push_back(&c.workload);
    else if (c.memory.within_capacity) ++out.dropped_in_headroom;
  }
  out.valid = candidates.size();
  out.dropped = candidates.size() - fitting.size();
  out.memory_headroom = t.step.memory.headroom;
  std::vector<std::size_t> all(fitting.size());
  std::iota(all.begin(), all.end(), 0);
  // At most every plan screened: the estimate errs long, as its bound. Bounds usually spare most
  // plans their screening (GPT-3 175B on 1,024 GPUs: 2,195 of 7,581 screened), which no count
  // before the search can know.
  std::size_t fabrics = 0;
  const std::vector<uint32_t> placement = placement_ids(fitting, fabrics);
  PlanSearchEstimate estimate = estimate_search(config, fitting, fabrics, options);
  estimate.valid = candidates.size();
  if (estimate.seconds > options.max_seconds)
    throw InputError(options.budget_key,
                     "this search could take up to about " + format_quantity(estimate.seconds, QuantityKind::time) + " on " +
                         std::to_string(std::max(1, options.jobs)) + " thread(s): " + plan_count(double(estimate.fitting)) +
                         " plans to screen at most (" + plan_count(double(estimate.valid)) + " valid), " +
                         plan_count(estimate.screening_tasks) + " tasks, " + plan_count(double(estimate.fabrics)) +
                         " screening fabrics, " + std::to_string(std::min(estimate.fitting, options.refine)) +
                         " refined; the limit is " + format_quantity(options.max_seconds, QuantityKind::time),
                     "narrow the plans (--only schedule=1f1b --only zero=1 --only micro=1,2 --only max_cp=1; Python: "
                     "only=), refine fewer (--refine), run more at once (-j), or raise the limit");
  if (options.estimated) options.estimated(estimate);
  const topo::Topology topology = build_topology(config);
  std::vector<json> rows(fitting.size());
  const auto start = std::chrono::steady_clock::now();
  std::mutex progress_mutex;
  const auto report = [&](const char* stage, std::size_t done, std::size_t total) {
    if (options.progress)
      options.progress(stage, done, total, std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count());
  };

  // A plan's work starts only if the search is not stopped: after a Ctrl-C every plan left
  // throws at once instead of bounding (no simulator there polls) or building its fabric.
  const auto stop_if_interrupted = [&] {
    if (options.interrupted && options.interrupted()) throw engine::Interrupted();
  };
  // The chosen plans over the threads by placement, `each_plan(screening, i)` for each; `stage`'s
  // progress is `done` of `total`. Each thread keeps the fabric (a PlanScreening: its groups and
  // caches) of the placement it last worked on, for kScreeningBatch plans at most, from one
  // stage or round to the next: plans, not batches of them, are what the threads share, so that
  // a round of a few dozen plans keeps both busy. A fabric's caches are pure functions of the
  // fabric and the request, so which thread bounds or screens a plan, after which others, changes
  // no number.
  struct ThreadFabric {
    uint32_t placement = 0;
    std::unique_ptr<PlanScreening> screening;
    std::size_t plans = 0;
  };
  tbb::enumerable_thread_specific<ThreadFabric> thread_fabrics;
  const auto by_placement = [&](std::vector<std::size_t> chosen, const char* stage, std::size_t& done,
                                std::size_t total, const auto& each_plan) {
    // Grouped by placement, in the order given within one, so that consecutive plans share one.
    std::stable_sort(chosen.begin(), chosen.end(), [&](std::size_t a, std::size_t b) { return placement[a] < placement[b]; });
    for_each(chosen, options.jobs, [&](std::size_t i) {
      stop_if_interrupted();
      // Isolated: the network's own parallel loops (all-pairs routing, Network::count_all_pairs)
      // run inside a plan's bound or screening, and a thread waiting on one may otherwise take
      // another plan of this loop, whose thread_fabrics.local() is this one's: it would rebuild
      // (free) the fabric in use below it, or use it re-entrantly.
      tbb::this_task_arena::isolate([&] {
        ThreadFabric& local = thread_fabrics.local();
        if (!local.screening || local.plans == kScreeningBatch || local.placement != placement[i]) {
          local.screening.reset();  // the old fabric's memory first
          local.screening = std::make_unique<PlanScreening>(config, topology, *fitting[i]);
          local.placement = placement[i];
          local.plans = 0;
        }
        ++local.plans;
        each_plan(*local.screening, i);
      });
      const std::lock_guard<std::mutex> lock(progress_mutex);
      report(stage, ++done, total);
    });
  };
  std::size_t plans_bounded = 0;
  if (options.refine > 0)
    by_placement(all, "bounding", plans_bounded, fitting.size(), [&](PlanScreening& screening, std::size_t i) {
      stop_if_interrupted();
      rows[i] = screening.bound(*fitting[i]);
    });
  std::vector<uint8_t> screened(fitting.size(), 0), refined_plan(fitting.size(), 0);
  std::size_t plans_screened = 0;
  const auto screen_plans = [&](const std::vector<std::size_t>& chosen, std::size_t total) {
    by_placement(chosen, "screening", plans_screened, total, [&](PlanScreening& screening, std::size_t i) {
      rows[i] = screening.screen(*fitting[i], options.interrupted);
    });
    for (std::size_t i : chosen) screened[i] = 1;
  };
  report("screening", 0, fitting.size());
  if (options.refine == 0) screen_plans(all, fitting.size());

  // Screening and refinement by promise: a plan's best possible tokens/s so far (its bound, then
  // its screening; the network's only slows it further, barring scheduling anomalies). Each
  // round settles the most promising plans not refined: while any of them is unscreened, those
  // are screened (with the next open ones, kScreeningRound at least, so that the threads share
  // the work); else they are refined. Rounds depend on results only, never on
  // `jobs`. A plan whose promise x (1 + margin) does not beat that figure stays as it is.
  std::vector<double> refined;  // network tokens/s of the refined plans, best first
  for (std::vector<std::size_t> order = all; options.refine > 0;) {
    const double threshold = refined.size() >= options.refine ? refined[options.refine - 1] : -1;
    std::vector<std::size_t> open;
    for (std::size_t i : order)
      if (!refined_plan[i] && tokens(rows[i]) * (1 + kScreeningMargin) > threshold) open.push_back(i);
    std::stable_sort(open.begin(), open.end(), [&](std::size_t a, std::size_t b) { return tokens(rows[a]) > tokens(rows[b]); });
    if (open.empty()) break;
    // The plans this round settles: as many as `refine` still needs, then kRefineRound.
    const std::size_t settle =
        std::min(open.size(), refined.size() < options.refine ? options.refine - refined.size() : kRefineRound);
    std::vector<std::size_t> to_screen;
    for (std::size_t k = 0; k < open.size() && (k < settle || (!to_screen.empty() && to_screen.size() < kScreeningRound)); ++k)
      if (!screened[open[k]]) to_screen.push_back(open[k]);
    if (!to_screen.empty()) {
      std::size_t unscreened = 0;
      for (std::size_t i : open) unscreened += !screened[i];
      screen_plans(to_screen, plans_screened + unscreened);
      continue;
    }
    const std::vector<std::size_t> round(open.begin(), open.begin() + std::ptrdiff_t(settle));
    for_each(round, options.jobs, [&](std::size_t i) {
      stop_if_interrupted();
      const double screened_tokens = tokens(rows[i]);
      rows[i] = refine(config, topology, *fitting[i], options.interrupted);
      rows[i]["screening_tokens_per_s"] = screened_tokens;
    });
    for (std::size_t i : round) refined.push_back(tokens(rows[i])), refined_plan[i] = 1;
    std::sort(refined.begin(), refined.end(), std::greater<>());
    report("refining", refined.size(), std::max(refined.size(), options.refine));
  }
  out.screened = plans_screened;
  out.refined = refined.size();

  std::vector<std::size_t> order = all;
  std::sort(order.begin(), order.end(), [&](std::size_t a, std::size_t b) {
    return tokens(rows[a]) != tokens(rows[b]) ? tokens(rows[a]) > tokens(rows[b]) : a < b;
  });
  for (std::size_t rank = 0; rank < order.size(); ++rank) {
    json row = {{"rank", rank + 1}};
    row.update(rows[order[rank]]);
    out.rows.push_back(std::move(row));
  }
  return out;
}

json plan_search_json(const Config& config, const PlanSearch& search, std::size_t top) {
  const std::size_t n = top > 0 ? std::min(top, search.rows.size()) : search.rows.size();
  const auto& w = config.training.workload;
  return {{"scenario", config.name},
          {"model", w.model.name},
          {"gpus", int64_t{config.topology.nodes} * config.topology.node.gpus},
          {"gpu", config.gpu.name},
          {"global_batch", work::global_batch(w)},
          {"plans_valid", search.valid},
          {"plans_dropped", search.dropped},
          {"plans_dropped_in_headroom", search.dropped_in_headroom},
          {"memory_headroom", search.memory_headroom},
          {"plans_simulated", search.rows.size()},
          {"plans_screened", search.screened},
          {"plans_refined", search.refined},
          {"plans", json(std::vector<json>(search.rows.begin(), search.rows.begin() + std::ptrdiff_t(n)))}};
}

std::string plan_search_csv(const PlanSearch& search) {
  std::ostringstream out;
  out.precision(17);
  for (std::size_t c = 0; c < std::size(kColumns); ++c) out << (c ? "," : "") << kColumns[c];
  out << "\n";
  for (const auto& row : search.rows) {
    for (std::size_t c = 0; c < std::size(kColumns); ++c) {
      const json& v = row.at(kColumns[c]);
      out << (c ? "," : "");
      if (v.is_string()) out << v.get<std::string>();
      else if (v.is_number_float()) out << v.get<double>();
      else if (v.is_null()) continue;
      else out << v.dump();
    }
    out << "\n";
  }
  return out.str();
}

}  // namespace cs::studies
