#include "sim/world/held_estimate.hpp"

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <limits>
#include <string>

#include "sim/scenario/quantity.hpp"
#include "sim/serving/llm_timing.hpp"

namespace cs::world {

using namespace cs::scenario;
namespace {

std::string per_second(double rate) {
  if (rate >= 1e4) return count_text(rate) + "/s";
  char buf[48];
  std::snprintf(buf, sizeof buf, "%.4g/s", rate);
  return buf;
}

// Replicas a pool may reach: fixed's count, else the autoscaler's max.
double most_replicas(const serving::AutoscalerSpec& a) {
  return a.policy == serving::ScalingPolicy::fixed ? a.replicas : std::max(a.replicas, a.max_replicas);
}

// The most requests per second one LLM replica can finish (the header's bound).
double llm_replica_ceiling(const serving::LlmReplicaSpec& spec, double mean_output_tokens) {
  const serving::IterationCost cost(spec.timing);
  serving::IterationWork one;
  one.decode_sequences = 1;
  const double shortest_s = cost.seconds(one);
  const double per_iteration = std::min<double>(spec.batching.max_num_seqs, double(spec.batching.max_num_batched_tokens));
  if (!(shortest_s > 0) || !(mean_output_tokens > 0)) return std::numeric_limits<double>::infinity();
  return per_iteration / (mean_output_tokens * shortest_s);
}

// The most requests per second the fleet can finish, and what bounds it, for the message.
struct Ceiling {
  double per_s = std::numeric_limits<double>::infinity();
  std::string what;
};

Ceiling serving_ceiling(const serving::ServingConfig& c) {
  Ceiling out;
  if (c.replica.kind == serving::ReplicaKind::server) {
    const double service_s = c.request.service_time.expected();
    if (!(service_s > 0)) return out;
    const double replicas = most_replicas(c.fleet.autoscaler);
    out.per_s = replicas * c.replica.server.concurrency / service_s;
    out.what = count_text(replicas) + " replicas x " + std::to_string(c.replica.server.concurrency) +
               " slots / " + format_quantity(service_s, QuantityKind::time) + " mean service time";
    return out;
  }
  const double out_tokens = c.request.output_tokens.expected();
  const double decode_replicas =
      most_replicas(c.disaggregated.enabled ? c.disaggregated.decode.autoscaler : c.fleet.autoscaler);
  out.per_s = decode_replicas * llm_replica_ceiling(c.replica.llm, out_tokens);
  out.what = count_text(decode_replicas) + " replicas, each at most " +
             per_second(out.per_s / decode_replicas) + " (a full batch of " + count_text(out_tokens) +
             "-token outputs at one sequence's iteration time)";
  return out;
}

// Requests (or jobs) that pile up by the end: (rate - ceiling) x horizon, at least 0.
double pile_up(double rate, double ceiling, double horizon_s) {
  return std::isfinite(ceiling) && rate > ceiling ? (rate - ceiling) * horizon_s : 0.0;
}

void add_serving(const serving::ServingConfig& c, CostEstimate& out) {
  const double rate = work::mean_rate(c.arrivals);
  if (!(rate > 0)) return;  // a trace: its file holds its load
  const Ceiling ceiling = serving_ceiling(c);
  double held = pile_up(rate, ceiling.per_s, c.until_s);
  if (held <= 0) return;
  // A bounded balancer queue drops past its length, a timeout past its wait.
  const serving::PoolSpec& pool = c.fleet.pool;
  if (pool.max_queue != std::numeric_limits<std::size_t>::max()) held = std::min(held, double(pool.max_queue));
  if (std::isfinite(pool.queue_timeout_s)) held = std::min(held, rate * pool.queue_timeout_s);
  out.items.push_back({"workload.arrivals.rate",
                       count_text(held) + " requests waiting by the end: " + per_second(rate) +
                           " arrive and the fleet serves at most " + per_second(ceiling.per_s) + " (" + ceiling.what +
                           ") for " + format_quantity(c.until_s, QuantityKind::time),
                       held * kBytesPerServingRequest,
                       "more replicas (fleet.autoscaler.max), a lower rate or a shorter run.until, or fleet.max_queue "
                       "and fleet.queue_timeout to drop what waits too long; or raise run.max_memory"});
}

void add_jobs(const Config& config, bool keeps_job_rows, CostEstimate& out) {
  const jobs::JobsConfig& c = config.jobs;
  if (!c.trace_path.empty() || c.classes.empty()) return;  // a trace: its file holds its load
  const double rate = work::mean_rate(c.arrivals);
  if (!(rate > 0)) return;
  const double horizon_s = c.max_jobs >= 0 ? std::min(c.until_s, double(c.max_jobs) / rate) : c.until_s;
  if (!std::isfinite(horizon_s)) return;
  const double submitted = rate * horizon_s;
  // Mean GPU-seconds per job over the classes' shares of the arrivals.
  double shares = 0, gpu_s = 0;
  for (const jobs::JobClass& k : c.classes) {
    shares += k.share;
    gpu_s += k.share * std::max(1.0, k.gpus.expected()) * k.duration.expected();
  }
  gpu_s /= shares;
  const double ceiling = gpu_s > 0 ? c.total_gpus() / gpu_s : std::numeric_limits<double>::infinity();
  const double waiting = pile_up(rate, ceiling, horizon_s);
  const double rows = keeps_job_rows ? submitted - waiting : 0;
  const double waits = submitted - waiting;  // every finished job's wait, for the percentiles
  const double bytes = (waiting + rows) * kBytesPerJob + waits * kBytesPerJobWait;
  std::string what = count_text(submitted) + " jobs submitted (" + per_second(rate) + " for " +
                     format_quantity(horizon_s, QuantityKind::time) + ")";
  if (waiting > 0)
    what += ", " + count_text(waiting) + " still waiting by the end (the cluster's " + std::to_string(c.total_gpus()) +
            " GPUs finish at most " + per_second(ceiling) + ")";
  if (keeps_job_rows) what += ", a jobs.csv row kept for each";
  out.items.push_back({c.max_jobs >= 0 ? "workload.jobs" : "workload.arrivals.rate", what, bytes,
                       "fewer or shorter jobs, a lower rate, a shorter run.until, or more nodes; or raise run.max_memory"});
}

}  // namespace

void add_held_books(const Config& config, bool keeps_job_rows, CostEstimate& out) {
  if (config.workload == WorkloadKind::serving) add_serving(config.serving, out);
  else if (config.workload == WorkloadKind::jobs) add_jobs(config, keeps_job_rows, out);
}

}  // namespace cs::world
