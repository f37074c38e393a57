#include "sim/serving/holt_winters.hpp"

#include <stdexcept>

#include <Eigen/Dense>

namespace cs::serving {

HoltWinters::HoltWinters(std::size_t season_length, double alpha, double beta, double gamma)
    : m_(season_length), alpha_(alpha), beta_(beta), gamma_(gamma) {
  const auto share = [](double x) { return x >= 0 && x <= 1; };
  if (m_ < 2) throw std::invalid_argument("holt_winters: the season needs >= 2 samples");
  if (!share(alpha_) || !share(beta_) || !share(gamma_))
    throw std::invalid_argument("holt_winters: alpha, beta and gamma must be in [0, 1]");
  history_.reserve(2 * m_);
}

void HoltWinters::initialize() {
  // Unknowns: level, trend, s_0 .. s_{m-2}; s_{m-1} = -(s_0 + ... + s_{m-2}).
  const auto n = static_cast<Eigen::Index>(history_.size());
  const auto m = static_cast<Eigen::Index>(m_);
  Eigen::MatrixXd a = Eigen::MatrixXd::Zero(n, m + 1);
  Eigen::VectorXd b(n);
  for (Eigen::Index t = 0; t < n; ++t) {
    a(t, 0) = 1;
    a(t, 1) = static_cast<double>(t);
    const Eigen::Index phase = t % m;
    if (phase < m - 1) {
      a(t, 2 + phase) = 1;
    } else {
      a.block(t, 2, 1, m - 1).setConstant(-1);
    }
    b(t) = history_[static_cast<std::size_t>(t)];
  }
  const Eigen::VectorXd fit = a.colPivHouseholderQr().solve(b);
  trend_ = fit(1);
  level_ = fit(0) + trend_ * static_cast<double>(n - 1);  // the level at the last sample
  season_.assign(m_, 0.0);
  double last = 0;
  for (Eigen::Index k = 0; k < m - 1; ++k) {
    season_[static_cast<std::size_t>(k)] = fit(2 + k);
    last -= fit(2 + k);
  }
  season_[m_ - 1] = last;
  history_.clear();
  history_.shrink_to_fit();
  initialized_ = true;
}

void HoltWinters::add(double x) {
  if (!initialized_) {
    history_.push_back(x);
    ++count_;
    if (history_.size() == 2 * m_) initialize();
    return;
  }
  double& s = season_[count_ % m_];
  const double previous_level = level_;
  level_ = alpha_ * (x - s) + (1 - alpha_) * (level_ + trend_);
  trend_ = beta_ * (level_ - previous_level) + (1 - beta_) * trend_;
  s = gamma_ * (x - level_) + (1 - gamma_) * s;
  ++count_;
}

double HoltWinters::forecast(std::size_t h) const {
  if (!initialized_ || h == 0) return 0;
  // The last sample added has index count_ - 1; the forecast is for index count_ - 1 + h.
  return level_ + static_cast<double>(h) * trend_ + season_[(count_ - 1 + h) % m_];
}

}  // namespace cs::serving
