#pragma once
// The jobs a cluster is asked to run, generated one at a time, one per call: the next
// submission from the arrival process and its class, GPU count and duration from the classes'
// distributions; or the next row of a job trace (workloads/job_trace.hpp), read record by
// record. The stream itself keeps nothing ahead; job_feed.hpp may call it ahead of the
// simulation, on another thread.
//
// Classes: a job's class is drawn by the classes' arrival shares; its GPU count is drawn from
// the class's distribution, rounded to the nearest whole number and clamped to [1, the most its
// queue may hold and the cluster has]; its duration is drawn from the class's distribution.
// The arrival times come from the serving workload's arrival source (sim/fleet/
// arrival_source.hpp: Poisson, diurnal by thinning, bursty), the same process for jobs as for
// requests.
// Random streams: "<prefix>/arrivals" (times), "<prefix>/classes", "<prefix>/gpus",
// "<prefix>/durations", so changing a class's durations does not move the arrivals. The stream
// owns them (the streams the Simulator seeded with the same seed would give under those names,
// engine::stream_seed): nothing the simulation does reaches the draws, and a stream touches no
// Simulator, so it can draw on another thread (job_feed.hpp) with the same sequence.
#include <cstdint>
#include <exception>
#include <fstream>
#include <memory>
#include <optional>
#include <vector>

#include "sim/engine/random.hpp"
#include "sim/jobs/jobs_config.hpp"
#include "sim/sources/arrival_source.hpp"
#include "sim/sources/distribution.hpp"
#include "workloads/job_trace.hpp"

namespace cs::jobs {

struct JobRequest {
  double submit_s = 0.0;
  int64_t gpus = 1;         // a trace's count as written (the cluster refuses what cannot fit)
  double duration_s = 0.0;  // on a compact placement
  int queue = 0;
  int job_class = -1;       // -1: a trace job without a class
};

class JobStream {
 public:
  // Throws std::invalid_argument when the trace cannot be opened or lacks a column; a
  // malformed row, an unknown queue or class throws when it is read.
  // `seed`: the simulation's (engine::Simulator::seed). `config` must outlive the stream.
  JobStream(uint64_t seed, const JobsConfig& config);
  JobStream(const JobStream&) = delete;
  JobStream& operator=(const JobStream&) = delete;
  // The next job (submission times never decrease); nullopt after max_jobs or the trace's end.
  // After an error (a malformed trace row) every call raises it again: the stream has failed
  // there, whichever thread draws it (job_feed.hpp raises a producer's error at every call).
  std::optional<JobRequest> next() {
    JobRequest r;
    if (!next(r)) return std::nullopt;
    return r;
  }
  // The same, written into `into` (false, and `into` left as it is, at the end): a feed draws
  // into its block's slot directly (a JobRequest returned through optionals was copied twice,
  // each copy's wide reads stalled on the narrow writes just made).
  bool next(JobRequest& into);
  int64_t generated() const { return generated_; }

 private:
  bool from_classes(JobRequest& into);
  bool from_trace(JobRequest& into);
  int gpu_limit(int queue) const;
  [[noreturn]] void raise_failed() const;  // raises failed_ again
  void keep_failure();                      // failed_ = the error being handled

  const JobsConfig& config_;
  // arrivals_ draws from the first two (times; demands, of which it draws none here).
  engine::RandomStream time_rng_, demand_rng_, class_rng_, gpus_rng_, duration_rng_;
  std::unique_ptr<sources::ArrivalSource> arrivals_;
  std::size_t classes_ = 0;
  engine::DiscreteTable shares_;  // the classes' arrival shares
  // Each class's GPU count and duration samplers, built once: building one per job copied the
  // distribution (an empirical one's vectors) every time.
  std::vector<sources::DistributionSampler> gpus_, durations_;
  std::unique_ptr<std::ifstream> trace_file_;
  std::unique_ptr<work::JobTraceReader> trace_;
  int64_t generated_ = 0;
  std::exception_ptr failed_;  // the error the stream failed with, raised again by next()
};

}  // namespace cs::jobs
