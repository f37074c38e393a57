#include "workloads/request_load.hpp"

#include <algorithm>
#include <cmath>
#include <stdexcept>

namespace cs::work {

void validate_request(const RequestSpec& spec) {
  spec.service_time.validate("service_time");
  spec.prompt_tokens.validate("prompt_tokens");
  spec.output_tokens.validate("output_tokens");
  if (spec.max_prompt_tokens < 1) throw std::invalid_argument("max_prompt_tokens: must be >= 1");
  if (spec.max_output_tokens < 1) throw std::invalid_argument("max_output_tokens: must be >= 1");
  if (spec.shared_prefix_tokens < 0) throw std::invalid_argument("shared_prefix.tokens: must be >= 0");
  if (spec.shared_prefix_groups < 1) throw std::invalid_argument("shared_prefix.groups: must be >= 1");
}

int64_t clamp_tokens(double drawn, int64_t max_tokens) {
  if (!(drawn >= 1)) return 1;  // also NaN
  const double rounded = std::nearbyint(drawn);
  if (rounded >= static_cast<double>(max_tokens)) return max_tokens;
  return std::max<int64_t>(1, static_cast<int64_t>(rounded));
}

}  // namespace cs::work
