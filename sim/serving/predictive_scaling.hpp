#pragma once
// Predictive scaling (as AWS EC2 Auto Scaling's predictive scaling): learn the daily load
// pattern from past days, forecast the load ahead, and launch capacity before it arrives.
//
// The load is the request rate reaching the pool, averaged into buckets (15 min) and fed to
// an additive Holt-Winters forecast with a daily season (holt_winters.hpp); the forecast is
// available after two seasons (two days) of history. Each call, the forecast capacity is
// ceil(max(forecast of the current bucket, forecast of the bucket `scheduling_buffer_s`
// ahead) / target_per_replica), so replicas launch that long before the load they are for
// (AWS's SchedulingBufferTime; cover the cold start with it).
//
// The forecast only ever raises the count: the answer is max(inner policy's answer, forecast
// capacity), clamped to min/max, as AWS runs predictive scaling in "forecast and scale" mode
// beside a dynamic policy. Scale-in therefore comes from the inner (reactive) policy alone,
// never from the forecast.
#include <memory>

#include "sim/serving/autoscaler.hpp"
#include "sim/serving/holt_winters.hpp"

namespace cs::serving {

struct PredictiveSpec {
  double target_per_replica = 10;   // requests/s one replica should carry
  double bucket_s = 900;            // forecast resolution
  double season_s = 86400;          // the pattern's period
  double scheduling_buffer_s = 300; // SchedulingBufferTime
  double alpha = 0.3;               // Holt-Winters smoothing (estimates, not tuned)
  double beta = 0.01;
  double gamma = 0.3;
};

class PredictiveScaling final : public Autoscaler {
 public:
  // `inner` is required (the reactive policy). Throws std::invalid_argument.
  PredictiveScaling(const PredictiveSpec& spec, int min_replicas, int max_replicas,
                    std::unique_ptr<Autoscaler> inner);

  double period_s() const override { return inner_->period_s(); }
  int desired(const ScalingInput& input) override;
  void prime(double now_s, int replicas) override {
    if (inner_) inner_->prime(now_s, replicas);
  }

  // Replicas the forecast asks for at `now_s` (0 before the forecast is ready).
  int forecast_replicas(double now_s) const;
  const HoltWinters& model() const { return model_; }

 private:
  void observe(double from_s, double to_s, double rate_per_s);

  PredictiveSpec spec_;
  int min_, max_;
  std::unique_ptr<Autoscaler> inner_;
  HoltWinters model_;
  double bucket_requests_ = 0;  // requests seen in the bucket being filled
};

}  // namespace cs::serving
