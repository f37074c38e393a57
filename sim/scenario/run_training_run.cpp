#include "sim/scenario/run_training_run.hpp"

#include <cmath>
#include <cstdint>
#include <string>
#include <utility>

#include "sim/fleet/training_run.hpp"

namespace cs::scenario::detail {

using nlohmann::json;

json run_training_run(const Config& config, engine::Simulator& sim, bool record) {
  fleet::TrainingRunConfig c = config.training_run;
  c.record_timeseries = record;
  fleet::TrainingRun run(sim, std::move(c));
  run.start();
  fleet::run_until_done(sim, run, run.config().max_wall_time_s);
  return training_run_block(run.result());
}

json training_run_block(const fleet::TrainingRunResult& result) {
  json block = json::object();
  for (const auto& [name, value] : result.summary_numbers()) {
    // Counts are whole numbers: print them as such (3, not 3.0). Infinities (no failures: an
    // infinite MTBF; no checkpoints: an infinite interval) have no JSON form: null.
    json v = value;
    if (!std::isfinite(value)) v = nullptr;
    else if (std::floor(value) == value && std::fabs(value) <= 0x1p53) v = static_cast<int64_t>(value);
    const auto dot = name.find('.');
    if (dot == std::string::npos) block[name] = std::move(v);
    else block[name.substr(0, dot)][name.substr(dot + 1)] = std::move(v);
  }
  return block;
}

}  // namespace cs::scenario::detail
