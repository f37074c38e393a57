// An LLM replica's tensor-parallel collectives, priced with the algorithms the chip's collectives
// library runs (sim/network/neuron_ccom.hpp, node_tp_algorithms): NCCL's ring and tree on GPUs,
// Neuron's ring and all-to-all on Trainium and Inferentia2, XLA's torus on TPUs.
#include <catch2/catch.hpp>

#include <algorithm>
#include <utility>

#include <nlohmann/json.hpp>

#include "sim/scenario/load.hpp"
#include "sim/serving/llm_timing.hpp"
#include "sim/world/serving_tp.hpp"

using cs::serving::LlmTimingSpec;

namespace {

LlmTimingSpec tp_costs_on(const char* chip, int gpus, const char* protocol = "auto", int ranks_per_gpu = 1) {
  const cs::scenario::Config config = cs::scenario::parse_config(
      nlohmann::json{{"hardware", {{"gpu", chip}}}, {"network", {{"protocol", protocol}}},
                     {"workload", {{"kind", "collective"}, {"op", "all_reduce"}, {"sizes", {1024}}}}});
  LlmTimingSpec timing;
  timing.gpus = gpus;
  timing.ranks_per_gpu = ranks_per_gpu;
  cs::world::detail::time_tp_collectives(config, timing);
  return timing;
}

// A neighbour step on a tpu_slice's torus crosses the chip's PCIe, NIC, torus, NIC and PCIe
// cables at 0.5 us each way (sim/compute/tpu_slice.hpp).
constexpr double kIciStep = 5 * 0.5e-6;

}  // namespace

TEST_CASE("a Neuron replica's small all-reduce is the all-to-all's two steps, whatever the chip count",
          "[serving][neuron]") {
  // sim/network/neuron_ccom.cpp: 51.7 us once, 3.17 us a NeuronLink step; the all-to-all
  // all-reduce (Neuron Runtime 2.14.8) is a reduce-scatter and an all-gather of one step each:
  // 58.04 us plus its bytes, where the ring of 12 chips takes 2 x 11 steps (121.4 us).
  constexpr double kTwoSteps = (51.7 + 2 * 3.17) * 1e-6;
  for (const auto& [chip, chips] : {std::pair{"Inferentia2", 12}, std::pair{"Trainium1", 16}}) {
    const LlmTimingSpec t = tp_costs_on(chip, chips, "simple");  // Neuron has the one
    REQUIRE(t.tp_allreduce.pieces.size() == 2);  // ring and all-to-all
    INFO(chip);
    const double one_token = 8192 * 2;  // Llama 3 70B's hidden state in BF16
    CHECK(t.tp_allreduce.seconds(0) == Approx(kTwoSteps).epsilon(1e-3));
    CHECK(t.tp_allreduce.seconds(one_token) > kTwoSteps);
    CHECK(t.tp_allreduce.seconds(one_token) < kTwoSteps + 2e-6);
    // The ring's latency alone: 2 (chips - 1) steps.
    const double ring_fixed = std::max(t.tp_allreduce.pieces[0].fixed_s, t.tp_allreduce.pieces[1].fixed_s);
    CHECK(ring_fixed == Approx((51.7 + 2 * (chips - 1) * 3.17) * 1e-6).epsilon(1e-3));
  }
}

