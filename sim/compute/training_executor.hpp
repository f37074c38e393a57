#pragma once
// Runs a training task graph (workloads/training_graph.hpp) on the simulator, as CUDA runs a
// step: each worker has a compute stream and communication streams; a stream runs its tasks in
// order, and a task starts when its dependencies are done and its stream is free. Compute
// tasks take their given time (the roofline's), and so do the host stream's (CPU offload's
// copies and host optimizer step); communication tasks issue their sends and collectives
// through the communication layer (net::Comm) and end when the last is delivered.
//
// While any communication of a worker moves data, its running compute task may slow down:
// NCCL's kernels occupy SMs and HBM bandwidth (ExecutorOptions::comm_compute_share).
//
// Invariants: deterministic (same graph, times and Comm, same timeline); every task runs
// exactly once; a graph whose streams' orders contradict its dependencies never finishes
// (done() stays false when the simulator runs dry).
// Units: seconds.
#include <algorithm>
#include <cstdint>
#include <vector>

#include "sim/engine/event_queue.hpp"
#include "sim/engine/simulator.hpp"
#include "sim/network/comm.hpp"
#include "workloads/training_graph.hpp"

namespace cs::compute {

// The compute slowdown measured under overlapped communication: compute kernels run 18.9%
// longer on average (40% at most) while NCCL collectives run beside them, on A100, H100,
// MI250 and MI210 with GPT and Llama layers (Jain et al. 2025, "Characterizing
// Compute-Communication Overlap in GPU-Accelerated Distributed Deep Learning: Performance and
// Power Implications", arXiv 2507.03114): a speed share of 1 - 1 / 1.189 = 0.16 taken. NCCL's
// kernels occupy SMs (e.g. 24 blocks of an all-gather on H100's 132) and HBM bandwidth. The
// scenario default of `workload.comm_compute_share`.
inline constexpr double kMeasuredCommComputeShare = 0.16;

struct ExecutorOptions {
  // Share of a GPU's compute speed taken by communication in flight on it: a compute task runs
  // at (1 - share) of its speed while any transfer of its worker moves data. 0 here (the bare
  // executor: communication is free for compute); scenarios default to
  // kMeasuredCommComputeShare.
  double comm_compute_share = 0;
  // Each collective's algorithm, chosen once per (group, op, size) as NCCL's tuner chooses among
  // the algorithms NCCL has: ring, tree (all-reduce) or in-network reduction (NVLS / SHARP,
  // where the fabric has it) by the communication layer's estimate alone on the fabric, and
  // all-to-all as point-to-point sends (direct); on a torus (a TPU slice) also XLA's torus
  // algorithm, for a group holding one rank on every chip. false: the layer's own auto, which also weighs
  // algorithms NCCL lacks for these ops (direct all-gather, halving-doubling, ...).
  bool nccl_algorithms = true;
  // Per graph group: 1 = do not issue its parts (other replicas' traffic that cannot change the
  // step, compute/replica_symmetry.hpp). Empty: issue everything.
  std::vector<uint8_t> skip_groups = {};
};

struct TaskTiming {
  double ready_s = -1;  // all dependencies done
  double start_s = -1;  // running (its stream was free)
  double end_s = -1;
};

// The options a collective of `op` on `group` is issued with: with `nccl_algorithms`
// (ExecutorOptions) the algorithm NCCL's tuner would pick by the layer's estimate alone on the
// fabric; else the layer's own auto. The executor's choice, and the step bound's
// (step_bound.hpp), which must time each transfer as the executor issues it.
net::CollectiveOptions nccl_collective_options(net::Comm& comm, net::GroupId group, work::CollectiveOp op, double bytes,
                                               bool nccl_algorithms);

class TrainingExecutor final : public engine::EventTarget, public net::TransferObserver {
 public:
  // `item_seconds`: time of each compute item (graph.compute_items) at full speed. Comm's
  // ranks are the graph's ranks. The graph, Comm and simulator must outlive the executor.
  TrainingExecutor(engine::Simulator& sim, net::Comm& comm, const work::TaskGraph& graph,
                   std::vector<double> item_seconds, ExecutorOptions options = {});

  // Makes every task without dependencies ready at sim.now(); run the simulator after.
  void start();
  bool done() const { return finished_ == graph_.tasks.size(); }
  double start_time_s() const { return start_s_; }
  double end_time_s() const { return end_s_; }
  const std::vector<TaskTiming>& timings() const { return timing_; }
  // Seconds a compute task lost to overlapping communication (its actual minus its nominal).
  double slowdown_s(uint32_t task) const {
    return std::max(0.0, timing_[task].end_s - timing_[task].start_s - nominal_s(task));  // no rounding below 0
  }
  // A compute or host task's time at full speed; 0 for communication.
  double nominal_s(uint32_t task) const {
    const auto& t = graph_.tasks[task];
    return graph_.is_timed(t) ? item_seconds_[t.item] : 0;
  }

 private:
  struct Running {  // a worker's compute task in progress
    uint32_t task = UINT32_MAX;
    double remaining_s = 0;  // nominal seconds of work left at `since`
    double since = 0;
    double rate = 1;
    engine::EventId event{};
  };

  void on_event(uint64_t tag) override;                         // a compute task ends
  void on_transfer_done(net::TransferId id, uint64_t tag) override;  // a part of a comm task ends
  void try_start(std::size_t queue);
  void begin(uint32_t task);
  void finish(uint32_t task);
  void set_comm_activity(uint32_t worker, int delta);
  void reschedule(uint32_t worker);
  std::size_t queue_of(uint32_t task) const;
  const std::vector<uint32_t>& participants(uint32_t item);
  net::GroupId comm_group(uint32_t group);
  net::CollectiveOptions collective_options(uint32_t group, work::CollectiveOp op, double bytes);

  engine::Simulator& sim_;
  net::Comm& comm_;
  const work::TaskGraph& graph_;
  ExecutorOptions options_;
  std::vector<double> item_seconds_;
  std::vector<TaskTiming> timing_;
  std::vector<uint32_t> pending_;         // unfinished predecessors
  std::vector<uint32_t> succ_begin_, succs_;
  std::vector<uint32_t> head_;            // per queue: next position in its stream
  std::vector<uint8_t> busy_;             // per queue
  // Per queue: its running communication task's transfers still moving (a stream runs one
  // task at a time; per queue, not per task, as the per-task arrays are what a step's memory is).
  std::vector<uint32_t> outstanding_;
  std::vector<int> comm_active_;          // per worker: communication tasks moving data
  std::vector<Running> running_;          // per worker
  std::vector<int64_t> comm_groups_;      // graph group -> Comm group (-1: not registered)
  // The algorithm chosen per (op, bytes), per graph group: a group sees few distinct requests
  // (one to four), so a short list per group is one cache line away, where every collective a
  // step issues looked its choice up in an ordered map (a tenth of a 16,384-GPU step's time).
  struct Choice {
    work::CollectiveOp op;
    double bytes;
    net::CollectiveOptions options;
  };
  std::vector<std::vector<Choice>> choices_;  // per graph group
  std::vector<std::vector<uint32_t>> participants_;  // per comm item: workers whose GPUs move data
  std::vector<uint8_t> participants_known_;
  std::vector<int> worker_of_rank_;       // -1: a rank of a replica not built
  std::size_t finished_ = 0;
  double start_s_ = 0, end_s_ = 0;
};

}  // namespace cs::compute
