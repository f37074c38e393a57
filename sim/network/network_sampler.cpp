#include "sim/network/network_sampler.hpp"

#include <cmath>
#include <stdexcept>

namespace cs::net {

NetworkSampler::NetworkSampler(const Comm& comm, engine::Simulator& sim, double interval_s, std::size_t max_samples)
    : comm_(comm), sim_(sim), requested_s_(interval_s), interval_s_(interval_s), max_samples_(max_samples) {
  if (!(interval_s > 0) || !std::isfinite(interval_s))
    throw std::invalid_argument("NetworkSampler: interval must be finite and > 0");
  if (max_samples < 2) throw std::invalid_argument("NetworkSampler: max_samples must be >= 2");
}

void NetworkSampler::start() {
  t0_ = sim_.now();
  index_ = 0;
  sim_.schedule_at(t0_, *this, 0, engine::priority::observe);
}

void NetworkSampler::on_event(uint64_t) {
  time_.push_back(sim_.now());
  flows_.push_back(static_cast<double>(comm_.active_flows()));
  transfers_.push_back(static_cast<double>(comm_.active_transfers()));
  completed_.push_back(static_cast<double>(comm_.transfers_completed()));
  if (time_.size() >= max_samples_) {
    // Keep the samples on the coarser grid (even k), double the interval: the series stays a
    // regular grid from t0.
    auto keep_even = [](std::vector<double>& v) {
      std::size_t j = 0;
      for (std::size_t i = 0; i < v.size(); i += 2) v[j++] = v[i];
      v.resize(j);
    };
    // The sample just taken sits at an odd k when the count was even: it is dropped, and the
    // next one falls on the coarser grid.
    const bool last_on_grid = index_ % 2 == 0;
    for (auto* v : {&time_, &flows_, &transfers_, &completed_}) keep_even(*v);
    interval_s_ *= 2;
    index_ = last_on_grid ? index_ / 2 : (index_ - 1) / 2;
  }
  if (comm_.active_transfers() == 0 && sim_.pending() == 0) return;
  // The next grid point strictly after now; a grid finer than the clock's resolution here is
  // coarsened until it moves the clock.
  double next = t0_ + static_cast<double>(index_ + 1) * interval_s_;
  while (!(next > sim_.now())) {
    interval_s_ *= 2;
    index_ /= 2;
    next = t0_ + static_cast<double>(index_ + 1) * interval_s_;
  }
  ++index_;
  sim_.schedule_at(next, *this, 0, engine::priority::observe);
}

void NetworkSampler::flush() {
  auto& rec = sim_.recorder();
  for (std::size_t i = 0; i < time_.size(); ++i) {
    rec.sample("active_flows", time_[i], flows_[i]);
    rec.sample("active_transfers", time_[i], transfers_[i]);
    rec.sample("transfers_completed", time_[i], completed_[i]);
  }
  time_.clear();
  flows_.clear();
  transfers_.clear();
  completed_.clear();
}

}  // namespace cs::net
