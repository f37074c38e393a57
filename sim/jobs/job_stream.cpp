#include "sim/jobs/job_stream.hpp"

#include <algorithm>
#include <cmath>
#include <stdexcept>

namespace cs::jobs {

JobStream::JobStream(uint64_t seed, const JobsConfig& config)
    : config_(config),
      time_rng_(seed, config.series_prefix + "/arrivals"),
      demand_rng_(seed, config.series_prefix + "/requests"),
      class_rng_(seed, config.series_prefix + "/classes"),
      gpus_rng_(seed, config.series_prefix + "/gpus"),
      duration_rng_(seed, config.series_prefix + "/durations") {
  if (!config.trace_path.empty()) {
    trace_file_ = std::make_unique<std::ifstream>(config.trace_path);
    if (!*trace_file_) throw std::invalid_argument("trace: cannot open '" + config.trace_path + "'");
    trace_ = std::make_unique<work::JobTraceReader>(*trace_file_);
    return;
  }
  // Only the arrival times are drawn by the source: a request of no service time draws nothing.
  work::RequestSpec no_demand;
  no_demand.service_time = work::Distribution::constant(0.0);
  arrivals_ = std::make_unique<sources::ArrivalSource>(time_rng_, demand_rng_, config.arrivals, no_demand,
                                                       sources::DemandKind::service_time);
  std::vector<double> shares;
  for (const JobClass& c : config.classes) {
    shares.push_back(c.share);
    gpus_.emplace_back(c.gpus);
    durations_.emplace_back(c.duration);
  }
  classes_ = shares.size();
  shares_ = engine::DiscreteTable(shares.data(), shares.size());
}

int JobStream::gpu_limit(int queue) const {
  return std::min(config_.total_gpus(), config_.scheduler.queues[static_cast<std::size_t>(queue)].max_gpus);
}

// Both out of line, so that a draw needs no stack frame for the error's copies.
[[gnu::cold, gnu::noinline]] void JobStream::raise_failed() const { std::rethrow_exception(failed_); }
[[gnu::cold, gnu::noinline]] void JobStream::keep_failure() { failed_ = std::current_exception(); }

bool JobStream::next(JobRequest& into) {
  if (failed_) [[unlikely]] raise_failed();
  if (config_.max_jobs >= 0 && generated_ >= config_.max_jobs) return false;
  bool drawn = false;
  try {
    drawn = trace_ ? from_trace(into) : from_classes(into);
  } catch (...) {
    // The trace reader has moved past the bad row: without this, the next call would give the
    // rows after it, where a feed drawing ahead raises the error again.
    keep_failure();
    throw;
  }
  if (drawn) ++generated_;
  return drawn;
}

bool JobStream::from_classes(JobRequest& r) {
  const std::optional<sources::Arrival> a = arrivals_->next();
  if (!a) return false;
  r.submit_s = a->time_s;
  r.job_class = classes_ == 1 ? 0 : static_cast<int>(class_rng_.discrete(shares_));
  const auto k = static_cast<std::size_t>(r.job_class);
  r.queue = config_.classes[k].queue;
  const double drawn = gpus_[k](gpus_rng_);
  r.gpus = std::clamp<int64_t>(std::llround(drawn), 1, gpu_limit(r.queue));
  r.duration_s = durations_[k](duration_rng_);
  return true;
}

bool JobStream::from_trace(JobRequest& into) {
  const std::optional<work::JobTraceRecord> t = trace_->next();
  if (!t) return false;
  JobRequest r;
  r.submit_s = t->submit_s;
  r.gpus = t->gpus;
  r.duration_s = t->duration_s;
  const auto& queues = config_.scheduler.queues;
  if (!t->queue.empty()) {
    const auto it = std::find_if(queues.begin(), queues.end(), [&](const QueueConfig& q) { return q.name == t->queue; });
    if (it == queues.end())
      throw std::invalid_argument("trace line " + std::to_string(trace_->line()) + ": unknown queue '" + t->queue +
                                  "' (the scheduler's queues are named in fleet.scheduler.queues)");
    r.queue = static_cast<int>(it - queues.begin());
  }
  if (!t->job_class.empty()) {
    const auto& classes = config_.classes;
    const auto it = std::find_if(classes.begin(), classes.end(), [&](const JobClass& c) { return c.name == t->job_class; });
    if (it == classes.end())
      throw std::invalid_argument("trace line " + std::to_string(trace_->line()) + ": unknown class '" + t->job_class +
                                  "' (classes are named in workload.classes)");
    r.job_class = static_cast<int>(it - classes.begin());
  }
  into = r;
  return true;
}

}  // namespace cs::jobs
