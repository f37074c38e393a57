#include "sim/fleet/restore.hpp"

#include <stdexcept>
#include <string>

#include "sim/fleet/config_checks.hpp"

namespace cs::fleet {
using detail::finite_nonneg;
using detail::require;

void RestoreConfig::validate(const char* what) const {
  const std::string w(what);
  if (time_s) require(finite_nonneg(*time_s), w + ".time_s: expected a finite time >= 0");
  require(finite_nonneg(restart.fixed_s), w + ".restart.fixed_s: expected a finite time >= 0");
  require(finite_nonneg(restart.per_node_s), w + ".restart.per_node_s: expected a finite time >= 0");
  require(finite_nonneg(restart.per_log2_node_s),
          w + ".restart.per_log2_node_s: expected a finite time >= 0");
  require(finite_nonneg(warmup_s), w + ".warmup_s: expected a finite time >= 0");
  require(finite_nonneg(detection_s), w + ".detection_s: expected a finite time >= 0");
}

double restore_seconds(const RestoreConfig& restore, const CheckpointConfig& checkpoint, int nodes,
                       bool from_checkpoint) {
  if (restore.time_s) return *restore.time_s;
  double s = restore.restart.seconds(nodes) + restore.warmup_s;
  if (from_checkpoint) s += checkpoint.read_s(nodes);
  return s;
}

}  // namespace cs::fleet
