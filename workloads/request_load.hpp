#pragma once
// What one request asks of a replica, as data: a service time for a plain server, or prompt
// and output token counts for an LLM server. Drawn per request by the runtime; a trace may
// give them instead (work::TraceRecord).
//
// Token counts are drawn from their distribution, rounded to the nearest integer and clamped
// to [1, max_*_tokens]. Units: seconds, tokens.
#include <cstdint>

#include "workloads/distribution.hpp"

namespace cs::work {

struct RequestSpec {
  // Plain server: seconds of one concurrency slot.
  Distribution service_time = Distribution::exponential(0.1);
  // LLM server: tokens.
  Distribution prompt_tokens = Distribution::constant(512);
  Distribution output_tokens = Distribution::constant(128);
  int64_t max_prompt_tokens = 1 << 20;
  int64_t max_output_tokens = 1 << 20;
  // LLM server: every prompt starts with one of `shared_prefix_groups` prefixes of
  // `shared_prefix_tokens` tokens (a system prompt, few-shot examples), drawn uniformly; the
  // prompt is at least that long. 0 tokens: no shared prefix.
  int64_t shared_prefix_tokens = 0;
  int64_t shared_prefix_groups = 1;
};

// Throws std::invalid_argument naming the field.
void validate_request(const RequestSpec& spec);

// A drawn token count, rounded and clamped to [1, max_tokens].
int64_t clamp_tokens(double drawn, int64_t max_tokens);

}  // namespace cs::work
