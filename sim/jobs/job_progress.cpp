#include "sim/jobs/job_progress.hpp"

#include <algorithm>
#include <cmath>

namespace cs::jobs {

namespace {

// checkpoints_planned(), inline in this file's callers (a start asks for the end, a release
// for the progress: each was a call to it).
[[gnu::always_inline]] inline int64_t planned_checkpoints(const RunSegment& r) {
  const double remaining = r.total_work - r.work0;
  if (!std::isfinite(r.plan.interval_work_s) || !(remaining > 0.0)) return 0;
  // Checkpoints at work0 + k * interval for every k with that point strictly before the end.
  const double k = std::ceil(remaining / r.plan.interval_work_s) - 1.0;
  return static_cast<int64_t>(std::max(0.0, k));
}

}  // namespace

int64_t RunSegment::checkpoints_planned() const { return planned_checkpoints(*this); }

double RunSegment::end_s() const {
  return start_s + overhead_s + (total_work - work0) / rate +
         static_cast<double>(planned_checkpoints(*this)) * plan.blocking_s;
}

int64_t RunSegment::checkpoints_at(double t) const { return progress_at(t).checkpoints; }

double RunSegment::work_at(double t) const { return progress_at(t).work; }

RunSegment::Progress RunSegment::progress_at(double t) const {
  Progress p{work0, 0};
  const double e = t - start_s - overhead_s;
  if (!(e > 0.0)) return p;
  const int64_t planned = planned_checkpoints(*this);
  if (planned == 0) {
    p.work = std::min(total_work, work0 + e * rate);
    return p;
  }
  const double cycle = cycle_s();
  const double k = std::floor(e / cycle);
  p.checkpoints = std::min(planned, static_cast<int64_t>(k));
  const double into = e - k * cycle;
  const double base = work0 + k * plan.interval_work_s;
  // Working through the interval, or stopped for its checkpoint (the interval done).
  const double done = into < plan.interval_work_s / rate ? base + into * rate
                                                          : base + plan.interval_work_s;
  p.work = std::min(total_work, done);
  return p;
}

double RunSegment::committed_at(double t) const {
  const int64_t planned = planned_checkpoints(*this);
  if (planned == 0) return work0;
  const double e = t - start_s - overhead_s - plan.lag_s;
  if (!(e > 0.0)) return work0;
  const int64_t k = std::min(planned, static_cast<int64_t>(std::floor(e / cycle_s())));
  return work0 + static_cast<double>(k) * plan.interval_work_s;
}

}  // namespace cs::jobs
