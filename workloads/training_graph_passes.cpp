// build_training_graph: the forward and backward passes of a worker's layers, in its
// schedule's order. Each block of a layer is a compute task; tensor-parallel collectives
// (Megatron's f and g: an all-reduce at one end of each block, or with sequence parallelism an
// all-gather before it and a reduce-scatter after), the context-parallel KV all-gather and the
// MoE all-to-alls sit between them.
#include "workloads/training_flops.hpp"
#include "workloads/training_graph_builder.hpp"
#include "workloads/training_schedule.hpp"

namespace cs::work::detail {

void GraphBuilder::emit_worker(uint32_t worker) {
  const int s = stage_of(worker);
  pending_send_ = kNone;
  if ((p_.zero == 1 || p_.zero == 2) && o_.overlap_param_gather) gather_at_start(worker);
  const std::vector<PipelinePass> order = stage_schedule(p_.schedule, s, p_.pp, m_, p_.virtual_stages);
  // A stage's gradients are whole once its last gradient pass is done: micro-batch m - 1's
  // in every schedule but gpipe, whose backwards run in reverse and end with micro-batch 0.
  for (const PipelinePass& pass : order)
    if (pass.kind != PassKind::forward) last_gradient_micro_ = pass.micro;
  for (const PipelinePass& pass : order) {
    const int j = model_chunk_of(s, pass.chunk, p_.pp);
    switch (pass.kind) {
      case PassKind::forward: emit_forward(worker, pass.micro, j, TaskKind::forward); break;
      case PassKind::backward:
      case PassKind::backward_input: emit_backward(worker, pass.micro, j); break;
      case PassKind::backward_weight: emit_weight_pass(worker, pass.micro, j); break;
    }
  }
}

void GraphBuilder::tensor_parallel_gather(uint32_t worker, int micro, int layer, Chain& c, uint32_t after) {
  if (p_.tp < 2 || !p_.sequence_parallel) return;
  const uint32_t item = worker_collective(worker, Stream::tp, CollectiveOp::all_gather, tokens_ * w_.model.hidden * 2);
  dep(extend(c, add_task(worker, Stream::tp, TaskKind::collective, item, micro, layer)), after);
}

uint32_t GraphBuilder::weight_input_gather(uint32_t worker, int micro, int layer, const Chain& c) {
  if (p_.tp < 2 || !p_.sequence_parallel) return kNone;
  const uint32_t item = worker_collective(worker, Stream::tp, CollectiveOp::all_gather, tokens_ * w_.model.hidden * 2);
  const uint32_t gather = add_task(worker, Stream::tp, TaskKind::collective, item, micro, layer);
  dep(gather, c.last);  // beside the input gradient, not before it
  return gather;
}

void GraphBuilder::tensor_parallel_reduce(uint32_t worker, int micro, int layer, Chain& c, uint32_t after) {
  if (p_.tp < 2) return;
  const CollectiveOp op = p_.sequence_parallel ? CollectiveOp::reduce_scatter : CollectiveOp::all_reduce;
  const uint32_t item = worker_collective(worker, Stream::tp, op, tokens_ * w_.model.hidden * 2);
  dep(extend(c, add_task(worker, Stream::tp, TaskKind::collective, item, micro, layer)), after);
}

uint32_t GraphBuilder::overlapped(uint32_t worker, int micro, int layer, TaskKind kind,
                                  const std::vector<Block>& blocks, bool gather, bool scatter, Chain& c) {
  // Userbuffers pipelines k = tp chunks: chunk i computes once gather piece i has arrived, and
  // scatter piece i leaves once chunk i is done. Three stages give that pipeline's time both
  // where a piece is shorter than a chunk (the first gather piece, then all compute, then the
  // last scatter piece) and where it is longer (all communication, plus a chunk): the first
  // chunk with the first gather piece before it; the middle chunks beside the rest of the
  // gather and the bulk of the scatter; the last chunk after the gather's end, and the last
  // scatter piece after it.
  const int k = p_.tp;
  const double bytes = tokens_ * w_.model.hidden * 2;  // the whole collective
  const Phase phase = kind == TaskKind::backward_input ? Phase::backward_input : Phase::forward;
  auto piece = [&](CollectiveOp op, double share) {
    return add_task(worker, Stream::tp, TaskKind::collective, worker_collective(worker, Stream::tp, op, bytes * share),
                    micro, layer);
  };
  auto chunk = [&](int parts) {
    return add_task(worker, Stream::compute, kind, chunk_item(blocks, phase, parts, k), micro, layer);
  };
  const uint32_t before = c.last;
  uint32_t gather_first = kNone, gather_rest = kNone, scatter_bulk = kNone;
  if (gather) {
    gather_first = piece(CollectiveOp::all_gather, 1.0 / k);
    dep(gather_first, before);
    gather_rest = piece(CollectiveOp::all_gather, (k - 1.0) / k);  // after the first on the stream
  }
  const uint32_t first = chunk(1);
  dep(first, before);
  dep(first, gather_first);
  if (c.first == kNone) c.first = gather ? gather_first : first;
  if (scatter) {
    scatter_bulk = piece(CollectiveOp::reduce_scatter, (k - 1.0) / k);
    dep(scatter_bulk, first);
  }
  uint32_t previous = first;
  if (k > 2) {
    previous = chunk(k - 2);
    dep(previous, first);
  }
  const uint32_t last = chunk(1);
  dep(last, previous);
  dep(last, gather_rest);
  c.last = last;
  if (scatter) {
    c.last = piece(CollectiveOp::reduce_scatter, 1.0 / k);  // after the bulk on the stream
    dep(c.last, last);
  }
  return last;
}

void GraphBuilder::emit_forward(uint32_t worker, int micro, int j, TaskKind kind) {
  Chain c;
  const int r = replica_of(worker);
  if (j == 0) {
    if ((p_.zero == 1 || p_.zero == 2) && o_.overlap_param_gather && micro == 0)
      pending_gather_ = joint(JointKind::gather_start, stage_of(worker), 0,
                              bucket_of_layer_[std::size_t(chunk_start_[0])]);
    extend(c, add_task(worker, Stream::compute, kind, compute_item({Block::embedding}, {Phase::forward}), micro,
                       kEmbeddingLayer));
    tensor_parallel_reduce(worker, micro, kEmbeddingLayer, c);  // vocabulary-parallel embedding
  }
  for (int layer = chunk_start_[j]; layer < chunk_start_[j + 1]; ++layer) layer_forward(worker, micro, layer, kind, c);
  if (j == chunks_ - 1) {
    tensor_parallel_gather(worker, micro, kHeadLayer, c);
    extend(c, add_task(worker, Stream::compute, kind, compute_item({Block::head}, {Phase::forward}), micro, kHeadLayer));
  }
  const std::size_t idx = pass_index(r, micro, j);
  forward_first_[idx] = c.first;
  forward_last_[idx] = c.last;
  if (j < chunks_ - 1) {
    const double bytes = tokens_ * w_.model.hidden * 2 / p_.tp;  // Megatron scatters over tp
    const uint32_t send = add_task(worker, Stream::pp, TaskKind::send, send_item(worker, (j + 1) % p_.pp, bytes),
                                   micro, chunk_start_[j + 1] - 1);
    dep(send, c.last);
    if (!p_.overlap_p2p) pending_send_ = send;
    forward_send_[idx] = send;
  }
}

void GraphBuilder::layer_forward(uint32_t worker, int micro, int layer, TaskKind kind, Chain& c) {
  const auto& m = w_.model;
  if (p_.zero == 3 && kind == TaskKind::forward) zero3_gather(worker, micro, layer, true);
  if ((p_.zero == 1 || p_.zero == 2) && o_.overlap_param_gather && micro == 0 && kind == TaskKind::forward)
    pending_gather_ = joint(JointKind::gather_start, stage_of(worker), 0, bucket_of_layer_[std::size_t(layer)]);
  auto compute = [&](std::vector<Block> blocks) {
    return extend(c, add_task(worker, Stream::compute, kind, compute_item(blocks, {Phase::forward}), micro, layer));
  };
  auto collective = [&](Stream type, CollectiveOp op, double bytes) {
    extend(c, add_task(worker, type, TaskKind::collective, worker_collective(worker, type, op, bytes), micro, layer));
  };
  const double kv_bytes = 2.0 * w_.batch.micro * m.seq_len * m.kv_width_per_rank(p_.tp) * 2;
  const double dispatch_bytes = tokens_ * m.moe.top_k * m.moe.capacity_factor * m.hidden * 2;

  if (tp_overlap() && !m.moe_layer(layer)) {
    if (p_.cp == 1) {
      overlapped(worker, micro, layer, kind, {Block::attention_in, Block::attention_out}, true, true, c);
    } else {
      overlapped(worker, micro, layer, kind, {Block::attention_in}, true, false, c);
      collective(Stream::cp, CollectiveOp::all_gather, kv_bytes);
      overlapped(worker, micro, layer, kind, {Block::attention_out}, false, true, c);
    }
    ran_layer(worker, overlapped(worker, micro, layer, kind, {Block::mlp}, true, true, c));
    return;
  }
  tensor_parallel_gather(worker, micro, layer, c);
  if (p_.cp == 1) {
    compute({Block::attention_in, Block::attention_out});
  } else {
    compute({Block::attention_in});
    collective(Stream::cp, CollectiveOp::all_gather, kv_bytes);  // the whole sequence's K and V
    compute({Block::attention_out});
  }
  tensor_parallel_reduce(worker, micro, layer, c);
  tensor_parallel_gather(worker, micro, layer, c);
  uint32_t last;
  if (!m.moe_layer(layer)) {
    last = compute({Block::mlp});
  } else {
    compute({Block::moe_router});
    if (p_.ep > 1) collective(Stream::ep, CollectiveOp::all_to_all, dispatch_bytes);
    last = compute({Block::moe_experts});
    if (p_.ep > 1) collective(Stream::ep, CollectiveOp::all_to_all, dispatch_bytes);
  }
  tensor_parallel_reduce(worker, micro, layer, c);
  ran_layer(worker, last);
}

void GraphBuilder::backward_segment(uint32_t worker, int micro, int layer, const std::vector<Block>& blocks,
                                    Chain& c, uint32_t weight_input) {
  // With tensor-parallel overlap the input gradients run in chunks pipelined with the
  // all-gather before them and the reduce-scatter after them; the weight gradients follow.
  const bool overlap = tp_overlap() && !w_.model.moe_layer(layer) && layer >= 0;
  // Without it, a collective follows the segment (tensor-parallel; the experts' all-to-all;
  // context parallelism's K and V reduce-scatter after attention): Megatron's row-parallel
  // linear (fc2, proj), the experts' and the router compute their weight gradients right after
  // their input gradients, so only the column-parallel linear's (fc1, qkv) is left to run
  // beside that collective.
  const bool collective_after = p_.tp > 1 || (blocks.back() == Block::moe_experts && p_.ep > 1) ||
                                (blocks.back() == Block::attention_out && p_.cp > 1);
  const bool row_weights_first = !overlap && !split_ && collective_after;
  const uint32_t input =
      overlap ? overlapped(worker, micro, layer, TaskKind::backward_input, blocks,
                           blocks.front() != Block::attention_in,   // no gather between attention's halves
                           blocks.back() != Block::attention_out, c)  // nor a scatter
              : extend(c, add_task(worker, Stream::compute, TaskKind::backward_input,
                                   row_weights_first ? backward_item(blocks, false)
                                                     : compute_item(blocks, {Phase::backward_input}),
                                   micro, layer));
  if (split_) {  // zb_h1 runs the weight gradients in their own pass, which waits for the gather
    if (weight_input != kNone) deferred_weight_inputs_[{worker, micro, layer}].push_back(weight_input);
    return;
  }
  last_weight_task_ = add_task(worker, Stream::compute, TaskKind::backward_weight,
                               row_weights_first ? backward_item(blocks, true)
                                                 : compute_item(blocks, {Phase::backward_weight}),
                               micro, layer);
  dep(last_weight_task_, input);
  dep(last_weight_task_, weight_input);
}

void GraphBuilder::emit_backward(uint32_t worker, int micro, int j) {
  Chain c;
  const int r = replica_of(worker);
  const std::size_t idx = pass_index(r, micro, j);
  last_weight_task_ = kNone;  // this pass's own (the serial path's gathers wait for them)
  if (j == chunks_ - 1) {
    c.last = forward_last_[idx];  // the loss: backward starts where this micro-batch's forward ended
    const bool serial = !tp_overlap();  // the LM head is a column-parallel linear
    backward_segment(worker, micro, kHeadLayer, {Block::head}, c,
                     serial ? weight_input_gather(worker, micro, kHeadLayer, c) : kNone);
    if (!split_) after_layer_gradients(worker, micro, kHeadLayer, last_weight_task_);
    tensor_parallel_reduce(worker, micro, kHeadLayer, c, serial_wgrad());
  }
  for (int layer = chunk_start_[j + 1] - 1; layer >= chunk_start_[j]; --layer) layer_backward(worker, micro, layer, c);
  if (j == 0) {
    const uint32_t embedding = extend(c, add_task(worker, Stream::compute, TaskKind::backward_input,
                                                  compute_item({Block::embedding}, {Phase::backward_input}), micro,
                                                  kEmbeddingLayer));
    after_embedding_gradients(worker, micro, embedding);
  }
  backward_first_[idx] = c.first;
  if (j > 0) {
    const double bytes = tokens_ * w_.model.hidden * 2 / p_.tp;
    const uint32_t send = add_task(worker, Stream::pp, TaskKind::send, send_item(worker, (j - 1) % p_.pp, bytes),
                                   micro, chunk_start_[j]);
    dep(send, c.last);
    // Without the split, backward returns (and the gradient is sent) once every weight
    // gradient of the chunk is done, as autograd does.
    if (!split_) dep(send, last_weight_task_);
    if (!p_.overlap_p2p) pending_send_ = send;
    backward_send_[idx] = send;
  }
}

void GraphBuilder::layer_backward(uint32_t worker, int micro, int layer, Chain& c) {
  const auto& m = w_.model;
  if (p_.zero == 3) zero3_gather(worker, micro, layer, false);
  if (w_.recompute == Recompute::full) layer_forward(worker, micro, layer, TaskKind::recompute, c);
  const double dispatch_bytes = tokens_ * m.moe.top_k * m.moe.capacity_factor * m.hidden * 2;
  auto collective = [&](Stream type, CollectiveOp op, double bytes) {
    extend(c, add_task(worker, type, TaskKind::collective, worker_collective(worker, type, op, bytes), micro, layer));
  };
  // MLP, then attention: the forward's blocks in reverse, each collective's transpose.
  if (tp_overlap() && !m.moe_layer(layer)) {  // the segments issue their own collectives
    backward_segment(worker, micro, layer, {Block::mlp}, c);
    if (p_.cp == 1) {
      backward_segment(worker, micro, layer, {Block::attention_out, Block::attention_in}, c);
    } else {
      const double kv_bytes = 2.0 * w_.batch.micro * m.seq_len * m.kv_width_per_rank(p_.tp) * 2;
      backward_segment(worker, micro, layer, {Block::attention_out}, c);
      collective(Stream::cp, CollectiveOp::reduce_scatter, kv_bytes);
      backward_segment(worker, micro, layer, {Block::attention_in}, c);
    }
    ran_layer(worker, c.last);
    if (!split_) after_layer_gradients(worker, micro, layer, last_weight_task_);
    return;
  }
  // Without tensor-parallel overlap, as Megatron's linear layers run backward (see
  // weight_input_gather): a column-parallel linear (fc1, qkv) reduce-scatters (or all-reduces)
  // its input gradient beside its weight gradient and waits for both before autograd goes on,
  // so each gather of an output gradient waits for the weight gradients before it (zb_h1 defers
  // them: no wait). Megatron-LM before its asynchronous tensor-parallel all-reduce (overlap_tp_wgrad
  // false) computed both gradients in the linear's one autograd node and then all-reduced the
  // input gradient: the collective after the weight gradient (serial_wgrad).
  const uint32_t weights_before = split_ ? kNone : last_weight_task_;
  tensor_parallel_gather(worker, micro, layer, c, weights_before);
  if (!m.moe_layer(layer)) {
    backward_segment(worker, micro, layer, {Block::mlp}, c, weight_input_gather(worker, micro, layer, c));
  } else {
    if (p_.ep > 1) collective(Stream::ep, CollectiveOp::all_to_all, dispatch_bytes);
    backward_segment(worker, micro, layer, {Block::moe_experts}, c);
    if (p_.ep > 1) collective(Stream::ep, CollectiveOp::all_to_all, dispatch_bytes);
    backward_segment(worker, micro, layer, {Block::moe_router}, c);
  }
  tensor_parallel_reduce(worker, micro, layer, c, serial_wgrad());
  tensor_parallel_gather(worker, micro, layer, c, split_ ? kNone : last_weight_task_);
  if (p_.cp == 1) {
    backward_segment(worker, micro, layer, {Block::attention_out, Block::attention_in}, c,
                     weight_input_gather(worker, micro, layer, c));
  } else {
    const double kv_bytes = 2.0 * w_.batch.micro * m.seq_len * m.kv_width_per_rank(p_.tp) * 2;
    backward_segment(worker, micro, layer, {Block::attention_out}, c);
    collective(Stream::cp, CollectiveOp::reduce_scatter, kv_bytes);  // K and V gradients to their owners
    backward_segment(worker, micro, layer, {Block::attention_in}, c, weight_input_gather(worker, micro, layer, c));
  }
  tensor_parallel_reduce(worker, micro, layer, c, serial_wgrad());
  ran_layer(worker, c.last);
  if (!split_) after_layer_gradients(worker, micro, layer, last_weight_task_);
}

void GraphBuilder::emit_weight_pass(uint32_t worker, int micro, int j) {
  auto weights = [&](std::vector<Block> blocks, int layer) {
    const uint32_t task = add_task(worker, Stream::compute, TaskKind::backward_weight,
                                   compute_item(blocks, {Phase::backward_weight}), micro, layer);
    // The saved inputs gathered again in the input pass (sequence parallelism, no overlap).
    if (auto it = deferred_weight_inputs_.find({worker, micro, layer}); it != deferred_weight_inputs_.end()) {
      for (uint32_t gather : it->second) dep(task, gather);
      deferred_weight_inputs_.erase(it);
    }
    return task;
  };
  if (j == chunks_ - 1) after_layer_gradients(worker, micro, kHeadLayer, weights({Block::head}, kHeadLayer));
  for (int layer = chunk_start_[j + 1] - 1; layer >= chunk_start_[j]; --layer) {
    auto blocks = layer_blocks(w_.model, layer);
    after_layer_gradients(worker, micro, layer, weights({blocks.rbegin(), blocks.rend()}, layer));
  }
}

}  // namespace cs::work::detail
