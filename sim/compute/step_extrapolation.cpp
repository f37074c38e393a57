#include "sim/compute/step_extrapolation.hpp"

#include <algorithm>
#include <stdexcept>

namespace cs::compute {

std::optional<MicroBatchPoints> extrapolation_points(const work::TrainingWorkload& w) {
  const int pp = w.parallel.pp;
  // The interleaved schedule warms up over (v - 1) pp + 2 (pp - 1) chunks: its steady state
  // needs 2 pp micro-batches; the others' needs pp.
  const int a = std::max(2, w.parallel.schedule == work::Schedule::interleaved ? 2 * pp : pp);
  const MicroBatchPoints p{a, a + pp};
  if (work::micro_batches(w) <= p.b) return std::nullopt;
  return p;
}

work::TrainingWorkload with_micro_batches(work::TrainingWorkload w, int m) {
  w.batch.global = m * w.batch.micro * w.parallel.dp;
  return w;
}

TrainingResult extrapolate_step(const work::TrainingWorkload& w, const MicroBatchPoints& points,
                                const TrainingResult& at_a, const TrainingResult& at_b, const GpuSpec& gpu,
                                const TrainingStepOptions& options) {
  if (at_a.workers.size() != at_b.workers.size() || at_a.ops.size() != at_b.ops.size())
    throw std::logic_error("extrapolate_step: the two simulations differ in shape");
  const double t = double(work::micro_batches(w) - points.a) / double(points.b - points.a);
  const auto line = [t](double a, double b) { return a + (b - a) * t; };
  TrainingResult r;
  r.step_time_s = line(at_a.step_time_s, at_b.step_time_s);
  r.compute_s = line(at_a.compute_s, at_b.compute_s);
  r.optimizer_s = line(at_a.optimizer_s, at_b.optimizer_s);
  r.bubble_s = line(at_a.bubble_s, at_b.bubble_s);
  r.slowdown_s = line(at_a.slowdown_s, at_b.slowdown_s);
  for (std::size_t i = 0; i < r.exposed_by_group.seconds.size(); ++i)
    r.exposed_by_group.seconds[i] = line(at_a.exposed_by_group.seconds[i], at_b.exposed_by_group.seconds[i]);
  r.workers = at_b.workers;
  for (std::size_t k = 0; k < r.workers.size(); ++k) {
    auto& wk = r.workers[k];
    const auto& wa = at_a.workers[k];
    wk.compute_s = line(wa.compute_s, wk.compute_s);
    wk.optimizer_s = line(wa.optimizer_s, wk.optimizer_s);
    wk.bubble_s = line(wa.bubble_s, wk.bubble_s);
    wk.slowdown_s = line(wa.slowdown_s, wk.slowdown_s);
    for (std::size_t i = 0; i < wk.exposed_s.seconds.size(); ++i)
      wk.exposed_s.seconds[i] = line(wa.exposed_s.seconds[i], wk.exposed_s.seconds[i]);
  }
  r.ops = at_b.ops;
  for (std::size_t i = 0; i < r.ops.size(); ++i) r.ops[i].seconds = line(at_a.ops[i].seconds, r.ops[i].seconds);
  derive_step_figures(r, w, gpu, options);
  r.tasks = at_a.tasks + at_b.tasks;
  r.events = at_a.events + at_b.events;
  return r;
}

}  // namespace cs::compute
