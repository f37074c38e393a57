#pragma once
// One training step as a task graph, as data: per worker, compute on a compute stream and
// communication on one stream per group type, with dependencies, in the schedule's order.
// sim/compute executes it (a stream runs its tasks in order; a task starts when its
// dependencies are done and its stream is free).
//
// Workers. A worker is one pipeline stage of one expert-data-parallel replica: the tp x cp x ep
// ranks with the same (pp, edp) coordinates (training_placement.hpp). They run identical work
// in lockstep (same shapes; their tensor-, context- and expert-parallel collectives make them
// wait for each other), so one compute task stands for each of them: exact, not an
// approximation, for identical GPUs and balanced MoE routing. A communication task issues its
// collective on every group of the worker (cp x ep tensor-parallel groups, ...) and its
// sends from every rank of the worker, and completes when all are done.
//
// Tasks that span workers (data-parallel reductions and ZeRO gathers, the gradient-norm
// all-reduce, pipeline sends, the tied-embedding all-reduce between first and last stage, on
// the first stage's pp stream) sit on one worker's stream and depend on every participant.
//
// Symmetry. With GraphOptions::one_replica only replica 0's workers are built: the replicas
// are identical, so on a fabric where they are symmetric (non-blocking, every GPU its own NIC)
// the step is the same. Data-parallel collectives still run on their full groups; with
// mirror_replica_traffic the other replicas' tensor/context/expert collectives and pipeline
// sends are issued beside replica 0's (and waited for), so every link carries what it would in
// the full simulation.
#include <array>
#include <cstdint>
#include <span>
#include <string_view>
#include <vector>

#include "common/enum_table.hpp"
#include "workloads/collective.hpp"
#include "workloads/training_ops.hpp"
#include "workloads/training_plan.hpp"

namespace cs::work {

// Streams of a worker; the communication streams are named by the group type they serve.
// Data parallelism has two, as FSDP does: gradient reductions (dp) and weight gathers
// (dp_gather, ZeRO's all-gathers), so a prefetch never waits behind a reduce-scatter. With CPU
// offload the host stream runs the copies over each GPU's host link and the host's optimizer
// step, in order (timed work like compute: compute items, not communication).
enum class Stream : uint8_t { compute, tp, cp, ep, pp, dp, dp_gather, host };
// The names traces give the streams (a worker's threads).
inline constexpr auto kStreamNames = std::to_array<EnumName<Stream>>({
    {"compute", Stream::compute, "the GPU's kernels", NameUse::output_only},
    {"tp", Stream::tp, "tensor-parallel collectives", NameUse::output_only},
    {"cp", Stream::cp, "context-parallel collectives", NameUse::output_only},
    {"ep", Stream::ep, "expert-parallel all-to-alls", NameUse::output_only},
    {"pp", Stream::pp, "pipeline sends between stages", NameUse::output_only},
    {"dp", Stream::dp, "data-parallel gradient reductions", NameUse::output_only},
    {"dp_gather", Stream::dp_gather, "data-parallel weight gathers (ZeRO)", NameUse::output_only},
    {"host", Stream::host, "CPU offload: host-link copies, the host's optimizer step", NameUse::output_only},
});
static_assert(names_every_value<kStreamNames>());
inline constexpr int kStreams = static_cast<int>(kStreamNames.size());
std::string_view to_string(Stream s);
// The group type a stream's communication counts under (dp_gather: dp).
Stream group_type(Stream s);

enum class TaskKind : uint8_t {
  forward, backward_input, backward_weight, recompute, optimizer,  // compute (or host) stream
  collective, send,                                                // communication
  host_copy,                                                       // host stream (CPU offload)
};
// The categories traces give the tasks.
inline constexpr auto kTaskKindNames = std::to_array<EnumName<TaskKind>>({
    {"forward", TaskKind::forward, "a micro-batch's forward through a block", NameUse::output_only},
    {"backward_input", TaskKind::backward_input, "backward: a block's input gradients", NameUse::output_only},
    {"backward_weight", TaskKind::backward_weight, "backward: a block's weight gradients", NameUse::output_only},
    {"recompute", TaskKind::recompute, "a layer's forward again before its backward", NameUse::output_only},
    {"optimizer", TaskKind::optimizer, "the optimizer step", NameUse::output_only},
    {"collective", TaskKind::collective, "a collective on a group", NameUse::output_only},
    {"send", TaskKind::send, "a pipeline send to the next or previous stage", NameUse::output_only},
    {"host_copy", TaskKind::host_copy, "a copy over a GPU's host link (CPU offload)", NameUse::output_only},
});
static_assert(names_every_value<kTaskKindNames>());
std::string_view to_string(TaskKind k);

// A compute task's work.
struct ComputeItem {
  std::vector<Op> ops;
};

// One collective on one group, or one send (op send_recv on a two-rank group: ranks[0] sends to
// ranks[1]). bytes: nccl-tests size (per rank) for collectives, the payload for a send.
struct CommPart {
  CollectiveOp op = CollectiveOp::all_reduce;
  double bytes = 0;
  uint32_t group = 0;  // index into TaskGraph::groups
};

struct CommItem {
  std::vector<CommPart> parts;  // all issued at once; the task ends when every one has
};

struct Task {
  uint32_t worker = 0;
  uint32_t item = 0;      // into compute_items (compute stream) or comm_items
  int32_t micro = -1;     // micro-batch, or -1 for step-level tasks
  int32_t layer = -1;     // model layer, or -1 (embedding -2, head -3)
  Stream stream = Stream::compute;
  TaskKind kind = TaskKind::forward;
};

struct Worker {
  int stage = 0;           // pipeline stage
  int replica = 0;         // expert-data-parallel replica (edp)
  std::vector<int> ranks;  // the tp x cp x ep ranks it stands for
};

struct TaskGraph {
  std::vector<Worker> workers;
  std::vector<Task> tasks;
  // Predecessors of task i: preds[pred_begin[i] .. pred_begin[i + 1]).
  std::vector<uint32_t> pred_begin;
  std::vector<uint32_t> preds;
  // Stream queues: tasks of (worker w, stream s) in execution order:
  // stream_tasks[stream_begin[w * kStreams + s] .. stream_begin[w * kStreams + s + 1]).
  std::vector<uint32_t> stream_begin;
  std::vector<uint32_t> stream_tasks;
  std::vector<ComputeItem> compute_items;
  std::vector<CommItem> comm_items;
  std::vector<std::vector<int>> groups;  // rank lists (canonical ranks, training_placement.hpp)
  int ranks = 0;                         // ranks of the whole plan
  int replicas = 1;                      // expert-data-parallel replicas of the plan
  int replicas_built = 1;                // replicas with workers here (1 with one_replica)
  int micro_batches = 0;

