#pragma once
// The summary of a serving workload as a person reads it (`clustersim run` prints it):
// requests and their outcome, latency percentiles and the SLO, TTFT and TPOT (LLM), replicas,
// cost by market, spot reclaims and fallbacks, the pools of disaggregated serving. Numbers may
// be plain or replicated ({"mean", "ci95"}: shown as mean +- ci95).
#include <string>

#include <nlohmann/json.hpp>

namespace cs::report {

std::string serving_text(const nlohmann::json& block);

}  // namespace cs::report
