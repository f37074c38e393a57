#pragma once
// Internal: fleet.autoscaler and fleet.prefill_autoscaler (parse_autoscaler.cpp).
#include "sim/scenario/parse_util.hpp"
#include "sim/serving/autoscaler_spec.hpp"

namespace cs::scenario::detail {

// The autoscaler at fleet.<key> (an empty object when absent: fixed, 1 replica).
serving::AutoscalerSpec parse_autoscaler(const json& fleet, const char* key);

}  // namespace cs::scenario::detail
