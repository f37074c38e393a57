#include "workloads/training_flops.hpp"

#include "workloads/training_ops.hpp"

namespace cs::work {
namespace {

// FLOPs of one micro-batch through `blocks` on one rank, forward and backward.
double blocks_flops(const TrainingWorkload& w, const std::vector<Block>& blocks, bool forward_only) {
  double f = 0;
  for (Block b : blocks) {
    f += total_flops(block_ops(w, b, Phase::forward));
    if (forward_only) continue;
    f += total_flops(block_ops(w, b, Phase::backward_input));
    f += total_flops(block_ops(w, b, Phase::backward_weight));
  }
  return f;
}

}  // namespace

std::vector<Block> layer_blocks(const TransformerSpec& model, int layer) {
  if (model.moe_layer(layer))
    return {Block::attention_in, Block::attention_out, Block::moe_router, Block::moe_experts};
  return {Block::attention_in, Block::attention_out, Block::mlp};
}

StepFlops step_flops(const TrainingWorkload& w) {
  TrainingWorkload plain = w;
  plain.recompute = Recompute::none;
  const auto& p = w.parallel;
  // Every layer runs on the tp x cp x dp ranks of its stage, once per micro-batch.
  const double rank_micro_batches = double(micro_batches(w)) * p.tp * p.cp * p.dp;

  double model = blocks_flops(plain, {Block::embedding, Block::head}, false);
  double executed = model;
  for (int layer = 0; layer < w.model.layers; ++layer) {
    const auto blocks = layer_blocks(w.model, layer);
    const double layer_model = blocks_flops(plain, blocks, false);
    model += layer_model;
    executed += w.recompute == Recompute::full ? layer_model + blocks_flops(plain, blocks, true)
                                               : blocks_flops(w, blocks, false);
  }
  StepFlops s;
  s.tokens = double(global_batch(w)) * w.model.seq_len;
  s.model = model * rank_micro_batches;
  s.executed = executed * rank_micro_batches;
  return s;
}

}  // namespace cs::work
