#pragma once
// Scheduled scaling (AWS scheduled actions, KEDA's cron scaler): actions that set the
// minimum and maximum replica counts at given times, once or on a recurrence (every day at
// 08:00: at 8 h, recurrence 24 h). The latest action to have fired sets the bounds; before
// any has fired the autoscaler's own min/max hold.
//
// Alone, the count is the current one clamped to the active bounds (an action with min = max
// = n holds n replicas). With an inner policy (the dynamic policy it accompanies), the inner
// policy's answer is clamped to the active bounds instead.
#include <memory>
#include <vector>

#include "sim/serving/autoscaler.hpp"

namespace cs::serving {

struct ScheduledAction {
  double at_s = 0;          // first time it fires
  double recurrence_s = 0;  // > 0: fires again every recurrence_s; 0: once
  int min_replicas = 1;
  int max_replicas = 1;
};

struct ScheduledSpec {
  double period_s = 60;  // how often the schedule is looked at (alone)
  std::vector<ScheduledAction> actions;
};

class ScheduledScaling final : public Autoscaler {
 public:
  // `inner` may be null. Throws std::invalid_argument on an action with min > max.
  ScheduledScaling(const ScheduledSpec& spec, int min_replicas, int max_replicas,
                   std::unique_ptr<Autoscaler> inner = nullptr);

  double period_s() const override { return inner_ ? inner_->period_s() : spec_.period_s; }
  int desired(const ScalingInput& input) override;
  void prime(double now_s, int replicas) override {
    if (inner_) inner_->prime(now_s, replicas);
  }

  // The (min, max) in force at time t.
  std::pair<int, int> bounds_at(double t_s) const;

 private:
  ScheduledSpec spec_;
  int min_, max_;
  std::unique_ptr<Autoscaler> inner_;
};

}  // namespace cs::serving
