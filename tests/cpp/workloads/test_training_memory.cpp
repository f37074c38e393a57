// The memory model against the ZeRO paper and Korthikanti et al.'s activation formulas.
#include <catch2/catch.hpp>

#include "workloads/training_memory.hpp"
#include "workloads/training_schedule.hpp"

namespace cs::work {
namespace {

// Llama 3 70B on 64 GPUs, tp 8 x dp 8, eight sequences of one, fully recomputed.
TrainingWorkload llama70b_tp8_dp8() {
  TrainingWorkload w;
  w.model = *find_model_preset("llama3-70b");
  w.parallel.tp = 8;
  w.parallel.dp = 8;
  w.batch = {8, 1};
  w.recompute = Recompute::full;
  return w;
}

TEST_CASE("model states reproduce the ZeRO paper's 7.5B on 64 GPUs", "[training][memory]") {
  // Rajbhandari et al. 2020, Figure 1: Psi = 7.5 B, N_d = 64, K = 12: baseline 120 GB,
  // P_os 31.4 GB, P_os+g 16.6 GB, P_os+g+p 1.9 GB.
  const double gb = 1e9;
  CHECK(model_state_bytes(7.5e9, 0, 64).total() / gb == Approx(120.0).margin(0.05));
  CHECK(model_state_bytes(7.5e9, 1, 64).total() / gb == Approx(31.4).margin(0.05));
  CHECK(model_state_bytes(7.5e9, 2, 64).total() / gb == Approx(16.6).margin(0.05));
  CHECK(model_state_bytes(7.5e9, 3, 64).total() / gb == Approx(1.9).margin(0.05));
  // Exactly: (2 + 2 + 12) Psi, 4 Psi + 12 Psi / N_d, 2 Psi + 14 Psi / N_d, 16 Psi / N_d.
  CHECK(model_state_bytes(7.5e9, 2, 64).total() == Approx(2 * 7.5e9 + 14 * 7.5e9 / 64));
}

TrainingWorkload gpt_layer(int tp, bool sp, Recompute r) {
  TrainingWorkload w;
  // GPT-style (LayerNorm, dropout masks), MHA, FFN 4h.
  w.model = {.name = "gpt", .layers = 4, .hidden = 1024, .heads = 16, .kv_heads = 16, .ffn_hidden = 4096,
             .mlp = MlpKind::gelu, .seq_len = 2048, .vocab = 1000, .tied_embeddings = true, .bias = true,
             .learned_positions = false, .moe = {}, .source = ""};
  w.parallel.tp = tp;
  w.parallel.sequence_parallel = sp;
  w.batch = {2, 2};
  w.recompute = r;
  return w;
}

TEST_CASE("activations per layer follow Korthikanti et al.", "[training][memory]") {
  MemoryOptions unfused;
  unfused.flash_attention = false;
  const double s = 2048, b = 2, h = 1024, a = 16;
  const double sbh = s * b * h;
  for (int t : {1, 2, 4, 8}) {
    INFO("tp " << t);
    // Equation 1 / 2: no parallelism, tensor parallelism.
    CHECK(layer_activation_bytes(gpt_layer(t, false, Recompute::none), 0, unfused) ==
          Approx(sbh * (10 + 24.0 / t + 5 * a * s / (h * t))));
    // Equation 4: with sequence parallelism.
    CHECK(layer_activation_bytes(gpt_layer(t, true, Recompute::none), 0, unfused) ==
          Approx(sbh * (34.0 / t + 5 * a * s / (h * t))));
    // Selective recomputation: without the attention matrices.
    CHECK(layer_activation_bytes(gpt_layer(t, true, Recompute::selective), 0, unfused) == Approx(sbh * 34.0 / t));
    CHECK(layer_activation_bytes(gpt_layer(t, false, Recompute::selective), 0, unfused) ==
          Approx(sbh * (10 + 24.0 / t)));
    // Full recomputation: the layer input, split by sequence parallelism.
    CHECK(layer_activation_bytes(gpt_layer(t, false, Recompute::full), 0, unfused) == Approx(2 * sbh));
    CHECK(layer_activation_bytes(gpt_layer(t, true, Recompute::full), 0, unfused) == Approx(2 * sbh / t));
  }
  // Flash attention stores no s x s matrices: only the log-sum-exp beside the selective set.
  CHECK(layer_activation_bytes(gpt_layer(1, false, Recompute::none), 0) == Approx(sbh * 34 + 4 * s * b * a));
}

TEST_CASE("a rank holds its share of the KV heads, or a copy of one when tp exceeds them", "[training][memory]") {
  auto layer = [](int tp, int kv_heads) {
    TrainingWorkload w = gpt_layer(tp, true, Recompute::selective);
    w.model.kv_heads = kv_heads;
    return layer_activation_bytes(w, 0);
  };
  const double tokens = 2048 * 2, head_dim = 1024 / 16;
  // K and V of one head in 16-bit: 4 bytes per token and head dimension.
  CHECK(layer(8, 4) == Approx(layer(8, 8)));  // one head per rank, copied or not
  CHECK(layer(8, 16) - layer(8, 4) == Approx(4 * tokens * head_dim));
  CHECK(layer(16, 4) - layer(16, 16) == Approx(0).margin(1e-6 * layer(16, 16)));
  CHECK(layer(2, 4) - layer(2, 2) == Approx(4 * tokens * head_dim));
}

TEST_CASE("a rank holding a copy of a KV head holds its K and V weights", "[training][memory]") {
  auto dense = [](int tp, int kv_heads) {
    TrainingWorkload w = gpt_layer(tp, true, Recompute::selective);
    w.model.kv_heads = kv_heads;
    return stage_params(w, 0).dense;
  };
  // 16 ranks over 4 KV heads hold one head's K and V each, as over 16 heads: the same weights.
  CHECK(dense(16, 4) == Approx(dense(16, 16)));
  // Against the tp-th of the model's: 4 layers x K and V x (one head - 4 heads / 16) x (h + bias).
  const double h = 1024, head_dim = 64;
  TrainingWorkload w = gpt_layer(16, true, Recompute::selective);
  w.model.kv_heads = 4;
  const ParamCounts c = parameter_counts(w.model);
  const double shared = 4 * ((c.dense_layer.attention + c.dense_layer.mlp) / 16 + c.dense_layer.norms) + c.embedding / 16 + c.final_norm;
  CHECK(dense(16, 4) - shared == Approx(4 * 2 * (head_dim - 4 * head_dim / 16) * (h + 1)));
}

TrainingWorkload pipeline(Schedule schedule, int pp, int m, int v = 1) {
  TrainingWorkload w = gpt_layer(1, false, Recompute::none);
  w.model.layers = 8 * v;
  w.model.layers = pp * v * 2;
  w.parallel.pp = pp;
  w.parallel.schedule = schedule;
  w.parallel.virtual_stages = v;
  w.batch = {m * 2, 2};
  return w;
}

TEST_CASE("micro-batches in flight come from the schedule: 1f1b keeps p - s, gpipe m", "[training][memory]") {
  const int p = 4, m = 8;
  const auto f1b = memory_per_gpu(pipeline(Schedule::one_f_one_b, p, m), 80e9);
  const auto gpipe = memory_per_gpu(pipeline(Schedule::gpipe, p, m), 80e9);
  const auto zb = memory_per_gpu(pipeline(Schedule::zb_h1, p, m), 80e9);
  const double per_layer = layer_activation_bytes(pipeline(Schedule::gpipe, p, m), 0);
  for (int s = 0; s < p; ++s) {
    INFO("stage " << s);
    CHECK(f1b.per_stage[s].in_flight == p - s);
    CHECK(gpipe.per_stage[s].in_flight == m);
    CHECK(gpipe.per_stage[s].activations == Approx(m * 2 * per_layer));
    CHECK(f1b.per_stage[s].activations == Approx((p - s) * 2 * per_layer));
    // ZB-H1 holds no stage above 1F1B's peak (stage 0's p).
    CHECK(zb.per_stage[s].in_flight <= p);
    CHECK(zb.per_stage[s].in_flight >= p - s);
  }
  // Megatron's interleaved schedule holds more on stage 0: its warm-up runs (p - 1) x 2 +
  // (v - 1) x p chunk passes, plus the steady state's one.
  const int v = 2;
  const auto inter = memory_per_gpu(pipeline(Schedule::interleaved, p, m, v), 80e9);
  CHECK(inter.per_stage[0].in_flight == (p - 1) * 2 + (v - 1) * p + 1);
}

TEST_CASE("ZeRO shards states over dp x cp and a plan that does not fit is a result", "[training][memory]") {
  TrainingWorkload w = llama70b_tp8_dp8();
  const auto plain = memory_per_gpu(w, 80e9);
  CHECK_FALSE(plain.fits);  // 70.6 B x 16 bytes / 8 = 141 GB of states per GPU
  w.parallel.zero = 3;
  const auto sharded = memory_per_gpu(w, 80e9);
  CHECK(sharded.fits);
  const double params = parameter_counts(w.model).total;
  CHECK(sharded.per_stage[0].optimizer == Approx(params * 12 / 64).epsilon(0.01));
  CHECK(sharded.per_stage[0].parameters == Approx(params * 2 / 64).epsilon(0.01));
  CHECK(plain.per_stage[0].optimizer == Approx(params * 12 / 8).epsilon(0.01));
  CHECK(sharded.max_bytes == Approx(sharded.per_stage[0].total()));
}

TEST_CASE("hybrid sharding shards ZeRO's states over one group of dp / zero_replicas", "[training][memory]") {
  TrainingWorkload w = llama70b_tp8_dp8();
  w.parallel.zero = 3;
  w.parallel.zero_replicas = 2;  // two groups of 4 replicas: each state over 8 x 4 = 32 GPUs
  const auto hybrid = memory_per_gpu(w, 80e9);
  const double params = parameter_counts(w.model).total;
  CHECK(hybrid.per_stage[0].optimizer == Approx(params * 12 / 32).epsilon(0.01));
  CHECK(hybrid.per_stage[0].parameters == Approx(params * 2 / 32).epsilon(0.01));
  CHECK(hybrid.per_stage[0].gradients == Approx(params * 2 / 32).epsilon(0.01));
}

TEST_CASE("a plan inside the memory headroom does not fit; within it, it does", "[training][memory]") {
  TrainingWorkload w = llama70b_tp8_dp8();
  w.parallel.zero = 3;
  const double need = memory_per_gpu(w, 80e9).max_bytes;
  // A GPU the plan fills to 97%: within its capacity, inside the default 5% headroom.
  const auto tight = memory_per_gpu(w, need / 0.97);
  CHECK(tight.within_capacity);
  CHECK_FALSE(tight.fits);
  CHECK(tight.usable_bytes == Approx(need / 0.97 * 0.95));
  // 94%: fits with 5% kept free; 97% fits with no headroom asked; over 100% never fits.
  CHECK(memory_per_gpu(w, need / 0.94).fits);
  MemoryOptions none;
  none.headroom = 0;
  CHECK(memory_per_gpu(w, need / 0.97, none).fits);
  const auto over = memory_per_gpu(w, need / 1.01, none);
  CHECK_FALSE(over.fits);
  CHECK_FALSE(over.within_capacity);
}

}  // namespace
}  // namespace cs::work
