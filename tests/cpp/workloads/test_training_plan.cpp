// Plan validation (errors name their key) and rank placement.
#include <algorithm>
#include <set>

#include <catch2/catch.hpp>

#include "workloads/training_placement.hpp"

namespace cs::work {
namespace {

TrainingWorkload llama8b(int tp, int pp, int dp) {
  TrainingWorkload w;
  w.model = *find_model_preset("llama3-8b");
  w.parallel.tp = tp;
  w.parallel.pp = pp;
  w.parallel.dp = dp;
  w.batch = {dp * 8, 1};
  return w;
}

std::string key_of(const TrainingWorkload& w, ClusterShape c) {
  try {
    validate(w, c);
  } catch (const TrainingError& e) {
    return e.key();
  }
  return "";
}

TEST_CASE("plan validation errors name the key", "[training][plan]") {
  const ClusterShape c{64, 8};
  CHECK(key_of(llama8b(8, 2, 4), c) == "");
  CHECK(key_of(llama8b(8, 2, 2), c) == "parallel.dp");  // 32 GPUs of 64
  CHECK(key_of(llama8b(16, 2, 2), c) == "parallel.tp");  // larger than a node
  {
    auto w = llama8b(16, 2, 2);
    // Allowed across nodes; 16 ranks over 8 KV heads each keep a copy of one (replicated).
    CHECK(key_of(w, {64, 8, true}) == "");
    w.model.kv_heads = 32;
    CHECK(key_of(w, {64, 8, true}) == "");
  }
  {
    auto w = llama8b(16, 2, 2);
    w.model.hidden = 6144;  // 48 heads of 128 over 12 KV heads: 16 ranks neither share nor copy them evenly
    w.model.heads = 48;
    w.model.kv_heads = 12;
    CHECK(key_of(w, {64, 8, true}) == "parallel.tp");
  }
  {
    auto w = llama8b(8, 2, 4);
    w.model.heads = 36;  // hidden 4096 is not a multiple of 36
    CHECK(key_of(w, c) == "model.heads");
  }
  {
    auto w = llama8b(8, 2, 4);
    w.model.kv_heads = 4;  // 8 tensor-parallel ranks over 4 KV heads: two copies of each
    CHECK(key_of(w, c) == "");
  }
  {
    auto w = llama8b(8, 2, 4);
    w.parallel.layer_split = {20, 10};
    CHECK(key_of(w, c) == "parallel.layer_split");
    w.parallel.layer_split = {20, 12};
    CHECK(key_of(w, c) == "");
    w.parallel.layer_split = {32, 0};
    CHECK(key_of(w, c) == "parallel.layer_split.1");
  }
  {
    auto w = llama8b(8, 2, 4);
    w.batch.global = 30;  // not a multiple of micro x dp = 4
    CHECK(key_of(w, c) == "batch.global");
  }
  {
    auto w = llama8b(8, 2, 4);
    w.parallel.order = "tp-dp-pp";
    CHECK(key_of(w, c) == "parallel.order");
    w.parallel.order = "tp-ep-cp-dp-pp";  // ep must sit next to dp
    CHECK(key_of(w, c) == "parallel.order");
  }
  {
    auto w = llama8b(8, 2, 4);
    w.parallel.ep = 2;
    CHECK(key_of(w, c) == "parallel.ep");  // a dense model
  }
  {
    auto w = llama8b(8, 2, 4);
    w.parallel.schedule = Schedule::interleaved;
    CHECK(key_of(w, c) == "parallel.virtual_stages");
    w.parallel.virtual_stages = 2;
    CHECK(key_of(w, c) == "");
    w.batch.global = 4 * 3;  // 3 micro-batches, not a multiple of pp
    CHECK(key_of(w, c) == "batch.global");
  }
  {
    auto w = llama8b(8, 1, 4);
    w.parallel.cp = 2;
    w.model.seq_len = 8190;  // not a multiple of 2 x cp
    CHECK(key_of(w, c) == "parallel.cp");
  }
  {
    auto w = llama8b(8, 2, 4);
    w.parallel.zero = 4;
    CHECK(key_of(w, c) == "parallel.zero");
  }
}

TEST_CASE("placement puts tensor-parallel peers on one node by default", "[training][placement]") {
  const int per_node = 8;
  auto w = llama8b(8, 2, 4);
  const RankLayout layout(w.parallel);
  auto gpus = layout.gpu_of_rank();
  CHECK(std::set<int>(gpus.begin(), gpus.end()).size() == 64);  // a permutation
  for (int r = 0; r < layout.ranks(); ++r) {
    const auto tp = layout.group(r, {Dim::tp});
    REQUIRE(tp.size() == 8);
    for (int q : tp) CHECK(layout.gpu(q) / per_node == layout.gpu(r) / per_node);
  }
  // Data-parallel peers are on different nodes, pipeline peers too.
  const auto dp = layout.group(0, {Dim::cp, Dim::ep, Dim::edp});
  std::set<int> nodes;
  for (int q : dp) nodes.insert(layout.gpu(q) / per_node);
  CHECK(nodes.size() == dp.size());

  // With dp first, tensor-parallel peers are spread over nodes.
  w.parallel.order = "dp-ep-tp-cp-pp";
  const RankLayout spread(w.parallel);
  std::set<int> tp_nodes;
  for (int q : spread.group(0, {Dim::tp})) tp_nodes.insert(spread.gpu(q) / per_node);
  CHECK(tp_nodes.size() > 1);
  CHECK(spread.gpu(1) == 4);  // tp rank 1 comes after the 4 data-parallel ranks
}

TEST_CASE("expert parallelism splits data parallelism", "[training][placement]") {
  TrainingWorkload w;
  w.model = *find_model_preset("mixtral-8x7b");
  w.parallel.tp = 2;
  w.parallel.dp = 8;
  w.parallel.ep = 4;
  w.batch = {16, 1};
  REQUIRE_NOTHROW(validate(w, {16, 8}));
  const RankLayout layout(w.parallel);
  CHECK(layout.size(Dim::edp) == 2);
  CHECK(layout.group(0, {Dim::ep}) == std::vector<int>{0, 2, 4, 6});
  CHECK(layout.group(0, {Dim::cp, Dim::ep, Dim::edp}).size() == 8);  // dense weights: all of dp
  CHECK(layout.group(0, {Dim::cp, Dim::edp}) == std::vector<int>{0, 8});  // experts: dp / ep
}

}  // namespace
}  // namespace cs::work
