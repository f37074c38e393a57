// build_training_graph: data-parallel gradient reduction and ZeRO's weight gathers. These
// tasks span the replicas: replica 0 creates each one (on its worker's dp or dp_gather stream)
// and every replica's matching task becomes a predecessor.
//
// - ZeRO 0 / 1: each bucket's gradients are all-reduced (0) or reduce-scattered (1) once, after
//   the stage's last backward pass through its layers (micro-batch m - 1's; gpipe's, run in
//   reverse, micro-batch 0's), overlapping the rest of that pass (Megatron-Core DDP: buckets of max(40e6, 1e6 x dp) parameters by default).
// - ZeRO 2: the same reduce-scatter after every micro-batch (gradients are kept sharded).
// - ZeRO 1 / 2: the updated weights are all-gathered after the optimizer, or at the next
//   step's start, each bucket before its first forward (overlap_param_gather).
// - ZeRO 3 (FSDP): every layer's weights are all-gathered before its forward and again before
//   its backward, one layer ahead, and its gradients reduce-scattered after its backward, for
//   every micro-batch.
// - CPU offload (ZeRO-Offload): each reduction's result, the rank's shard of the gradients
//   (all of them without ZeRO), is copied to the host on the worker's host stream right after
//   it (every micro-batch with ZeRO 2 and 3, which accumulate on the host; once otherwise); the
//   optimizer step then runs on the host and the updated weights are copied back (finish_step)
//   before ZeRO-1/2's gather.
#include "workloads/training_graph_builder.hpp"

