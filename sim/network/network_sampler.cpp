#include "sim/network/network_sampler.hpp"

#include <algorithm>
#include <map>

#include "sim/engine/priority.hpp"
#include "topology/report.hpp"

namespace cs::net {

NetworkSampler::NetworkSampler(const Comm& comm, engine::Simulator& sim, double interval_s,
                               const topo::Topology* topology)
    : comm_(comm), sim_(sim), interval_s_(interval_s), topology_(topology) {}

void NetworkSampler::start() {
  if (topology_ && class_of_.empty()) {
    std::map<std::string, uint32_t> index;
    class_of_.resize(topology_->num_links());
    for (topo::LinkId l = 0; l < topology_->num_links(); ++l) {
      const auto [it, added] = index.emplace(topo::link_class(*topology_, l), static_cast<uint32_t>(index.size()));
      if (added) {
        max_series_.push_back("link_util_max." + it->first);
        mean_series_.push_back("link_util_mean." + it->first);
        class_links_.push_back(0);
      }
      class_of_[l] = it->second;
      ++class_links_[it->second];
    }
  }
  sim_.schedule_at(sim_.now(), *this, 0, engine::priority::observe);
}

void NetworkSampler::on_event(uint64_t) {
  const double now = sim_.now();
  auto& rec = sim_.recorder();
  rec.sample("active_flows", now, static_cast<double>(comm_.active_flows()));
  rec.sample("active_transfers", now, static_cast<double>(comm_.active_transfers()));
  rec.sample("transfers_completed", now, static_cast<double>(comm_.transfers_completed()));
  if (topology_) sample_links(now);
  if (comm_.active_transfers() > 0 || sim_.pending() > 0)
    sim_.schedule_in(interval_s_, *this, 0, engine::priority::observe);
}

void NetworkSampler::sample_links(double now) {
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
    for (std::size_t c = 0; c < class_links_.size(); ++c) {
      if (!(max_[c] > 0) && !(sum_[c] > 0)) continue;  // an idle class: no series
      sim_.recorder().sample(max_series_[c], now, max_[c]);
      sim_.recorder().sample(mean_series_[c], now, sum_[c] / class_links_[c]);
    }
  }
  last_bytes_ = bytes;
  last_t_ = now;
}

}  // namespace cs::net
