#pragma once
// Internal: fleet.autoscaler and fleet.prefill_autoscaler (parse_autoscaler.cpp).
#include <string>
#include <vector>

#include "sim/scenario/parse_util.hpp"
#include "sim/serving/autoscaler_spec.hpp"

namespace cs::scenario::detail {

// The autoscaler at fleet.<key> (an empty object when absent: fixed, 1 replica). Keys that have
// no effect with policy "fixed" (min, max, metric, target) add a line to `warnings`.
serving::AutoscalerSpec parse_autoscaler(const json& fleet, const char* key, std::vector<std::string>& warnings);
// InputError at the period's key (fleet.<key>.hpa.sync_period, ...) when the policy would be
// evaluated more than kMaxPeriodicEvents times over `until_s` (check_period).
void check_autoscaler_period(const serving::AutoscalerSpec& spec, const char* key, double until_s);

}  // namespace cs::scenario::detail
