#pragma once
// What a run will cost, estimated from its inputs before anything is built, and the limit it
// must fit: run.max_memory. A run that cannot fit is refused with an input error naming the
// key that drives the cost and the estimate, never left to end in std::bad_alloc after it has
// used the machine's memory. `validate` checks the same estimate, from the parameters alone
// (topo::topology_size), at any size.
//
// The estimate is an upper bound of the memory the world and its workload allocate (bytes):
// the topology with its network models (per vertex and per cable), every flow of a traffic
// workload (spec, transfer slot, flow, class and route), every plan transfer of a collective
// (the plan, its routed matrix for the tuner, and the flow model's routes), every task of a
// training step's graph, for the main workload and the background; a serving fleet's and a job
// cluster's books where their load makes them predictable (held_estimate.hpp). Constants:
// measured on this build (README, "Limits").
//
// What is bounded instead of refused: the time series (the sampler coarsens past
// NetworkSampler::kDefaultMaxSamples per series, with a warning), the trace (at most
// kMaxTracedFlows flows).
#include <cstdint>
#include <string>
#include <vector>

#include "sim/scenario/config.hpp"

namespace cs::world {

struct CostItem {
  std::string key;   // the JSON path that drives it ("topology.nodes", "workload.pattern", ...)
  std::string what;  // "65,536 GPUs: 1.2 M vertices and 2.6 M cables"
  double bytes = 0;
  std::string hint;  // how to make it smaller, where the general one does not say
};

struct CostEstimate {
  std::vector<CostItem> items;
  double total_bytes() const;
  const CostItem& largest() const;
};

// A count for a message: "512", "86.4 M", "1.2 G".
std::string count_text(double n);

// Tasks in the graph of one training step of `w` with `micro_batches` per replica (an upper
// bound of the graph builder's count): its one simulated replica, or every data-parallel one.
double training_step_tasks(const work::TrainingWorkload& w, int micro_batches, bool every_replica);

// `keeps_job_rows`: a jobs run keeps every job for jobs.csv (held_estimate.hpp).
CostEstimate estimate_cost(const scenario::Config& config, bool keeps_job_rows = false);

// Throws InputError at the largest item's key when the estimate exceeds run.max_memory:
// "this run needs about 37 GB (...); the limit is 8 GB (run.max_memory)".
void check_cost(const scenario::Config& config, bool keeps_job_rows = false);

// What a serving fleet or a job cluster holds grows with its load, which only the run shows:
// each is given a ceiling of items held at once (requests in the system, jobs submitted and not
// finished or kept for jobs.csv) from run.max_memory, and stops past it. Bytes per item,
// measured on this build as the growth of peak RSS over the items held, rounded up: a plain
// server's queued request 58 B, an LLM server's waiting sequence 132 B (2 M more held: 252 MB);
// a waiting job 313 B, a job kept for jobs.csv 370 B.
inline constexpr double kBytesPerServingRequest = 160;
inline constexpr double kBytesPerJob = 400;
// run.max_memory / bytes_each, as a count.
uint64_t held_at_most(const scenario::Config& config, double bytes_each);
// The InputError at run.max_memory when a run passed held_at_most: "`what`: N (about X GB) at
// t = T s; the limit is L (run.max_memory)", with `hint`.
[[noreturn]] void throw_held_limit(const scenario::Config& config, double held, const std::string& what, double at_s,
                                   const std::string& hint);

// Topologies up to this many cables are built by `validate` (routes, plans and reachability
// checked on the real fabric); larger ones are checked from their parameters only.
inline constexpr double kMaxValidateBuildCables = 2e6;

}  // namespace cs::world
