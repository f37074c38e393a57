#pragma once
// The summary of a training_run as a person reads it (`clustersim run` prints it): wall time,
// goodput, cost by market, interruptions, checkpoints, lost work, time per state. Numbers may
// be plain or replicated ({"mean", "ci95"}: shown as mean +- ci95).
#include <string>

#include <nlohmann/json.hpp>

namespace cs::report {

std::string training_run_text(const nlohmann::json& block);

}  // namespace cs::report
