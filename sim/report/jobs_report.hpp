#pragma once
// The summary of a jobs workload as a person reads it (`clustersim run` prints it): jobs and
// utilization, waits, each queue's completed jobs, waits and share of the GPUs, what
// preemptions and failures cost, where the GPU-hours went, placement, cost. Numbers may be
// plain or replicated ({"mean", "ci95"}: shown as mean +- ci95).
#include <string>

#include <nlohmann/json.hpp>

namespace cs::report {

std::string jobs_text(const nlohmann::json& block);

}  // namespace cs::report