  std::span<const uint32_t> predecessors(uint32_t task) const {
    return {preds.data() + pred_begin[task], preds.data() + pred_begin[task + 1]};
  }
  std::span<const uint32_t> stream(uint32_t worker, Stream s) const {
    const std::size_t q = std::size_t(worker) * kStreams + static_cast<std::size_t>(s);
    return {stream_tasks.data() + stream_begin[q], stream_tasks.data() + stream_begin[q + 1]};
  }
  bool is_compute(const Task& t) const { return t.stream == Stream::compute; }
  // Tasks whose work is a compute item with a time of its own (compute and host streams);
  // the rest are communication items.
  bool is_timed(const Task& t) const { return t.stream == Stream::compute || t.stream == Stream::host; }
};

struct GraphOptions {
  bool one_replica = false;            // build replica 0 only (see above)
  bool mirror_replica_traffic = true;  // with one_replica: issue the other replicas' traffic too
  // Data-parallel gradient buckets, in parameters; 0: Megatron-Core's default
  // max(40e6, 1e6 x dp x cp) (gradient_bucket_params).
  double bucket_params = 0;
  double gradient_bytes = 2;           // per gradient element reduced (Megatron with bf16: 4)
  double parameter_bytes = 2;          // per weight element gathered (ZeRO-1/2/3)
  // The optimizer step's passes (training_ops.hpp); Megatron's, as NVIDIA's recipes run.
  OptimizerKind optimizer = OptimizerKind::megatron;
  // ZeRO-1/2: gather the updated weights at the start of the step, each bucket before its
  // first forward (Megatron's overlap_param_gather, on in NVIDIA's performance recipes);
  // otherwise right after the optimizer.
  bool overlap_param_gather = true;
  // The global gradient-norm all-reduce before the optimizer (gradient clipping): it makes
  // every rank wait for the last reduction.
  bool grad_norm_sync = true;
};

// `w` must be valid (validate()).
TaskGraph build_training_graph(const TrainingWorkload& w, const GraphOptions& options = {});

}  // namespace cs::work