TEST_CASE("a Neuron replica's ring runs over its NeuronCores, its all-to-all over its chips",
          "[serving][neuron]") {
  // Two ranks a chip (ranks_per_gpu 2, transformers-neuronx's tp_degree): the ring's steps are
  // 2 (2 chips - 1) for an all-reduce, 2 chips - 1 for an all-gather, at 3.17 us each; the
  // all-to-all keeps its two steps; the bytes' cost is the chips' either way.
  for (const auto& [chip, chips] : {std::pair{"Inferentia2", 12}, std::pair{"Trainium1", 16}}) {
    INFO(chip);
    const LlmTimingSpec per_chip = tp_costs_on(chip, chips, "simple");
    const LlmTimingSpec per_core = tp_costs_on(chip, chips, "simple", 2);
    const int cores = 2 * chips;
    REQUIRE(per_core.tp_allreduce.pieces.size() == 2);
    const auto& ring = per_core.tp_allreduce.pieces[0];
    const auto& all_to_all = per_core.tp_allreduce.pieces[1];
    CHECK(ring.fixed_s == Approx((51.7 + 2 * (cores - 1) * 3.17) * 1e-6).epsilon(1e-3));  // 194.3 us on 24 cores
    CHECK(ring.per_byte_s == Approx(per_chip.tp_allreduce.pieces[0].per_byte_s));
    CHECK(all_to_all.fixed_s == Approx(per_chip.tp_allreduce.pieces[1].fixed_s));
    CHECK(all_to_all.per_byte_s == Approx(per_chip.tp_allreduce.pieces[1].per_byte_s));
    CHECK(per_core.tp_allgather.pieces[0].fixed_s - per_chip.tp_allgather.pieces[0].fixed_s ==
          Approx(chips * 3.17e-6).epsilon(1e-3));  // (cores - 1) - (chips - 1) more steps
  }
  // GPUs' ranks are the GPUs: NCCL's costs ignore ranks_per_gpu.
  CHECK(tp_costs_on("H100-SXM", 8, "simple", 2).tp_allreduce.pieces[0].fixed_s ==
        Approx(tp_costs_on("H100-SXM", 8, "simple").tp_allreduce.pieces[0].fixed_s));
}

TEST_CASE("a GPU replica's all-reduce keeps NCCL's ring and tree", "[serving]") {
  CHECK(tp_costs_on("H100-SXM", 8, "simple").tp_allreduce.pieces.size() == 2);  // ring and tree
  CHECK(tp_costs_on("H100-SXM", 8).tp_allreduce.pieces.size() == 2 * 3);     // each of LL, LL128, Simple
}

TEST_CASE("a TPU replica's all-reduce is XLA's torus plan on the host's 2x4 ICI grid", "[serving][tpu]") {
  // The torus plan (workloads/collective_plan_torus.cpp) on 2x4, the size-2 side first: its
  // reduce-scatter moves 1/2 of S over the side's one link each way (both halves of its
  // bidirectional ring share it: 2 x 1/4), then 3/4 of the 1/2 left, half each way round the
  // ring of 4 (3/16 a link); the all-gather the same again: 2 x (1/2 + 3/16) = 11/8 S / B on links
  // of B per direction (v6e 100 GB/s, v5e 50 GB/s). Latency: 2 x (1 + 3) steps, each the route's
  // own ICI latency, no software latency (no protocol: XLA is not NCCL).
  for (const auto& [chip, link_Bps] : {std::pair{"TPU-v6e", 100e9}, std::pair{"TPU-v5e", 50e9}}) {
    INFO(chip);
    const LlmTimingSpec t = tp_costs_on(chip, 8);
    REQUIRE(t.tp_allreduce.pieces.size() == 1);  // the torus alone, under network.protocol auto
    CHECK(t.tp_allreduce.pieces[0].per_byte_s == Approx(11.0 / 8 / link_Bps).epsilon(1e-9));
    CHECK(t.tp_allreduce.pieces[0].fixed_s == Approx(8 * kIciStep).epsilon(1e-9));
    // The all-gather: the all-reduce's second half.
    REQUIRE(t.tp_allgather.pieces.size() == 1);
    CHECK(t.tp_allgather.pieces[0].per_byte_s == Approx(11.0 / 16 / link_Bps).epsilon(1e-9));
    CHECK(t.tp_allgather.pieces[0].fixed_s == Approx(4 * kIciStep).epsilon(1e-9));
    // Whatever protocol the file names: none of NCCL's applies.
    const LlmTimingSpec ll = tp_costs_on(chip, 8, "ll");
    CHECK(ll.tp_allreduce.pieces[0].fixed_s == t.tp_allreduce.pieces[0].fixed_s);
    CHECK(ll.tp_allreduce.pieces[0].per_byte_s == t.tp_allreduce.pieces[0].per_byte_s);
  }
  // A v5e-4: 2x2, one step a side each way.
  const LlmTimingSpec four = tp_costs_on("TPU-v5e", 4);
  REQUIRE(four.tp_allreduce.pieces.size() == 1);
  CHECK(four.tp_allreduce.pieces[0].per_byte_s == Approx(2 * (0.5 + 0.25) / 50e9).epsilon(1e-9));
  CHECK(four.tp_allreduce.pieces[0].fixed_s == Approx(4 * kIciStep).epsilon(1e-9));
}
