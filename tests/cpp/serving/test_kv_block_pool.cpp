// The KV block pool's prefix cache (vLLM v1's free queue): allocation takes never-used blocks
// first, then the least recently freed; a cached run loses its last blocks first; a hit takes
// blocks back without allocating; forgotten runs are plain free blocks.
#include <catch2/catch.hpp>

#include "sim/serving/kv_block_pool.hpp"

using cs::serving::KvBlockPool;

TEST_CASE("The block pool evicts least recently freed blocks, a run's tail first", "[serving][llm][kv]") {
  KvBlockPool pool(10);
  pool.allocate(8);
  CHECK(pool.used() == 8);
  CHECK(pool.free() == 2);
  // A sequence frees 5 blocks keeping their content, then another frees 3 plain ones.
  const KvBlockPool::Handle a = pool.free_cached(5);
  pool.free_uncached(3);
  CHECK(pool.free() == 10);
  CHECK(pool.cached(a) == 5);
  // Never-used blocks go first: nothing of a's is lost.
  pool.allocate(2);
  CHECK(pool.cached(a) == 5);
  // Then a's run, its last blocks first.
  pool.allocate(2);
  CHECK(pool.cached(a) == 3);
  // A hit takes 2 of the 3 back into use without allocating; the third stays free, uncached.
  pool.reuse(a, 2);
  CHECK(pool.used() == 6);
  CHECK(pool.free() == 4);
  CHECK(pool.cached(KvBlockPool::kNone) == 0);
  // The remaining free blocks: a's leftover, then the 3 plain ones, in that order.
  pool.allocate(4);
  CHECK(pool.free() == 0);
  pool.free_uncached(10);
  CHECK(pool.used() == 0);
}

TEST_CASE("Later runs outlive earlier ones; a forgotten run is plain free blocks", "[serving][llm][kv]") {
  KvBlockPool pool(6);
  pool.allocate(6);
  const KvBlockPool::Handle first = pool.free_cached(2);
  const KvBlockPool::Handle second = pool.free_cached(3);
  pool.forget(first);
  pool.allocate(3);  // the forgotten 2, then 1 of the second run's
  CHECK(pool.cached(second) == 2);
  pool.allocate(2);
  CHECK(pool.cached(second) == 0);
  pool.reuse(second, 0);  // nothing left to take; the handle ends
  const KvBlockPool::Handle third = pool.free_cached(4);  // reuses the handle slot
  CHECK(pool.cached(third) == 4);
  pool.reset();
  CHECK(pool.used() == 0);
  CHECK(pool.free() == 6);
}
