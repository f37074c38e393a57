// build_training_graph: set-up, groups, items, tasks and the step's end (see
// training_graph_builder.hpp for how the builder is split).
#include <algorithm>
#include <numeric>
#include <string>

#include "workloads/training_flops.hpp"
#include "workloads/training_graph_builder.hpp"
#include "workloads/training_memory.hpp"
#include "workloads/training_schedule.hpp"

namespace cs::work {

std::string_view to_string(Stream s) { return name_of(kStreamNames, s); }

Stream group_type(Stream s) { return s == Stream::dp_gather ? Stream::dp : s; }

std::string_view to_string(TaskKind k) { return name_of(kTaskKindNames, k); }

TaskGraph build_training_graph(const TrainingWorkload& w, const GraphOptions& options) {
  return detail::GraphBuilder(w, options).build();
}

namespace detail {

GraphBuilder::GraphBuilder(const TrainingWorkload& w, const GraphOptions& o)
    : w_(w), p_(w.parallel), o_(o), layout_(w.parallel) {
  m_ = micro_batches(w);
  chunks_ = model_chunks(p_);
  split_ = p_.schedule == Schedule::zb_h1;
  offload_ = p_.offload == Offload::optimizer;
  tokens_ = rank_tokens(w);
  chunk_start_ = {0};
  for (int n : chunk_layers(w)) chunk_start_.push_back(chunk_start_.back() + n);
  o_.bucket_params = gradient_bucket_params(p_, o_.bucket_params);
  make_workers();
  make_buckets();
}

void GraphBuilder::make_workers() {
  const int replicas = layout_.size(Dim::edp);
  graph_.ranks = layout_.ranks();
  graph_.replicas = replicas;
  graph_.replicas_built = o_.one_replica ? 1 : replicas;
  graph_.micro_batches = m_;
  for (int r = 0; r < graph_.replicas_built; ++r)
    for (int s = 0; s < p_.pp; ++s) {
      RankCoords c;
      c.edp = r, c.pp = s;
      graph_.workers.push_back({s, r, layout_.group(layout_.rank(c), {Dim::tp, Dim::cp, Dim::ep})});
    }
  queues_.assign(graph_.workers.size() * kStreams, {});
  recent_layers_.assign(graph_.workers.size(), {kNone, kNone});
  optimizer_task_.assign(graph_.workers.size(), kNone);
  const std::size_t passes = std::size_t(graph_.replicas_built) * m_ * chunks_;
  for (auto* v : {&forward_first_, &forward_last_, &backward_first_, &forward_send_, &backward_send_})
    v->assign(passes, kNone);
}

double GraphBuilder::layer_rank_params(int layer, bool expert) const {
  const ParamCounts counts = parameter_counts(w_.model);
  const LayerParams& lp = w_.model.moe_layer(layer) ? counts.moe_layer : counts.dense_layer;
  if (expert) return lp.experts / (double(p_.tp) * p_.ep);
  return (lp.attention + lp.mlp) / p_.tp + lp.router + lp.norms;
}

double GraphBuilder::head_rank_params() const {
  const ParamCounts counts = parameter_counts(w_.model);
  const double word_embedding = double(w_.model.vocab) * w_.model.hidden / p_.tp;
  // A tied LM head is the embedding; with pp > 1 the last stage holds its own copy.
  return counts.final_norm + (w_.model.tied_embeddings ? (p_.pp > 1 ? word_embedding : 0) : counts.lm_head / p_.tp);
}

double GraphBuilder::local_params(double dense, double expert) const {
  if (p_.zero == 0) return dense + expert;
  return dense / dense_zero_shards(p_) + expert / expert_zero_shards(p_);
}

double GraphBuilder::embedding_rank_params() const { return parameter_counts(w_.model).embedding / p_.tp; }

void GraphBuilder::make_buckets() {
  bucket_of_layer_.assign(std::size_t(w_.model.layers), 0);
  buckets_.assign(std::size_t(p_.pp), {});
  for (int s = 0; s < p_.pp; ++s) {
    auto& list = buckets_[std::size_t(s)];
    for (int c = p_.virtual_stages - 1; c >= 0; --c) {
      const int j = model_chunk_of(s, c, p_.pp);
      Bucket b{j, chunk_start_[j + 1] - 1, false, 0, 0};
      if (j == chunks_ - 1) b.dense_params = head_rank_params();  // first in backward
      for (int layer = chunk_start_[j + 1] - 1; layer >= chunk_start_[j]; --layer) {
        b.dense_params += layer_rank_params(layer, false);
        b.expert_params += layer_rank_params(layer, true);
        b.lowest_layer = layer;
        bucket_of_layer_[std::size_t(layer)] = int(list.size());
        if (layer == chunk_start_[j]) break;
        if (b.dense_params + b.expert_params >= o_.bucket_params) {
          list.push_back(b);
          b = Bucket{j, layer - 1, false, 0, 0};
        }
      }
      if (j == 0) {
        b.embedding = true;
        b.dense_params += embedding_rank_params();
      }
      list.push_back(b);
    }
  }
}

uint32_t GraphBuilder::group_index(std::vector<int> ranks) {
  auto [it, inserted] = group_ids_.try_emplace(std::move(ranks), uint32_t(graph_.groups.size()));
  if (inserted) graph_.groups.push_back(it->first);
  return it->second;
}

std::vector<int> GraphBuilder::built_replicas_for_traffic(int replica) const {
  if (!(o_.one_replica && o_.mirror_replica_traffic)) return {replica};
  std::vector<int> all(std::size_t(graph_.replicas));
  std::iota(all.begin(), all.end(), 0);
  return all;
}

std::pair<uint32_t, bool> GraphBuilder::cached_compute_item() {
  // Looked up before it is copied: every layer of every micro-batch asks again for the few items
  // a step has (the key's allocation and copy were a tenth of plan search's bounding).
  if (const auto it = compute_cache_.find(key_); it != compute_cache_.end()) return {it->second, false};
  const uint32_t index = uint32_t(graph_.compute_items.size());
  compute_cache_.emplace(key_, index);
  return {index, true};
}

uint32_t GraphBuilder::compute_item(const std::vector<Block>& blocks, std::initializer_list<Phase> phases) {
  key_.clear();
  for (Phase ph : phases) key_ += char('a' + int(ph));
  key_ += ':';
  for (Block b : blocks) key_ += char('a' + int(b));
  const auto [index, inserted] = cached_compute_item();
  if (!inserted) return index;
  ComputeItem item;
  for (Phase ph : phases)
    for (Block b : blocks) {
      auto ops = block_ops(w_, b, ph);
      item.ops.insert(item.ops.end(), ops.begin(), ops.end());
    }
  graph_.compute_items.push_back(std::move(item));
  return index;
}

uint32_t GraphBuilder::backward_item(const std::vector<Block>& blocks, bool column_weights) {
  key_ = column_weights ? "column_weights:" : "input_inline_weights:";
  for (Block b : blocks) key_ += char('a' + int(b));
  const auto [index, inserted] = cached_compute_item();
  if (!inserted) return index;
  ComputeItem item;
  if (!column_weights)
    for (Block b : blocks)
      for (const Op& op : block_ops(w_, b, Phase::backward_input)) item.ops.push_back(op);
  for (Block b : blocks)
    for (const Op& op : block_ops(w_, b, Phase::backward_weight))
      if (op.beside_input_collective == column_weights) item.ops.push_back(op);
  graph_.compute_items.push_back(std::move(item));
  return index;
}

uint32_t GraphBuilder::chunk_item(const std::vector<Block>& blocks, Phase phase, int parts, int of) {
  key_ = "chunk";
  key_ += std::to_string(parts);
  key_ += '/';
  key_ += std::to_string(of);
  key_ += char('a' + int(phase));
  key_ += ':';
  for (Block b : blocks) key_ += char('a' + int(b));
  const auto [index, inserted] = cached_compute_item();
  if (!inserted) return index;
  ComputeItem item;
  const double share = double(parts) / of;
  for (Block b : blocks)
    for (Op op : block_ops(w_, b, phase)) {
      // A chunk's GEMMs have a share of the tokens: rows (m) forward and for input
      // gradients, the reduction dimension (k) for weight gradients.
      (phase == Phase::backward_weight ? op.k : op.m) *= share;
      op.flops *= share, op.work_flops *= share, op.bytes *= share, op.share *= share, op.accumulated *= share;
      // Userbuffers cuts only the GEMMs into chunks, each its own launch (the middle item is
      // parts of them); the attention kernels (a ring step each under context parallelism),
      // norms, activations and residual adds run once over all the tokens: their work is spread
      // over the chunks here for the pipeline's shape, their launches counted once in all.
      op.kernels *= op.kind == OpKind::gemm ? parts : share;
      item.ops.push_back(op);
    }
  graph_.compute_items.push_back(std::move(item));
  return index;
}

uint32_t GraphBuilder::compute_item(std::vector<Op> ops) {
  graph_.compute_items.push_back({std::move(ops)});
  return uint32_t(graph_.compute_items.size() - 1);
}

uint32_t GraphBuilder::worker_collective(uint32_t worker, Stream type, CollectiveOp op, double bytes) {
  const CommKey key{worker, int(type), int(op), bytes};
  if (auto it = comm_cache_.find(key); it != comm_cache_.end()) return it->second;
  const Dim dim = type == Stream::tp ? Dim::tp : type == Stream::cp ? Dim::cp : Dim::ep;
  CommItem item;
  for (int r : built_replicas_for_traffic(replica_of(worker))) {
    RankCoords c;
    c.edp = r, c.pp = stage_of(worker);
    for (int q : layout_.group(layout_.rank(c), {Dim::tp, Dim::cp, Dim::ep}))
      if (layout_.coords(q)[dim] == 0) item.parts.push_back({op, bytes, group_index(layout_.group(q, {dim}))});
  }
  graph_.comm_items.push_back(std::move(item));
  return comm_cache_[key] = uint32_t(graph_.comm_items.size() - 1);
}

uint32_t GraphBuilder::send_item(uint32_t worker, int to_stage, double bytes) {
  const CommKey key{worker, int(Stream::pp) + 16 * to_stage, int(CollectiveOp::send_recv), bytes};
  if (auto it = comm_cache_.find(key); it != comm_cache_.end()) return it->second;
  CommItem item;
  for (int r : built_replicas_for_traffic(replica_of(worker))) {
    RankCoords c;
    c.edp = r, c.pp = stage_of(worker);
    for (int q : layout_.group(layout_.rank(c), {Dim::tp, Dim::cp, Dim::ep})) {
      RankCoords d = layout_.coords(q);
      d.pp = to_stage;
      item.parts.push_back({CollectiveOp::send_recv, bytes, group_index({q, layout_.rank(d)})});
    }
  }
  graph_.comm_items.push_back(std::move(item));
  return comm_cache_[key] = uint32_t(graph_.comm_items.size() - 1);
}

std::vector<int> GraphBuilder::hybrid_filter(const std::vector<int>& group, int base, bool across) const {
  const int per_group = layout_.size(Dim::edp) / p_.zero_replicas;  // replicas in one zero_replicas group
  const int want = layout_.coords(base).edp;
  std::vector<int> out;
  for (int r : group) {
    const int edp = layout_.coords(r).edp;
    if (across ? edp % per_group == want % per_group : edp / per_group == want / per_group) out.push_back(r);
  }
  return out;
}

uint32_t GraphBuilder::data_parallel_item(int stage, CollectiveOp op, double dense_bytes, double expert_bytes,
                                          bool across) {
  const auto key = std::make_tuple(stage, int(op), dense_bytes, expert_bytes, across);
  if (auto it = data_parallel_cache_.find(key); it != data_parallel_cache_.end()) return it->second;
  uint32_t& cached = data_parallel_cache_[key];
  cached = kNone;
  CommItem item;
  RankCoords c;
  c.pp = stage;
  const int replicas = p_.zero_replicas, per_group = layout_.size(Dim::edp) / replicas;
  for (c.tp = 0; c.tp < p_.tp; ++c.tp) {
    if (across) {  // each rank's shard with its peers in the other zero_replicas groups
      for (c.cp = 0; c.cp < p_.cp; ++c.cp)
        for (c.ep = 0; c.ep < p_.ep; ++c.ep)
          for (c.edp = 0; c.edp < per_group; ++c.edp) {
            const int rank = layout_.rank(c);
            item.parts.push_back({op, dense_bytes + expert_bytes,
                                  group_index(hybrid_filter(layout_.group(rank, {Dim::edp}), rank, true))});
          }
      continue;
    }
    for (int g = 0; g < replicas; ++g) {
      c.edp = g * per_group;
      c.ep = 0;
      const int rank = layout_.rank(c);
      const auto dense = hybrid_filter(layout_.group(rank, {Dim::cp, Dim::ep, Dim::edp}), rank, false);
      if (dense.size() > 1 && dense_bytes > 0) item.parts.push_back({op, dense_bytes, group_index(dense)});
      for (c.ep = 0; c.ep < p_.ep; ++c.ep) {
        const int erank = layout_.rank(c);
        const auto expert = hybrid_filter(layout_.group(erank, {Dim::cp, Dim::edp}), erank, false);
        if (expert.size() > 1 && expert_bytes > 0) item.parts.push_back({op, expert_bytes, group_index(expert)});
      }
    }
  }
  if (item.parts.empty()) return kNone;
  graph_.comm_items.push_back(std::move(item));
  return cached = uint32_t(graph_.comm_items.size() - 1);
}

uint32_t GraphBuilder::add_task(uint32_t worker, Stream s, TaskKind k, uint32_t item, int micro, int layer) {
  const uint32_t id = uint32_t(graph_.tasks.size());
  graph_.tasks.push_back({worker, item, micro, layer, s, k});
  queues_[std::size_t(worker) * kStreams + std::size_t(s)].push_back(id);
  if (s == Stream::compute && pending_gather_ != kNone) {
    dep(id, pending_gather_);
    pending_gather_ = kNone;
  }
  if (s == Stream::compute && pending_send_ != kNone) {
    dep(id, pending_send_);
    pending_send_ = kNone;
  }
  return id;
}

uint32_t GraphBuilder::extend(Chain& c, uint32_t task) {
  dep(task, c.last);
  if (c.first == kNone) c.first = task;
  c.last = task;
  return task;
}

uint32_t& GraphBuilder::joint(JointKind kind, int a, int b, int c) {
  // a: stage or replica (< 2^16), b: micro-batch (< 2^20), c: layer or bucket + 8 (< 2^20).
  const uint64_t key = (uint64_t(kind) << 60) | (uint64_t(a) << 40) | (uint64_t(b) << 20) | uint64_t(c + 8);
  return joint_.try_emplace(key, kNone).first->second;
}

void GraphBuilder::finish_step() {
  const uint32_t workers = uint32_t(graph_.workers.size());
  auto last_on = [&](uint32_t worker, Stream s) {
    const auto& q = queues_[std::size_t(worker) * kStreams + std::size_t(s)];
    return q.empty() ? kNone : q.back();
  };
  // Each stage's gradients are reduced on replica 0's data-parallel stream (joint tasks).
  // Taken before the step's own tasks join the streams.
  std::vector<uint32_t> reduced(workers), own(workers), computed(workers), tied(workers);
  for (uint32_t wk = 0; wk < workers; ++wk) {
    reduced[wk] = last_on(worker_of(0, stage_of(wk)), Stream::dp);
    own[wk] = last_on(wk, Stream::dp);
    computed[wk] = last_on(wk, Stream::compute);
    tied[wk] = last_on(worker_of(replica_of(wk), 0), Stream::pp);  // the tied embedding's sum
  }

  // Without overlap_grad_reduce a stage's gradient reductions start once its backward is done:
  // the first task on its data-parallel streams waits for every worker of the stage.
  if (!p_.overlap_grad_reduce)
    for (uint32_t wk = 0; wk < workers; ++wk)
      for (uint32_t holder : {worker_of(0, stage_of(wk)), wk}) {
        const auto& q = queues_[std::size_t(holder) * kStreams + std::size_t(Stream::dp)];
        if (!q.empty()) dep(q.front(), computed[wk]);
      }

  uint32_t norm = kNone;
  if (o_.grad_norm_sync && graph_.ranks > 1) {
    std::vector<int> all(std::size_t(graph_.ranks));
    std::iota(all.begin(), all.end(), 0);
    graph_.comm_items.push_back({{{CollectiveOp::all_reduce, 4, group_index(std::move(all))}}});
    norm = add_task(0, Stream::dp, TaskKind::collective, uint32_t(graph_.comm_items.size() - 1), -1, -1);
    for (uint32_t wk = 0; wk < workers; ++wk) {
      dep(norm, computed[wk]);
      dep(norm, own[wk]);
      if (reduced[wk] != own[wk]) dep(norm, reduced[wk]);
      dep(norm, tied[wk]);
    }
  }
  const double gradient_bytes = o_.gradient_bytes;
  const bool loss_scaled = w_.precision == Precision::fp16;  // fp16 trains under a loss scale
  const OptimizerStep step{o_.optimizer, gradient_bytes, loss_scaled};
  for (uint32_t wk = 0; wk < workers; ++wk) {
    const StageParams sp = stage_params(w_, stage_of(wk));
    const double local = local_params(sp.dense, sp.expert);
    // CPU offload: the step runs on the host, after the gradients' last copy.
    const uint32_t copied = last_on(wk, Stream::host);
    const uint32_t opt =
        offload_ ? add_task(wk, Stream::host, TaskKind::optimizer,
                            compute_item({host_optimizer_op(local, gradient_bytes, loss_scaled)}), -1, -1)
                 : add_task(wk, Stream::compute, TaskKind::optimizer,
                            compute_item({optimizer_op(step, local, p_.zero >= 2 ? local : sp.dense + sp.expert)}), -1, -1);
    dep(opt, norm);
    dep(opt, copied);
    dep(opt, reduced[wk]);
    if (own[wk] != reduced[wk]) dep(opt, own[wk]);
    if (w_.model.tied_embeddings && p_.pp > 1 && (stage_of(wk) == 0 || stage_of(wk) == p_.pp - 1))
      dep(opt, tied[wk]);
    optimizer_task_[wk] = opt;
    if (offload_) {  // the updated 16-bit weights back to the GPU
      optimizer_task_[wk] = add_task(wk, Stream::host, TaskKind::host_copy,
                                     compute_item({host_copy_op("weights_h2d", local * o_.parameter_bytes)}), -1, -1);
      dep(optimizer_task_[wk], opt);
    }
  }
  // ZeRO-1/2: every replica gathers the updated weights of its stage.
  if ((p_.zero == 1 || p_.zero == 2) && !o_.overlap_param_gather)
    for (uint32_t wk = 0; wk < workers; ++wk) {
      const int s = stage_of(wk);
      uint32_t& gather = joint(JointKind::gather_end, s);
      if (gather == kNone) {
        const StageParams sp = stage_params(w_, s);
        const uint32_t item = data_parallel_item(s, CollectiveOp::all_gather, sp.dense * o_.parameter_bytes,
                                                 sp.expert * o_.parameter_bytes);
        if (item == kNone) continue;
        gather = add_task(wk, Stream::dp_gather, TaskKind::collective, item, -1, -1);
      }
      dep(gather, optimizer_task_[wk]);
    }
}

TaskGraph GraphBuilder::finalize() {
  const std::size_t n = graph_.tasks.size();
  graph_.pred_begin.assign(n + 1, 0);
  for (const auto& [task, pred] : edges_) ++graph_.pred_begin[task + 1];
  std::partial_sum(graph_.pred_begin.begin(), graph_.pred_begin.end(), graph_.pred_begin.begin());
  graph_.preds.assign(edges_.size(), 0);
  std::vector<uint32_t> fill(graph_.pred_begin.begin(), graph_.pred_begin.end() - 1);
  for (const auto& [task, pred] : edges_) graph_.preds[fill[task]++] = pred;
  graph_.stream_begin.assign(queues_.size() + 1, 0);
  for (std::size_t q = 0; q < queues_.size(); ++q) {
    graph_.stream_begin[q + 1] = graph_.stream_begin[q] + uint32_t(queues_[q].size());
    graph_.stream_tasks.insert(graph_.stream_tasks.end(), queues_[q].begin(), queues_[q].end());
  }
  return std::move(graph_);
}

TaskGraph GraphBuilder::build() {
  for (uint32_t wk = 0; wk < graph_.workers.size(); ++wk) emit_worker(wk);
  // Pipeline links: a chunk's forward waits for the previous chunk's activations, its backward
  // for the next chunk's gradients.
  for (int r = 0; r < graph_.replicas_built; ++r)
    for (int i = 0; i < m_; ++i)
      for (int j = 0; j < chunks_; ++j) {
        if (j > 0) dep(forward_first_[pass_index(r, i, j)], forward_send_[pass_index(r, i, j - 1)]);
        if (j < chunks_ - 1) dep(backward_first_[pass_index(r, i, j)], backward_send_[pass_index(r, i, j + 1)]);
      }
  finish_step();
  return finalize();
}

}  // namespace detail
}  // namespace cs::work
