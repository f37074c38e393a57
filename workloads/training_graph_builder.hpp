#pragma once
// Internal to build_training_graph (training_graph.hpp): the builder's state and steps, split
// over training_graph_build.cpp (set-up, groups, items, tasks, the step's end),
// training_graph_passes.cpp (forward and backward passes of layers) and
// training_graph_sync.cpp (data-parallel buckets and ZeRO's gathers and scatters).
#include <array>
#include <bit>
#include <cstdint>
#include <limits>
#include <map>
#include <string>
#include <tuple>
#include <unordered_map>
#include <utility>
#include <vector>

#include "workloads/training_graph.hpp"
#include "workloads/training_placement.hpp"

namespace cs::work::detail {

inline constexpr uint32_t kNone = std::numeric_limits<uint32_t>::max();
inline constexpr int kEmbeddingLayer = -2;
inline constexpr int kHeadLayer = -3;

// A data-parallel gradient bucket of one stage: consecutive layers of one model chunk, in the
// order backward reaches them.
struct Bucket {
  int chunk = 0;           // model chunk
  int lowest_layer = 0;    // the layer whose backward completes the bucket
  bool embedding = false;  // holds the word embedding (completes after its backward)
  double dense_params = 0, expert_params = 0;  // per rank
};

// Joint tasks (spanning replicas or stages) are created once and found again by key.
enum class JointKind : uint8_t {
  bucket, gather_start, gather_end, zero3_gather_fwd, zero3_gather_bwd, zero3_scatter, tied
};

class GraphBuilder {
 public:
  GraphBuilder(const TrainingWorkload& w, const GraphOptions& o);
  TaskGraph build();

 private:
  // A chain of tasks that depend each on the one before (one micro-batch's data flow).
  struct Chain {
    uint32_t first = kNone;
    uint32_t last = kNone;
  };

  // ---- set-up (training_graph_build.cpp)
  void make_workers();
  void make_buckets();
  uint32_t group_index(std::vector<int> ranks);
  uint32_t worker_of(int replica, int stage) const { return uint32_t(replica * p_.pp + stage); }
  int replica_of(uint32_t worker) const { return graph_.workers[worker].replica; }
  int stage_of(uint32_t worker) const { return graph_.workers[worker].stage; }
  std::vector<int> built_replicas_for_traffic(int replica) const;

  // ---- items and tasks (training_graph_build.cpp)
  uint32_t compute_item(const std::vector<Block>& blocks, std::initializer_list<Phase> phases);
  uint32_t compute_item(std::vector<Op> ops);
  // A block's backward as Megatron's linear layers run it when a tensor-parallel collective
  // follows: the input gradients with the weight gradients each GEMM computes right after its
  // own (`column_weights` false), or the column-parallel linears' weight gradients alone (true:
  // Op::beside_input_collective), which the input gradient's collective runs beside. The latter
  // is empty (zero time) where the blocks hold no such linear (proj alone, the experts, the router).
  uint32_t backward_item(const std::vector<Block>& blocks, bool column_weights);
  // The cached item of key_ (false), or the index the item to be added next gets (true).
  std::pair<uint32_t, bool> cached_compute_item();
  uint32_t worker_collective(uint32_t worker, Stream type, CollectiveOp op, double bytes);
  uint32_t send_item(uint32_t worker, int to_stage, double bytes);
  // One collective over every data-parallel group of `stage` (per tp rank): ZeRO's groups (one
  // per zero_replicas group under hybrid sharding), or with `across` the groups of the ranks at
  // the same place of every zero_replicas group (hybrid sharding's all-reduce of the shards).
  uint32_t data_parallel_item(int stage, CollectiveOp op, double dense_bytes, double expert_bytes, bool across = false);
  // The ranks of `group` whose zero_replicas group is `base`'s (across: whose place in it is).
  std::vector<int> hybrid_filter(const std::vector<int>& group, int base, bool across) const;
  uint32_t add_task(uint32_t worker, Stream s, TaskKind k, uint32_t item, int micro, int layer);
  void dep(uint32_t task, uint32_t pred) {
    if (task != kNone && pred != kNone) edges_.emplace_back(task, pred);
  }
  uint32_t extend(Chain& c, uint32_t task);  // task depends on c.last; becomes c.last
  uint32_t& joint(JointKind kind, int a, int b = 0, int c = 0);
  void finish_step();
  TaskGraph finalize();

