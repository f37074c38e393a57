#include "sim/network/network_sampler.hpp"

#include <algorithm>
#include <cmath>
#include <map>
#include <stdexcept>

#include "sim/engine/priority.hpp"
#include "topology/report.hpp"

namespace cs::net {

namespace {
constexpr uint32_t kFlows = 0, kTransfers = 1, kCompleted = 2, kFirstClass = 3;
}

NetworkSampler::NetworkSampler(const Comm& comm, engine::Simulator& sim, double interval_s,
                               const topo::Topology* topology, std::size_t max_samples)
    : comm_(comm), sim_(sim), requested_s_(interval_s), interval_s_(interval_s), topology_(topology),
      max_samples_(max_samples), series_{"active_flows", "active_transfers", "transfers_completed"} {
  if (!(interval_s > 0) || !std::isfinite(interval_s))
    throw std::invalid_argument("NetworkSampler: interval must be finite and > 0");
  if (max_samples < 2) throw std::invalid_argument("NetworkSampler: max_samples must be >= 2");
}

void NetworkSampler::start() {
  if (topology_ && class_of_.empty()) {
    std::map<std::string, uint32_t> index;
    class_of_.resize(topology_->num_links());
    for (topo::LinkId l = 0; l < topology_->num_links(); ++l) {
      const auto [it, added] = index.emplace(topo::link_class(*topology_, l), static_cast<uint32_t>(index.size()));
      if (added) {
        series_.push_back("link_util_max." + it->first);
        series_.push_back("link_util_mean." + it->first);
        class_links_.push_back(0);
      }
      class_of_[l] = it->second;
      ++class_links_[it->second];
    }
  }
  t0_ = sim_.now();
  index_ = 0;
  sim_.schedule_at(t0_, *this, 0, engine::priority::observe);
}

void NetworkSampler::on_event(uint64_t) {
  Row row{sim_.now(), {}};
  row.values.emplace_back(kFlows, static_cast<double>(comm_.active_flows()));
  row.values.emplace_back(kTransfers, static_cast<double>(comm_.active_transfers()));
  row.values.emplace_back(kCompleted, static_cast<double>(comm_.transfers_completed()));
  if (topology_) sample_links(row);
  rows_.push_back(std::move(row));
  if (rows_.size() >= max_samples_) coarsen();
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

void NetworkSampler::coarsen() {
  // Keep the samples on the coarser grid (even k), double the interval: the series stays a
  // regular grid from t0. The sample just taken sits at an odd k when the count was even: it
  // is dropped, and the next one falls on the coarser grid.
  std::size_t j = 0;
  for (std::size_t i = 0; i < rows_.size(); i += 2, ++j)
    if (i != j) rows_[j] = std::move(rows_[i]);  // a self-move would empty the row
  rows_.resize(j);
  const bool last_on_grid = index_ % 2 == 0;
  interval_s_ *= 2;
  index_ = last_on_grid ? index_ / 2 : (index_ - 1) / 2;
}

void NetworkSampler::sample_links(Row& row) {
  const double now = row.time;
  const std::vector<double> bytes = comm_.link_usage().bytes;
  if (last_t_ >= 0 && now > last_t_) {
    const double dt = now - last_t_;
    max_.assign(class_links_.size(), 0.0);
    sum_.assign(class_links_.size(), 0.0);
    for (topo::LinkId l = 0; l < bytes.size(); ++l) {
      const double u = (bytes[l] - last_bytes_[l]) / (topology_->link(l).bandwidth_Bps * dt);
      max_[class_of_[l]] = std::max(max_[class_of_[l]], u);
      sum_[class_of_[l]] += u;
    }
    for (uint32_t c = 0; c < class_links_.size(); ++c) {
      if (!(max_[c] > 0) && !(sum_[c] > 0)) continue;  // an idle class: no series
      row.values.emplace_back(kFirstClass + 2 * c, max_[c]);
      row.values.emplace_back(kFirstClass + 2 * c + 1, sum_[c] / class_links_[c]);
    }
  }
  last_bytes_ = bytes;
  last_t_ = now;
}

void NetworkSampler::flush() {
  auto& rec = sim_.recorder();
  for (const Row& row : rows_)
    for (const auto& [index, value] : row.values) rec.sample(series_[index], row.time, value);
  rows_.clear();
}

}  // namespace cs::net
