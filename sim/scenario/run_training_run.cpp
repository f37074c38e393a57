#include "sim/scenario/run_training_run.hpp"

#include <cmath>
#include <cstdint>
#include <string>
#include <utility>

#include "sim/fleet/training_run.hpp"
#include "sim/scenario/summary.hpp"

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
    // Infinities: no failures (an infinite MTBF), no checkpoints (an infinite interval).
    json v = summary_number(value);
    const auto dot = name.find('.');
    if (dot == std::string::npos) block[name] = std::move(v);
    else block[name.substr(0, dot)][name.substr(dot + 1)] = std::move(v);
  }
  return block;
}

}  // namespace cs::scenario::detail
