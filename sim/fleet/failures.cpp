#include "sim/fleet/failures.hpp"

#include <cmath>
#include <stdexcept>

namespace cs::fleet {

std::vector<FailureCause> llama3_failure_causes() {
  // Counts from the Llama 3 paper's Table 5 (sum 419).
  return {
      {"faulty_gpu", 148, true},
      {"gpu_hbm3_memory", 72, true},
      {"software_bug", 54, false},
      {"network_switch_or_cable", 35, true},
      {"host_maintenance", 32, true},
      {"gpu_sram_memory", 19, true},
      {"gpu_system_processor", 17, true},
      {"nic", 7, true},
      {"nccl_watchdog_timeout", 7, false},
      {"silent_data_corruption", 6, true},
      {"gpu_thermal_interface_or_sensor", 6, true},
      {"ssd", 3, true},
      {"power_supply", 3, true},
      {"server_chassis", 2, true},
      {"io_expansion_board", 2, true},
      {"dependency", 2, false},
      {"cpu", 2, true},
      {"system_memory", 2, true},
  };
}

double FailureConfig::replacing_share() const {
  if (causes.empty()) return 1.0;
  double total = 0.0;
  double replacing = 0.0;
  for (const FailureCause& c : causes) {
    total += c.share;
    if (c.replaces_node) replacing += c.share;
  }
  return replacing / total;
}

void FailureConfig::validate(const char* what) const {
  const std::string w(what);
  if (!(node_mtbf_s > 0.0))
    throw std::invalid_argument(w + ".node_mtbf_s: expected a time > 0 (inf: no failures)");
  if (!(weibull_shape > 0.0) || !std::isfinite(weibull_shape))
    throw std::invalid_argument(w + ".weibull_shape: expected a finite number > 0");
  double total = 0.0;
  for (std::size_t i = 0; i < causes.size(); ++i) {
    if (!(causes[i].share >= 0.0) || !std::isfinite(causes[i].share))
      throw std::invalid_argument(w + ".causes[" + std::to_string(i) +
                                  "].share: expected a finite weight >= 0");
    total += causes[i].share;
  }
  if (!causes.empty() && !(total > 0.0))
    throw std::invalid_argument(w + ".causes: expected at least one weight > 0");
  if (correlated.domain_nodes < 0)
    throw std::invalid_argument(w + ".correlated.domain_nodes: expected >= 0");
  if (correlated.domain_nodes > 0 && !(correlated.domain_mtbf_s > 0.0))
    throw std::invalid_argument(w + ".correlated.domain_mtbf_s: expected a time > 0");
  fleet::validate(trace, (w + ".trace").c_str());
  replacement.validate(w + ".replacement");
}

}  // namespace cs::fleet
