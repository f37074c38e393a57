#include "sim/jobs/fair_share.hpp"

#include <cmath>
#include <limits>
#include <numbers>
#include <stdexcept>

namespace cs::jobs {

FairShare::FairShare(std::vector<double> quotas, double half_life_s, double now_s)
    : shares_(std::move(quotas)),
      half_life_s_(half_life_s),
      usage_(shares_.size(), 0.0),
      held_(shares_.size(), 0.0),
      since_(shares_.size(), now_s) {
  if (!(half_life_s >= 0.0)) throw std::invalid_argument("FairShare: half-life must be >= 0");
  double total = 0.0;
  for (const double q : shares_) {
    if (!(q >= 0.0) || !std::isfinite(q)) throw std::invalid_argument("FairShare: quotas must be finite and >= 0");
    total += q;
  }
  for (double& q : shares_) q = total > 0.0 ? q / total : 0.0;
}

// decay and accrued inline in usage (each a call with its frame around the exponential, asked
// at every start and end of a job).
[[gnu::always_inline]] inline double FairShare::decay(double dt) const {
  return half_life_s_ > 0.0 ? std::exp2(-dt / half_life_s_) : 1.0;
}

[[gnu::always_inline]] inline double FairShare::accrued(double gpus, double dt) const {
  if (half_life_s_ <= 0.0) return gpus * dt;
  // Integral of g 2^(-(t - s)/h) ds over the last dt seconds; expm1 keeps it exact for small dt.
  return -gpus * (half_life_s_ / std::numbers::ln2) * std::expm1(-dt * std::numbers::ln2 / half_life_s_);
}

[[gnu::always_inline]] inline double FairShare::usage_of(std::size_t q, double now_s) const {
  const double dt = now_s - since_[q];
  // Asked again at the instant it was set (another start or end in the queue at that instant,
  // the pass after it): the formula's value is exactly usage_[q] (d = 2^-0 = 1, and the
  // accrual's expm1(-0) = -0 adds +0), without its two exponentials.
  if (dt == 0.0) return usage_[q];
  return usage_[q] * decay(dt) + accrued(held_[q], dt);
}

double FairShare::usage(int queue, double now_s) const { return usage_of(static_cast<std::size_t>(queue), now_s); }

void FairShare::set_held(int queue, double gpus, double now_s) {
  // The usage inline (every start and end of a job sets its queue's holding: the call was a
  // frame around the two exponentials).
  const auto q = static_cast<std::size_t>(queue);
  usage_[q] = usage_of(q, now_s);
  since_[q] = now_s;
  held_[q] = gpus;
}

std::vector<double> FairShare::factors(double now_s) const {
  std::vector<double> f;
  factors(now_s, f);
  return f;
}

void FairShare::factors(double now_s, std::vector<double>& f) const {
  factor_exponents(now_s, f);
  for (double& x : f) x = std::exp2(x);
}

void FairShare::factor_exponents(double now_s, std::vector<double>& x) const {
  x.resize(shares_.size());
  double total = 0.0;  // the usages first, in x, then each becomes its exponent
  for (std::size_t q = 0; q < x.size(); ++q) total += x[q] = usage_of(q, now_s);
  for (std::size_t q = 0; q < x.size(); ++q) {
    const double normalized = total > 0.0 ? x[q] / total : 0.0;
    x[q] = shares_[q] > 0.0 ? -normalized / shares_[q] : -std::numeric_limits<double>::infinity();
  }
}

}  // namespace cs::jobs
