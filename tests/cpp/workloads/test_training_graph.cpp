// The training task graph: its work adds up to the FLOP accounting, and its communication is
// what the plan implies.
#include <algorithm>
#include <map>
#include <set>

#include <catch2/catch.hpp>

#include "workloads/training_flops.hpp"
#include "workloads/training_graph.hpp"
#include "workloads/training_memory.hpp"

namespace cs::work {
namespace {

TrainingWorkload plan(int tp, int pp, int dp, Schedule s = Schedule::one_f_one_b, bool sp = false, int v = 1) {
  TrainingWorkload w;
  w.model = {.name = "small", .layers = 8, .hidden = 256, .heads = 8, .kv_heads = 4, .ffn_hidden = 512,
             .mlp = MlpKind::swiglu, .seq_len = 128, .vocab = 1000, .tied_embeddings = false, .bias = false,
             .learned_positions = false, .moe = {}, .source = ""};
  w.parallel.tp = tp;
  w.parallel.pp = pp;
  w.parallel.dp = dp;
  w.parallel.schedule = s;
  w.parallel.virtual_stages = v;
  w.parallel.sequence_parallel = sp;
  w.batch = {dp * 4 * 2, 2};
  return w;
}

// Sums each compute task's per-rank FLOPs times the ranks its worker stands for.
StepFlops graph_flops(const TaskGraph& g) {
  StepFlops f;
  const double replicas = double(g.replicas) / g.replicas_built;
  for (const auto& t : g.tasks) {
    if (!g.is_compute(t)) continue;
    const double ranks = double(g.workers[t.worker].ranks.size()) * replicas;
    for (const auto& op : g.compute_items[t.item].ops) {
      f.executed += op.flops * ranks;
      if (t.kind != TaskKind::recompute && op.name != "attention_recompute") f.model += op.flops * ranks;
    }
  }
  return f;
}

TEST_CASE("the graph's compute adds up to the step's FLOP accounting", "[training][graph]") {
  std::vector<TrainingWorkload> cases{plan(2, 2, 2), plan(2, 2, 2, Schedule::zb_h1, true),
                                      plan(1, 2, 1, Schedule::interleaved, false, 2), plan(2, 1, 4, Schedule::gpipe)};
  auto full = plan(2, 2, 2);
  full.recompute = Recompute::full;
  cases.push_back(full);
  auto selective = plan(2, 2, 2, Schedule::one_f_one_b, true);
  selective.recompute = Recompute::selective;
  cases.push_back(selective);
  auto moe = plan(2, 2, 4, Schedule::one_f_one_b, true);
  moe.model.moe = {.experts = 4, .top_k = 2, .capacity_factor = 1.25, .shared_experts = 1};
  moe.parallel.ep = 2;
  cases.push_back(moe);
  auto context = plan(2, 1, 2);
  context.parallel.cp = 2;
  cases.push_back(context);
  cases.push_back(plan(8, 1, 1, Schedule::one_f_one_b, true));  // 8 ranks over 4 KV heads: copies count once
  for (const auto& w : cases) {
    for (bool one : {false, true}) {
      GraphOptions o;
      o.one_replica = one;
      const TaskGraph g = build_training_graph(w, o);
      const StepFlops expected = step_flops(w);
      const StepFlops got = graph_flops(g);
      INFO("recompute " << to_string(w.recompute) << " schedule " << to_string(w.parallel.schedule) << " one " << one);
      CHECK(got.model == Approx(expected.model).epsilon(1e-12));
      CHECK(got.executed == Approx(expected.executed).epsilon(1e-12));
    }
  }
}

// Tensor-parallel collectives of (micro-batch, layer), by op.
std::map<CollectiveOp, int> tp_ops(const TaskGraph& g, int micro, int layer) {
  std::map<CollectiveOp, int> n;
  for (const auto& t : g.tasks)
    if (t.stream == Stream::tp && t.micro == micro && t.layer == layer && t.worker == 0)
      ++n[g.comm_items[t.item].parts.front().op];
  return n;
}

TEST_CASE("sequence parallelism without overlap: backward as Megatron's linear layers run it", "[training][graph]") {
  // Each output-gradient gather waits for the weight gradients before it (a column-parallel
  // linear waits for its reduce-scatter after its weight gradient), and the weight gradients of
  // qkv and fc1 wait for their saved input gathered again beside their input gradients.
  auto w = plan(2, 1, 1, Schedule::one_f_one_b, true);
  w.parallel.tp_comm_overlap = false;
  const TaskGraph g = build_training_graph(w);
  auto preds = [&](uint32_t i) {
    return std::vector<uint32_t>(g.preds.begin() + g.pred_begin[i], g.preds.begin() + g.pred_begin[i + 1]);
  };
  int gathers_after_weights = 0, weights_after_gathers = 0;
  for (uint32_t i = 0; i < g.tasks.size(); ++i) {
    const Task& t = g.tasks[i];
    if (t.worker != 0 || t.micro != 1 || t.layer < 0) continue;
    const auto before = preds(i);
    auto any = [&](auto pred) { return std::any_of(before.begin(), before.end(), [&](uint32_t j) { return pred(g.tasks[j]); }); };
    const bool gather = t.stream == Stream::tp && g.comm_items[t.item].parts.front().op == CollectiveOp::all_gather;
    if (gather && any([](const Task& p) { return p.kind == TaskKind::backward_weight; })) ++gathers_after_weights;
    if (t.kind == TaskKind::backward_weight &&
        any([&](const Task& p) { return p.stream == Stream::tp && g.comm_items[p.item].parts.front().op == CollectiveOp::all_gather; }))
      ++weights_after_gathers;
  }
  // Per layer: the attention's output-gradient gather waits for the MLP's weight gradients, and
  // the next layer's MLP gather for this layer's attention weight gradients (the last layer's
  // MLP gather for the LM head's): two per layer.
  CHECK(gathers_after_weights == 2 * w.model.layers);
  CHECK(weights_after_gathers == 2 * w.model.layers);  // the MLP's and the attention's weight gradients
  // With overlap (userbuffers' pipeline) or without sequence parallelism nothing of it.
  for (bool overlap : {true, false}) {
    auto other = plan(2, 1, 1, Schedule::one_f_one_b, overlap);
    const TaskGraph h = build_training_graph(other);
    int waits = 0;
    for (uint32_t i = 0; i < h.tasks.size(); ++i)
      if (h.tasks[i].stream == Stream::tp)
        for (uint32_t k = h.pred_begin[i]; k < h.pred_begin[i + 1]; ++k)
          waits += h.tasks[h.preds[k]].kind == TaskKind::backward_weight;
    CHECK(waits == 0);
  }
}

TEST_CASE("zb_h1 with sequence parallelism without overlap: the weight pass waits for the saved inputs' gathers",
          "[training][graph]") {
  // The input pass gathers qkv's and fc1's saved inputs again (and the LM head's); the weight
  // pass, split from it, computes the weight gradients from them, so it waits for them.
  auto w = plan(2, 2, 1, Schedule::zb_h1, true);
  w.parallel.tp_comm_overlap = false;
  const TaskGraph g = build_training_graph(w);
  std::vector<int> dependents(g.tasks.size(), 0);
  for (uint32_t p : g.preds) ++dependents[p];
  std::map<int, int> gathers_before_weights;  // by layer, micro-batch 1 of every worker
  for (uint32_t i = 0; i < g.tasks.size(); ++i) {
    const Task& t = g.tasks[i];
    // Every tensor-parallel collective is waited for by some task.
    if (t.stream == Stream::tp) CHECK(dependents[i] > 0);
    if (t.kind != TaskKind::backward_weight || t.micro != 1) continue;
    for (uint32_t k = g.pred_begin[i]; k < g.pred_begin[i + 1]; ++k) {
      const Task& p = g.tasks[g.preds[k]];
      if (p.stream == Stream::tp && g.comm_items[p.item].parts.front().op == CollectiveOp::all_gather) {
        CHECK(p.layer == t.layer);
        CHECK(p.micro == t.micro);
        ++gathers_before_weights[t.layer];
      }
    }
  }
  std::map<int, int> expected{{-3, 1}};  // the LM head's (kHeadLayer)
  for (int layer = 0; layer < w.model.layers; ++layer) expected[layer] = 2;  // qkv's and fc1's
  CHECK(gathers_before_weights == expected);
}

TEST_CASE("tensor parallelism: two all-reduces a layer each way, or gathers and scatters", "[training][graph]") {
  const TaskGraph plain = build_training_graph(plan(2, 1, 1));
  CHECK(tp_ops(plain, 1, 3) == std::map<CollectiveOp, int>{{CollectiveOp::all_reduce, 4}});
  auto sequence_parallel = plan(2, 1, 1, Schedule::one_f_one_b, true);
  sequence_parallel.parallel.tp_comm_overlap = false;
  const TaskGraph sp = build_training_graph(sequence_parallel);
  // Backward gathers qkv's and fc1's saved inputs again for their weight gradients: two more.
  CHECK(tp_ops(sp, 1, 3) ==
        std::map<CollectiveOp, int>{{CollectiveOp::all_gather, 6}, {CollectiveOp::reduce_scatter, 4}});
  // With communication overlap each gather and scatter runs as two pieces (the first and the
  // rest; the bulk and the last) beside chunks of the compute next to it: with tp 2, halves.
  sequence_parallel.parallel.tp_comm_overlap = true;
  const TaskGraph overlapped = build_training_graph(sequence_parallel);
  CHECK(tp_ops(overlapped, 1, 3) ==
        std::map<CollectiveOp, int>{{CollectiveOp::all_gather, 8}, {CollectiveOp::reduce_scatter, 8}});
  auto layer_tasks = [](const TaskGraph& g, Stream s, int layer) {
    int n = 0;
    for (const auto& t : g.tasks) n += t.stream == s && t.micro == 1 && t.layer == layer && t.worker == 0;
    return n;
  };
  CHECK(layer_tasks(sp, Stream::compute, 3) == 2 + 2 * 2);  // forward: 2 blocks; backward: input + weight each
  CHECK(layer_tasks(overlapped, Stream::compute, 3) == 2 * 2 + 2 * (2 + 1));
  for (const auto& t : overlapped.tasks)
    if (t.stream == Stream::tp && t.layer >= 0)
      CHECK(overlapped.comm_items[t.item].parts[0].bytes == 2.0 * 128 * 256 * 2 / 2);
  // tp 4: the first gather piece and the last scatter piece are a quarter, the others three
  // quarters; each block runs as its first, middle (two quarters) and last chunk.
  auto four = plan(4, 1, 1, Schedule::one_f_one_b, true);
  const TaskGraph g4 = build_training_graph(four);
  std::map<double, int> pieces;
  for (const auto& t : g4.tasks)
    if (t.stream == Stream::tp && t.layer == 3 && t.micro == 1 && t.worker == 0)
      ++pieces[g4.comm_items[t.item].parts[0].bytes / (2.0 * 128 * 256 * 2)];
  CHECK(pieces == std::map<double, int>{{0.25, 8}, {0.75, 8}});
  CHECK(layer_tasks(g4, Stream::compute, 3) == 2 * 3 + 2 * (3 + 1));
  // The chunks add up to the layer's work.
  double chunked = 0, whole = 0;
  for (const auto& t : g4.tasks)
    if (t.stream == Stream::compute && t.layer == 3 && t.micro == 1 && t.worker == 0)
      chunked += total_work_flops(g4.compute_items[t.item].ops);
  for (const auto& t : sp.tasks)
    if (t.stream == Stream::compute && t.layer == 3 && t.micro == 1 && t.worker == 0)
      whole += total_work_flops(sp.compute_items[t.item].ops);
  CHECK(chunked == Approx(whole / 2).epsilon(1e-12));  // tp 4 against tp 2: half the work per rank
  auto recompute = plan(2, 1, 1);
  recompute.recompute = Recompute::full;  // the recomputed forward runs its collectives again
  CHECK(tp_ops(build_training_graph(recompute), 1, 3) == std::map<CollectiveOp, int>{{CollectiveOp::all_reduce, 6}});
  // Each all-reduce is one per tensor-parallel group of the worker, of b s h x 2 bytes.
  for (const auto& t : plain.tasks)
    if (t.stream == Stream::tp) {
      const auto& parts = plain.comm_items[t.item].parts;
      REQUIRE(parts.size() == 1);
      CHECK(parts[0].bytes == 2.0 * 128 * 256 * 2);
      CHECK(plain.groups[parts[0].group] == std::vector<int>{0, 1});
    }
}

TEST_CASE("overlap chunks launch each GEMM chunk, and the other kernels once", "[training][graph]") {
  // Userbuffers cuts the GEMMs next to a gather or scatter into tp chunks; the attention ring's
  // kernels, norms and residual adds are not cut: overlap adds (tp - 1) launches for each of
  // qkv, proj, fc1 and fc2 forward and for their input gradients, and no other launch.
  auto w = plan(4, 1, 1, Schedule::one_f_one_b, true);
  w.parallel.cp = 2;
  w.batch = {8, 2};
  std::map<bool, std::pair<double, double>> launches;  // overlap: {GEMM, other} of one layer
  for (bool overlap : {false, true}) {
    w.parallel.tp_comm_overlap = overlap;
    const TaskGraph g = build_training_graph(w);
    for (const auto& t : g.tasks)
      if (g.is_compute(t) && t.layer == 3 && t.micro == 1 && t.worker == 0)
        for (const auto& op : g.compute_items[t.item].ops)
          (op.kind == OpKind::gemm ? launches[overlap].first : launches[overlap].second) += op.kernels;
  }
  CHECK(launches[true].first == launches[false].first + 8 * (4 - 1));
  CHECK(launches[true].second == Approx(launches[false].second).epsilon(1e-12));
  CHECK(launches[false].second > 2 * 2);  // the ring's kernels (cp 2) are in it
}

TEST_CASE("data-parallel buckets reduce every gradient once; ZeRO-3 gathers every layer twice a micro-batch",
          "[training][graph]") {
  for (int zero : {0, 1, 2, 3}) {
    auto w = plan(2, 2, 4);
    w.parallel.zero = zero;
    GraphOptions o;
    o.bucket_params = 50e3;  // several buckets per stage
    o.overlap_param_gather = false;
    const TaskGraph g = build_training_graph(w, o);
    const int m = micro_batches(w);
    INFO("zero " << zero);
    for (int s = 0; s < 2; ++s) {
      double reduced = 0, gathered = 0;
      int gathers = 0;
      for (const auto& t : g.tasks) {
        if (g.workers[t.worker].stage != s || t.micro < 0 || t.layer == -1) continue;
        const auto& part = g.comm_items[t.item].parts.front();
        if (t.stream == Stream::dp) reduced += part.bytes;
        if (t.stream == Stream::dp_gather) gathered += part.bytes, ++gathers;
      }
      const double params = stage_params(w, s).dense;  // per rank, before sharding
      // ZeRO 0 / 1 reduce once a step, 2 and 3 every micro-batch; ZeRO 3 keeps the embedding
      // and head gathered and scatters their gradients once.
      const auto counts = parameter_counts(w.model);
      const double edge = s == 0 ? counts.embedding / 2 : counts.final_norm + counts.lm_head / 2;
      const double expected = zero == 3 ? (params - edge) * 2 * m + edge * 2 : params * 2 * (zero == 2 ? m : 1);
      CHECK(reduced == Approx(expected).epsilon(1e-12));
      if (zero == 3) {
        CHECK(gathers == 2 * 4 * m);  // 4 layers a stage, before forward and before backward
        CHECK(gathered == Approx((params - edge) * 2 * 2 * m).epsilon(1e-12));  // 16-bit weights
      }
    }
    // ZeRO 1 / 2 gather the updated weights after the optimizer.
    int after = 0;
    for (const auto& t : g.tasks) after += t.stream == Stream::dp_gather && t.micro < 0;
    CHECK(after == (zero == 1 || zero == 2 ? 2 : 0));
  }
}

TEST_CASE("hybrid sharding gathers and scatters inside a group, then all-reduces each shard across groups",
          "[training][graph]") {
  auto w = plan(2, 1, 8);  // tp 2 x dp 8: ZeRO-3 in 2 groups of 4 replicas
  w.parallel.zero = 3;
  w.parallel.zero_replicas = 2;
  const TaskGraph g = build_training_graph(w);
  const int m = micro_batches(w);
  const double params = stage_params(w, 0).dense;  // per tp rank, before sharding
  const auto counts = parameter_counts(w.model);
  const double edge = counts.embedding / 2 + counts.final_norm + counts.lm_head / 2;
  double gathered = 0, scattered = 0, across = 0;
  for (const auto& t : g.tasks) {
    // (the step's gradient-norm all-reduce over every rank is not per micro-batch: micro -1)
    if ((t.stream != Stream::dp && t.stream != Stream::dp_gather) || t.micro < 0) continue;
    const auto& item = g.comm_items[t.item];
    for (const auto& part : item.parts) {
      const auto& ranks = g.groups[part.group];
      INFO("op " << int(part.op) << " group of " << ranks.size());
      if (part.op == CollectiveOp::all_gather) {
        CHECK(ranks.size() == 4);  // a group's replicas (one tp rank)
        for (int r : ranks) CHECK(r / 2 / 4 == ranks.front() / 2 / 4);  // all in one group
        gathered += part.bytes;
      } else if (part.op == CollectiveOp::reduce_scatter) {
        CHECK(ranks.size() == 4);
        scattered += part.bytes;
      } else {
        REQUIRE(part.op == CollectiveOp::all_reduce);
        CHECK(ranks.size() == 2);  // the same place in each group: ranks 8 apart
        CHECK(ranks[1] - ranks[0] == 8);
        across += part.bytes;
      }
    }
  }
  // Every layer gathered before forward and backward each micro-batch, its gradient scattered
  // every micro-batch (the embedding and head once), 16-bit values, one part per tensor-parallel
  // rank and group (2 x 2); then each rank's quarter all-reduced across the two groups, one part
  // per tensor-parallel rank and place in a group (2 x 4).
  const double layers = params - edge;
  CHECK(gathered == Approx(layers * 2 * m * 2 * 4).epsilon(1e-12));
  CHECK(scattered == Approx((layers * m + edge) * 2 * 4).epsilon(1e-12));
  CHECK(across == Approx((layers * m + edge) * 2 / 4 * 8).epsilon(1e-12));
}

TEST_CASE("pipeline sends carry each micro-batch between chunks both ways", "[training][graph]") {
  const auto w = plan(2, 2, 2, Schedule::interleaved, false, 2);
  const TaskGraph g = build_training_graph(w);
  int sends = 0;
  for (const auto& t : g.tasks)
    if (t.kind == TaskKind::send) {
      ++sends;
      const auto& parts = g.comm_items[t.item].parts;
      CHECK(parts.size() == 2);  // one per tensor-parallel rank
      CHECK(parts[0].bytes == 2.0 * 128 * 256 * 2 / 2);  // Megatron scatters over tp
    }
  // 4 model chunks, 3 boundaries, m micro-batches, both directions, 2 replicas.
  CHECK(sends == 3 * micro_batches(w) * 2 * 2);
}

TEST_CASE("one replica with mirrored traffic issues the other replicas' collectives", "[training][graph]") {
  const auto w = plan(2, 2, 4);
  GraphOptions mirrored;
  mirrored.one_replica = true;
  GraphOptions alone = mirrored;
  alone.mirror_replica_traffic = false;
  const TaskGraph full = build_training_graph(w);
  const TaskGraph a = build_training_graph(w, alone);
  const TaskGraph m = build_training_graph(w, mirrored);
  CHECK(full.workers.size() == 8);
  CHECK(a.workers.size() == 2);
  auto parts = [](const TaskGraph& g, Stream s) {
    std::size_t n = 0;
    for (const auto& t : g.tasks)
      if (t.stream == s) n += g.comm_items[t.item].parts.size();
    return n;
  };
  CHECK(parts(m, Stream::tp) == parts(full, Stream::tp));
  CHECK(parts(m, Stream::pp) == parts(full, Stream::pp));
  CHECK(parts(a, Stream::tp) * 4 == parts(full, Stream::tp));
  CHECK(parts(a, Stream::dp) == parts(full, Stream::dp));  // data-parallel groups are whole
}

}  // namespace
}  // namespace cs::work
