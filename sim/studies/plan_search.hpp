#pragma once
// `clustersim plan` and Python's cs.plan: every valid parallel plan of a training scenario's
// model on its cluster (work::enumerate_plans: tp, pp, dp, cp, ep, micro-batch, ZeRO stage,
// schedule, virtual stages, recomputation), those that do not fit in the GPU's memory dropped,
// the rest simulated and ranked by tokens/s. The file's model, global batch, precision, GPU,
// topology and network are kept; its parallel plan, micro-batch and recomputation are what
// varies; its simulation keys apply (efficiencies, comm_compute_share, gradient bytes, ...).
//
// Three passes, each plan its own Simulator and communication layer, in parallel with TBB:
// 0. Bound, every fitting plan: the step's longest path through its task graph with compute at
//    its roofline time and every transfer at its time alone on the idle fabric
//    (compute/step_bound.hpp, plan_screening.hpp), no simulation. No simulation of the plan,
//    screening or network, is faster.
// 1. Screening, the plans whose bound could reach the top: one step on the scenario's topology
//    with every transfer taking its time alone on the idle fabric (compute::AloneTimeComm: the
//    analytical model's estimate, NCCL's algorithms and costs, no contention), one
//    data-parallel replica, and long steps extrapolated from their steady state
//    (compute/step_extrapolation.hpp).
// 2. Refinement: the best plans simulated whole on the scenario's network model with
//    contention, exactly as `clustersim run` would (workload.one_replica applies).
// The passes interleave by promise (a plan's bound, then its screening figure): the most
// promising plans are screened, then refined, until `refine` plans are done and no plan left
// has a promise above the refine-th best network throughput less kScreeningMargin.
// Contention only slows transfers, so a whole contention-free step bounds the network's
// throughput from above, and the bound bounds both; the extrapolation's own error (at most
// 0.6%, ZB-H1's, measured: step_extrapolation.hpp) is inside the margin. The top `refine`
// plans are then the network's own top `refine` (barring scheduling anomalies where a slower
// transfer speeds a step up). With refine 0 every plan is screened.
// Results do not depend on `jobs`.
#include <cstddef>
#include <functional>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "sim/scenario/config.hpp"
#include "workloads/training_enumerate.hpp"

namespace cs::studies {

inline constexpr std::size_t kRefineRound = 8;
// A screened plan is refined while its throughput x (1 + margin) beats the refine-th best.
inline constexpr double kScreeningMargin = 0.01;

// What a search will take, estimated from the plans it would simulate before any is: every
// fitting plan's screened steps (the tasks of one replica's graph at the micro-batch counts
// screening simulates), the screening fabrics (one per 64 plans of one placement, built over
// every cable), and `refine` whole steps on the network, at this build's measured pace
// (plan_search.cpp). Wall seconds on `jobs` threads.
struct PlanSearchEstimate {
  std::size_t valid = 0, fitting = 0, fabrics = 0;
  double screening_tasks = 0, refine_tasks = 0;
  double seconds = 0;
};

struct PlanSearchOptions {
  int jobs = 1;
  std::size_t refine = 10;  // plans to rank by the network simulation (0: screening only)
  work::PlanSpace space;    // precision is taken from the scenario
  // Polled by every plan's simulator and between plans: true stops the search with
  // engine::Interrupted (Python's Ctrl-C). Empty: never.
  std::function<bool()> interrupted;
  // Called as the plans are bounded and simulated (from one thread at a time): `stage`
  // "bounding", "screening" or "refining", plans done of `total` in that stage (for screening,
  // the plans screened so far and still to screen), wall seconds since the search began. A
  // long search says how long it will take (`clustersim plan` prints its estimate). Empty: none.
  std::function<void(const char* stage, std::size_t done, std::size_t total, double elapsed_s)> progress;
  // A search estimated to take longer (wall seconds) is refused before it starts, with an
  // InputError at `budget_key` giving the estimate and how to narrow the search.
  double max_seconds = 3600;
  std::string budget_key = "--max-time";
  // Called once with the estimate of a search within the limit, before searching (`clustersim
  // plan` prints a long one).
  std::function<void(const PlanSearchEstimate&)> estimated;
};

struct PlanSearch {
  std::size_t valid = 0;    // plans enumerated (validate() passes)
  std::size_t dropped = 0;  // of which do not fit in the GPU's memory less its headroom
  std::size_t dropped_in_headroom = 0;  // of those, within the capacity but not the headroom
  double memory_headroom = 0;           // the share of the GPU's memory a plan leaves free
  std::size_t screened = 0;  // of the rest, simulated contention-free
  std::size_t refined = 0;   // of those, simulated on the network model
  // One row per fitting plan, best first (tokens/s: the network's for refined plans, the
  // screening's for screened ones, the bound's for the others; ties in enumeration order): the
  // plan's keys, the contract's training numbers, "simulation" ("network", "screening" or
  // "bound") and "screening_tokens_per_s" (null for a bound).
  std::vector<nlohmann::json> rows;
};

// The plan space narrowed by "key=v1,v2" restrictions (`clustersim plan --only`, Python's
// cs.plan(only=...)): schedule (gpipe, 1f1b, interleaved, zb_h1), zero (0-3), recompute (none,
// selective, full), micro (micro-batch sizes), virtual_stages (for interleaved), max_cp.
// InputError at `at` naming the key or value otherwise.
work::PlanSpace plan_space(const std::vector<std::string>& only, const std::string& at = "--only");

// The search's time limit from `clustersim plan --max-time` (Python: max_time): a duration
// ("30min", "2h") or seconds ("600"), above 0. InputError at `at` otherwise.
double plan_time_limit(const std::string& text, const std::string& at = "--max-time");

// Throws InputError when the scenario's workload is not "training".
PlanSearch search_plans(const scenario::Config& config, const PlanSearchOptions& options = {});

// {"scenario", "model", "gpus", "gpu", "global_batch", "plans_valid", "plans_dropped",
// "plans_dropped_in_headroom", "memory_headroom", "plans_simulated" (the rows: every fitting
// plan), "plans_screened", "plans_refined", "plans": rows[0 .. top)} (top 0: every row).
nlohmann::json plan_search_json(const scenario::Config& config, const PlanSearch& search, std::size_t top = 0);
// Every row as CSV (a header of the row keys; a null is an empty field).
std::string plan_search_csv(const PlanSearch& search);

}  // namespace cs::studies
