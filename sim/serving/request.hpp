#pragma once
// One request of a serving workload as it moves through balancer, replicas and pools.
// Times are absolute simulated seconds; -1 means "not yet".
#include <cstdint>

namespace cs::serving {

struct Request {
  uint64_t id = 0;
  double arrival_s = 0;        // when the user sent it (kept across retries)
  double service_s = 0;        // plain server: seconds of one slot
  int32_t prompt_tokens = 1;   // LLM
  int32_t output_tokens = 1;   // LLM, >= 1 (the first comes out of the prefill)
  uint32_t prefix_id = 0;      // LLM: 0, or the shared prefix its prompt starts with
  int32_t prefix_tokens = 0;   // LLM: that prefix's length (<= prompt_tokens)
  double start_s = -1;         // first time a replica began serving it (wait = start - arrival)
  double first_token_s = -1;   // LLM: end of the iteration that produced its first token
  // LLM: end of the iteration that produced its last token, when the replica reports the
  // request done later than that (JetStream's slot lag, llm_replica.hpp); -1: at the report.
  double last_token_s = -1;
  uint16_t attempts = 0;       // times it was lost with a replica and sent again
  bool prefilled = false;      // disaggregated: its KV cache arrived from a prefill pool
};

}  // namespace cs::serving