  // ---- passes (training_graph_passes.cpp)
  void emit_worker(uint32_t worker);
  void emit_forward(uint32_t worker, int micro, int chunk, TaskKind kind);
  void emit_backward(uint32_t worker, int micro, int chunk);
  void emit_weight_pass(uint32_t worker, int micro, int chunk);
  void layer_forward(uint32_t worker, int micro, int layer, TaskKind kind, Chain& c);
  void layer_backward(uint32_t worker, int micro, int layer, Chain& c);
  // `after`: a task the gather also waits for (kNone: none).
  void tensor_parallel_gather(uint32_t worker, int micro, int layer, Chain& c, uint32_t after = kNone);
  void tensor_parallel_reduce(uint32_t worker, int micro, int layer, Chain& c, uint32_t after = kNone);
  // What a backward input gradient's tensor-parallel collective waits for besides the input
  // gradient: the weight gradient just issued when the plan does not overlap them
  // (overlap_tp_wgrad false, the weight gradients not deferred to their own pass, no
  // userbuffers: under tp_overlap() the key is inert, MoE layers and the head included, as the
  // scenario's warning says), else nothing.
  uint32_t serial_wgrad() const {
    return p_.overlap_tp_wgrad || split_ || tp_overlap() ? kNone : last_weight_task_;
  }
  // Backward without tensor-parallel overlap, with sequence parallelism: the all-gather of a
  // column-parallel linear's saved (sequence-sharded) input again for its weight gradient,
  // issued beside its input gradient (Megatron's LinearWithGradAccumulationAndAsyncCommunication
  // and Transformer Engine's Linear). kNone without sequence parallelism.
  uint32_t weight_input_gather(uint32_t worker, int micro, int layer, const Chain& c);
  // A backward compute segment: input gradients chained; weight gradients behind it on the
  // compute stream (unless zb_h1 defers them to its weight pass), overlapping the collective
  // that follows, after `weight_input` (a weight_input_gather, or kNone; zb_h1's weight pass
  // waits for it).
  void backward_segment(uint32_t worker, int micro, int layer, const std::vector<Block>& blocks, Chain& c,
                        uint32_t weight_input = kNone);
  // Tensor-parallel communication overlap: `blocks` in `kind`'s phase pipelined with the
  // all-gather before them (`gather`) and the reduce-scatter after them (`scatter`), as
  // Transformer Engine's userbuffers pipelines tp chunks, in three stages (first chunk, middle
  // chunks, last chunk) with the first gather piece and the last scatter piece of 1/tp the
  // bytes exposed. Returns the last chunk; c.last is the last scatter piece (or the last chunk).
  uint32_t overlapped(uint32_t worker, int micro, int layer, TaskKind kind, const std::vector<Block>& blocks,
                      bool gather, bool scatter, Chain& c);
  bool tp_overlap() const { return p_.tp > 1 && p_.sequence_parallel && p_.tp_comm_overlap; }
  // `parts` / `of` of the ops of `blocks` in `phase`, cut along the tokens.
  uint32_t chunk_item(const std::vector<Block>& blocks, Phase phase, int parts, int of);

  // ---- data parallelism and ZeRO (training_graph_sync.cpp)
  void gather_at_start(uint32_t worker);
  void after_layer_gradients(uint32_t worker, int micro, int layer, uint32_t task);
  void after_embedding_gradients(uint32_t worker, int micro, uint32_t task);
  void bucket_done(uint32_t worker, int micro, std::size_t bucket, uint32_t task);
  void zero3_gather(uint32_t worker, int micro, int layer, bool forward);
  void tied_embedding_sync(uint32_t worker, uint32_t task);
  double layer_rank_params(int layer, bool expert) const;
  double head_rank_params() const;
  double embedding_rank_params() const;
  // Of `dense` and `expert` parameters per rank, those whose optimizer state the rank keeps
  // (all of them without ZeRO; its data-parallel shard with).
  double local_params(double dense, double expert) const;
  // CPU offload: copy the gradients of `dense` + `expert` parameters per rank (the rank's shard
  // under ZeRO) to the host once `after` has reduced them.
  void offload_gradients(uint32_t worker, int micro, int layer, double dense, double expert, uint32_t after);
  // Creates the joint reduction `kind` (stage, micro, key) on first call, on the data-parallel
  // stream of `worker`; every call makes it wait for `after`.
  // Returns the joint task, or kNone when there is no data-parallel group (nothing to reduce).
  uint32_t joint_reduce(uint32_t worker, JointKind kind, int micro, int key, CollectiveOp op, double dense_bytes,
                        double expert_bytes, uint32_t after);
  // joint_reduce of gradients (dense and expert parameters per rank), then, with CPU offload,
  // their copy to the host (after the reduction, or after `after` with nothing to reduce).
  void reduce_gradients(uint32_t worker, JointKind kind, int micro, int key, CollectiveOp op, double dense,
                        double expert, uint32_t after);

