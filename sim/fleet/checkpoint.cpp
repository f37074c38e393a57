#include "sim/fleet/checkpoint.hpp"

#include <cmath>
#include <limits>
#include <stdexcept>
#include <string>

namespace cs::fleet {

double CheckpointConfig::write_s(int nodes) const {
  if (write_time_s) return *write_time_s;
  const int writers = pattern == WritePattern::sharded ? nodes : 1;
  return storage.write_time_s(size_bytes, writers);
}

double CheckpointConfig::read_s(int nodes) const {
  const int readers = pattern == WritePattern::sharded ? nodes : 1;
  return storage.read_time_s(size_bytes, readers);
}

double CheckpointConfig::snapshot_s(int nodes) const {
  if (mode == CheckpointMode::sync || size_bytes <= 0.0) return 0.0;
  const int copiers = pattern == WritePattern::sharded ? std::max(nodes, 1) : 1;
  return size_bytes / (copiers * snapshot_Bps_per_node);
}

double CheckpointConfig::blocking_s(int nodes) const {
  return mode == CheckpointMode::sync ? write_s(nodes) : snapshot_s(nodes);
}

double CheckpointConfig::durable_s(int nodes) const { return snapshot_s(nodes) + write_s(nodes); }

void CheckpointConfig::validate(const char* what) const {
  const std::string w(what);
  if (interval_s && !(*interval_s > 0.0))
    throw std::invalid_argument(w + ".interval_s: expected a time > 0 (or auto)");
  if (!(size_bytes >= 0.0) || !std::isfinite(size_bytes))
    throw std::invalid_argument(w + ".size_bytes: expected a finite size >= 0");
  if (write_time_s && (!(*write_time_s >= 0.0) || !std::isfinite(*write_time_s)))
    throw std::invalid_argument(w + ".write_time_s: expected a finite time >= 0");
  if (!(snapshot_Bps_per_node > 0.0))
    throw std::invalid_argument(w + ".snapshot_Bps_per_node: expected a bandwidth > 0");
  storage.validate((w + ".storage").c_str());
}

double young_daly_interval_s(double checkpoint_s, double mtbf_s) {
  if (!(mtbf_s > 0.0)) throw std::invalid_argument("young_daly_interval_s: need mtbf > 0");
  if (!std::isfinite(mtbf_s)) return std::numeric_limits<double>::infinity();
  if (checkpoint_s >= 2.0 * mtbf_s) return mtbf_s;
  const double x = checkpoint_s / (2.0 * mtbf_s);
  return std::sqrt(2.0 * checkpoint_s * mtbf_s) * (1.0 + std::sqrt(x) / 3.0 + x / 9.0) -
         checkpoint_s;
}

double daly_expected_wall_time_s(double work_s, double tau_s, double checkpoint_s, double mtbf_s,
                                 double restart_s) {
  return mtbf_s * std::exp(restart_s / mtbf_s) * std::expm1((tau_s + checkpoint_s) / mtbf_s) *
         work_s / tau_s;
}

}  // namespace cs::fleet
