#pragma once
// What `clustersim run` prints for a training step, and the table `clustersim plan` prints.
#include <nlohmann/json.hpp>

namespace cs::cli {

// A number of a summary, or the mean of a replicated one ({mean, ci95}); 0 when absent.
double summary_number(const nlohmann::json& v);

// The summary's "training" block as a readable breakdown: the step, where its time went, the
// memory per GPU and how it was simulated.
void print_training(const nlohmann::json& training);

// The ranked plans of plan_search_json as a table (every row given).
void print_plans(const nlohmann::json& search);

}  // namespace cs::cli