  const TrainingWorkload& w_;
  const ParallelPlan& p_;
  GraphOptions o_;
  RankLayout layout_;
  int m_ = 0;                 // micro-batches
  // The micro-batch of the worker's last gradient pass (its schedule's): the step-level
  // reductions (ZeRO 0 / 1 buckets, tied embeddings, ZeRO 3's head and embedding) wait for it.
  int last_gradient_micro_ = 0;
  int chunks_ = 0;            // model chunks
  bool split_ = false;        // zb_h1: backward split into input and weight passes
  bool offload_ = false;      // CPU offload of the optimizer
  double tokens_ = 0;         // per rank per micro-batch
  std::vector<int> chunk_start_;  // first layer of each model chunk (+ one past the end)
  TaskGraph graph_;
  std::vector<std::pair<uint32_t, uint32_t>> edges_;               // (task, predecessor)
  std::vector<std::vector<uint32_t>> queues_;                       // per worker x stream
  std::map<std::vector<int>, uint32_t> group_ids_;
  // worker_collective's and send_item's items by (worker, stream or destination, op, bytes):
  // hashed, as a step asks for them at every layer.
  struct CommKey {
    uint32_t worker;
    int stream, op;
    double bytes;
    bool operator==(const CommKey&) const = default;
  };
  struct CommKeyHash {
    std::size_t operator()(const CommKey& k) const {  // + 0.0: -0 hashes as 0, which it equals
      const uint64_t bytes = std::bit_cast<uint64_t>(k.bytes + 0.0);
      const uint64_t rest = uint64_t(k.worker) << 32 | uint64_t(uint16_t(k.stream)) << 16 | uint16_t(k.op);
      return std::size_t((bytes ^ (bytes >> 29) ^ rest * 0x9e3779b97f4a7c15ULL) * 0xbf58476d1ce4e5b9ULL);
    }
  };
  std::unordered_map<CommKey, uint32_t, CommKeyHash> comm_cache_;
  // data_parallel_item's items by (stage, op, dense bytes, expert bytes): ZeRO-3 asks for the
  // same gather every layer and micro-batch, and its groups span every replica.
  std::map<std::tuple<int, int, double, double, bool>, uint32_t> data_parallel_cache_;
  // Hybrid sharding: a joint reduce-scatter task -> the all-reduce across groups after it.
  std::map<uint32_t, uint32_t> across_of_;
  std::unordered_map<std::string, uint32_t> compute_cache_;  // compute items by key_
  std::string key_;  // the key of the compute item asked for (its buffer reused)
  std::unordered_map<uint64_t, uint32_t> joint_;
  // Per stage: buckets, and for each layer the bucket it belongs to.
  std::vector<std::vector<Bucket>> buckets_;
  std::vector<int> bucket_of_layer_;
  // Pass ends, by (replica, micro, model chunk): linked across stages once all are built.
  std::vector<uint32_t> forward_first_, forward_last_, backward_first_, forward_send_, backward_send_;
  // Per worker: the last compute task of the two layers it ran last, most recent first (ZeRO-3
  // gathers at most two layers ahead of them), and each worker's optimizer.
  std::vector<std::array<uint32_t, 2>> recent_layers_;
  void ran_layer(uint32_t worker, uint32_t task) { recent_layers_[worker] = {task, recent_layers_[worker][0]}; }
  std::vector<uint32_t> optimizer_task_;
  uint32_t pending_gather_ = kNone;     // the next compute task waits for these weights
  uint32_t pending_send_ = kNone;       // without overlap_p2p: the next compute task waits for this send
  uint32_t last_weight_task_ = kNone;   // the weight-gradient task of the layer just emitted
  // zb_h1: the weight_input_gathers of the input pass by (worker, micro, layer), which the
  // weight pass of that layer waits for (erased as it does).
  std::map<std::tuple<uint32_t, int, int>, std::vector<uint32_t>> deferred_weight_inputs_;
  std::size_t pass_index(int replica, int micro, int chunk) const {
    return (std::size_t(replica) * m_ + micro) * chunks_ + chunk;
  }
};

}  // namespace cs::work::detail
