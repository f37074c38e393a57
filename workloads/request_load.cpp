#include "workloads/request_load.hpp"

#include <algorithm>
#include <cmath>
#include <stdexcept>

namespace cs::work {

void validate_request(const RequestSpec& spec) {
  validate_distribution(spec.service_time, "service_time");
  validate_distribution(spec.prompt_tokens, "prompt_tokens");
  validate_distribution(spec.output_tokens, "output_tokens");
  if (spec.max_prompt_tokens < 1) throw std::invalid_argument("max_prompt_tokens: must be >= 1");
  if (spec.max_output_tokens < 1) throw std::invalid_argument("max_output_tokens: must be >= 1");
}

int64_t clamp_tokens(double drawn, int64_t max_tokens) {
  if (!(drawn >= 1)) return 1;  // also NaN
  const double rounded = std::nearbyint(drawn);
  if (rounded >= static_cast<double>(max_tokens)) return max_tokens;
  return std::max<int64_t>(1, static_cast<int64_t>(rounded));
}

}  // namespace cs::work
