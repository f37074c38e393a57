// LlmReplica's prefix cache (llm_replica.hpp): which blocks of a waiting sequence are still
// cached, and the shared prefixes' blocks, held once while any running sequence uses them.
// vLLM v1 finds hits by hashing full blocks, each hash chained from the previous block's
// (vllm/v1/core/kv_cache_utils.py); here a prefix id and the block counts stand for the
// hashes: a sequence's blocks are the prefix's blocks, then its own.
#include <algorithm>

#include "sim/serving/llm_replica.hpp"

namespace cs::serving {

uint32_t LlmReplica::prefix_group(const Request& r) {
  if (!spec_.batching.prefix_caching || r.prefix_id == 0 || r.prefix_tokens < block_) return kNone;
  const auto [it, added] = group_of_prefix_.try_emplace(r.prefix_id, static_cast<uint32_t>(groups_.size()));
  if (added) groups_.emplace_back();
  return it->second;
}

LlmReplica::CacheHits LlmReplica::cache_hits(const Seq& q) const {
  CacheHits h;
  if (!spec_.batching.prefix_caching) return h;
  const int64_t most = (q.prefill_target - 1) / block_;
  if (q.request.prefix_id != 0) {
    if (const auto it = group_of_prefix_.find(q.request.prefix_id); it != group_of_prefix_.end()) {
      const PrefixGroup& g = groups_[it->second];
      const int64_t present = g.refs > 0 ? g.blocks : pool_.cached(g.cached);
      h.shared = std::min({present, q.request.prefix_tokens / block_, most});
      h.free_shared = g.refs > 0 ? 0 : h.shared;
    }
  }
  // Its own blocks' hashes chain from the prefix's blocks it had: hits only behind those.
  if (h.shared == q.shared) h.own = std::min(pool_.cached(q.cached), most - h.shared);
  return h;
}

void LlmReplica::share_prefix(Seq& q, int64_t computed_tokens) {
  if (q.group == kNone) return;
  PrefixGroup& g = groups_[q.group];
  if (q.shared != g.blocks) return;  // another sequence computes it: its copies stay its own
  const int64_t k = std::min<int64_t>(q.request.prefix_tokens, computed_tokens) / block_ - q.shared;
  if (k <= 0) return;
  q.blocks -= k;
  q.shared += k;
  g.blocks += k;
}

void LlmReplica::leave_group(Seq& q) {
  if (q.group == kNone) return;
  PrefixGroup& g = groups_[q.group];
  if (--g.refs == 0) {
    g.cached = pool_.free_cached(g.blocks);
    g.blocks = 0;
  }
  q.group = kNone;
}

}  // namespace cs::serving