namespace cs::work::detail {

uint32_t GraphBuilder::joint_reduce(uint32_t worker, JointKind kind, int micro, int key, CollectiveOp op,
                                    double dense_bytes, double expert_bytes, uint32_t after) {
  const int s = stage_of(worker);
  uint32_t& t = joint(kind, s, micro, key);
  const bool hybrid = p_.zero_replicas > 1 && op == CollectiveOp::reduce_scatter;
  if (t == kNone) {
    const uint32_t item = data_parallel_item(s, op, dense_bytes, expert_bytes);
    if (item == kNone && !hybrid) return kNone;  // one data-parallel rank: nothing to reduce
    // Hybrid sharding: the group's reduce-scatter, then each shard all-reduced across the
    // zero_replicas groups, next on the same stream (so after it).
    const uint32_t across = hybrid ? data_parallel_item(s, CollectiveOp::all_reduce, dense_bytes / dense_zero_shards(p_),
                                                        expert_bytes / expert_zero_shards(p_), true)
                                   : kNone;
    if (item != kNone) t = add_task(worker, Stream::dp, TaskKind::collective, item, micro, key);
    if (across != kNone) {
      const uint32_t second = add_task(worker, Stream::dp, TaskKind::collective, across, micro, key);
      if (t == kNone) t = second;
      else dep(second, t), across_of_[t] = second;
    }
    if (t == kNone) return kNone;
  }
  dep(t, after);
  // What waits for the reduced gradients waits for the last of the reduction's tasks.
  const auto it = across_of_.find(t);
  return it != across_of_.end() ? it->second : t;
}

void GraphBuilder::reduce_gradients(uint32_t worker, JointKind kind, int micro, int key, CollectiveOp op,
                                    double dense, double expert, uint32_t after) {
  const double gb = o_.gradient_bytes;
  const uint32_t reduced = joint_reduce(worker, kind, micro, key, op, dense * gb, expert * gb, after);
  if (offload_) offload_gradients(worker, micro, key, dense, expert, reduced != kNone ? reduced : after);
}

void GraphBuilder::offload_gradients(uint32_t worker, int micro, int layer, double dense, double expert,
                                     uint32_t after) {
  const double bytes = local_params(dense, expert) * o_.gradient_bytes;
  const uint32_t copy = add_task(worker, Stream::host, TaskKind::host_copy,
                                 compute_item({host_copy_op("gradients_d2h", bytes)}), micro, layer);
  dep(copy, after);
}

void GraphBuilder::gather_at_start(uint32_t worker) {
  if (replica_of(worker) != 0) return;
  const int s = stage_of(worker);
  const auto& list = buckets_[std::size_t(s)];
  for (std::size_t b = list.size(); b-- > 0;) {  // forward order
    const uint32_t item = data_parallel_item(s, CollectiveOp::all_gather, list[b].dense_params * o_.parameter_bytes,
                                             list[b].expert_params * o_.parameter_bytes);
    if (item != kNone)
      joint(JointKind::gather_start, s, 0, int(b)) =
          add_task(worker, Stream::dp_gather, TaskKind::collective, item, 0, list[b].lowest_layer);
  }
}

void GraphBuilder::bucket_done(uint32_t worker, int micro, std::size_t bucket, uint32_t task) {
  if (p_.zero != 2 && micro != last_gradient_micro_) return;  // gradients accumulate until the last pass
  const Bucket& b = buckets_[std::size_t(stage_of(worker))][bucket];
  const CollectiveOp op = p_.zero == 0 ? CollectiveOp::all_reduce : CollectiveOp::reduce_scatter;
  reduce_gradients(worker, JointKind::bucket, p_.zero == 2 ? micro : 0, int(bucket), op, b.dense_params,
                   b.expert_params, task);
}

void GraphBuilder::after_layer_gradients(uint32_t worker, int micro, int layer, uint32_t task) {
  if (layer == kHeadLayer) {
    if (micro != last_gradient_micro_) return;
    if (w_.model.tied_embeddings && p_.pp > 1) tied_embedding_sync(worker, task);
    // ZeRO 3: the head is not regathered per micro-batch; its gradient is scattered once.
    if (p_.zero == 3)
      reduce_gradients(worker, JointKind::zero3_scatter, micro, kHeadLayer, CollectiveOp::reduce_scatter,
                       head_rank_params(), 0, task);
    return;  // otherwise it is in the last chunk's first bucket
  }
  if (p_.zero == 3) {
    reduce_gradients(worker, JointKind::zero3_scatter, micro, layer, CollectiveOp::reduce_scatter,
                     layer_rank_params(layer, false), layer_rank_params(layer, true), task);
    return;
  }
  const std::size_t b = std::size_t(bucket_of_layer_[std::size_t(layer)]);
  const Bucket& bucket = buckets_[std::size_t(stage_of(worker))][b];
  if (bucket.lowest_layer == layer && !bucket.embedding) bucket_done(worker, micro, b, task);
}

void GraphBuilder::after_embedding_gradients(uint32_t worker, int micro, uint32_t task) {
  if (micro == last_gradient_micro_ && w_.model.tied_embeddings && p_.pp > 1) tied_embedding_sync(worker, task);
  if (p_.zero == 3) {
    if (micro == last_gradient_micro_)
      reduce_gradients(worker, JointKind::zero3_scatter, micro, kEmbeddingLayer, CollectiveOp::reduce_scatter,
                       embedding_rank_params(), 0, task);
    return;
  }
  const auto& list = buckets_[std::size_t(stage_of(worker))];
  for (std::size_t b = 0; b < list.size(); ++b)
    if (list[b].embedding) bucket_done(worker, micro, b, task);
}

void GraphBuilder::zero3_gather(uint32_t worker, int micro, int layer, bool forward) {
  const int s = stage_of(worker);
  int j = 0;
  while (chunk_start_[j + 1] <= layer) ++j;
  const double pb = o_.parameter_bytes;
  // At most two layers' weights are gathered at once: the one computing and the next. The
  // gather `ahead` layers from now waits for the compute 2 - ahead layers back.
  auto ensure = [&](int l, int ahead) {
    uint32_t& t = joint(forward ? JointKind::zero3_gather_fwd : JointKind::zero3_gather_bwd, s, micro, l);
    if (t == kNone) {
      const uint32_t item = data_parallel_item(s, CollectiveOp::all_gather, layer_rank_params(l, false) * pb,
                                               layer_rank_params(l, true) * pb);
      if (item == kNone) return kNone;
      t = add_task(worker, Stream::dp_gather, TaskKind::collective, item, micro, l);
    }
    dep(t, recent_layers_[worker][std::size_t(1 - ahead)]);
    return t;
  };
  const uint32_t current = ensure(layer, 0);
  const int next = forward ? layer + 1 : layer - 1;
  if (next >= chunk_start_[j] && next < chunk_start_[j + 1]) ensure(next, 1);
  pending_gather_ = current;
}

void GraphBuilder::tied_embedding_sync(uint32_t worker, uint32_t task) {
  const int r = replica_of(worker);
  uint32_t& t = joint(JointKind::tied, r);
  if (t == kNone) {
    const double bytes = double(w_.model.vocab) * w_.model.hidden / p_.tp * o_.gradient_bytes;
    CommItem item;
    for (int rr : built_replicas_for_traffic(r)) {
      RankCoords c;
      c.edp = rr;
      for (int q : layout_.group(layout_.rank(c), {Dim::tp, Dim::cp, Dim::ep})) {
        RankCoords last = layout_.coords(q);
        last.pp = p_.pp - 1;
        item.parts.push_back({CollectiveOp::all_reduce, bytes, group_index({q, layout_.rank(last)})});
      }
    }
    graph_.comm_items.push_back(std::move(item));
    // On the first stage's pipeline stream (Megatron's embedding group joins the first and last
    // stages): every replica's own, so replicas stay alike.
    t = add_task(worker, Stream::pp, TaskKind::collective, uint32_t(graph_.comm_items.size() - 1), m_ - 1, -1);
  }
  dep(t, task);
}

}  // namespace cs::work::detail
