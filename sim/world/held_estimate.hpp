#pragma once
// What a serving fleet's and a job cluster's books will hold, estimated from their load before
// the run, for the run budget (run_budget.hpp): requests or jobs arriving faster than the
// fleet or cluster can at most finish them pile up at (arrival rate - that ceiling) for the
// whole run, and a job cluster asked for jobs.csv keeps a row for every job it is given.
//
// The estimates are lower bounds of what the run will hold, so that refusing on them never
// refuses a run that would fit:
//   - a plain server's fleet finishes at most max replicas x concurrency / mean service time
//     requests per second (its slots never idle);
//   - an LLM fleet at most max replicas x min(max_num_seqs, max_num_batched_tokens) / (mean
//     output tokens x the shortest iteration), the shortest being one sequence's decode step
//     (a request needs one iteration per output token, an iteration holds at most that many
//     sequences and tokens, and none is faster than reading the weights once);
//   - a job cluster at most its GPUs / (mean GPUs x mean duration) jobs per second;
//   - bounded queues (fleet.max_queue, fleet.queue_timeout) cap the pile-up; a trace's load is
//     not estimated (its file holds it), nor the bursts of a diurnal day (its mean rate is
//     used: the pile-up of a day above its mean is never less than at its mean).
// The run-time ceilings (held_at_most) stay for what only the run shows.
#include "sim/scenario/config.hpp"
#include "sim/world/run_budget.hpp"

namespace cs::world {

// Bytes a completed job's wait holds for the percentiles (8 B, copied once when summarized;
// measured: peak RSS grew 15.6 B per job from 1.08 M to 2.16 M one-second jobs).
inline constexpr double kBytesPerJobWait = 16;

// Adds the serving fleet's or job cluster's books to `out` (nothing for other workloads).
// `keeps_job_rows`: the run keeps every job for jobs.csv.
void add_held_books(const scenario::Config& config, bool keeps_job_rows, CostEstimate& out);

}  // namespace cs::world
