#pragma once
// A lower bound of a training step's time without simulating it, from its task graph with
// every compute (and host) task at its nominal time and every communication task at a time no
// executor beats (comm_item_seconds below: its time alone on the idle fabric, as the
// contention-free screening gives it; or free, when none is given), each stream running its
// tasks in order. Why it bounds: the screening executor (AloneTimeComm) starts a task no
// earlier than its dependencies' and its stream's previous task's ends, runs compute no faster
// than nominal (slowed beside communication) and a communication task exactly its parts' time
// alone; so, task by task in dependency order, each starts and ends no earlier than here, and
// its step is no shorter. Other network models' transfers take at least their time alone
// (contention only slows them; plan_search.hpp's margin covers the rest). So tokens / bound
// bounds a plan's throughput from above, which lets plan search (sim/studies/plan_search.hpp)
// leave unsimulated the plans that cannot reach its top. What it leaves out: compute slowed by
// overlapping communication, transfers contending, and waits for collective partners.
//
// The bound is, over workers, the most of
//   head (the longest path to the worker's first compute task)
//   + its compute stream's nominal work (serial: its tasks never overlap)
//   + the forced gaps of its compute stream: between consecutive compute tasks k, k+1 where
//     k+1 waits on communication that waits on k (a chain of up to kGapChain communication
//     tasks: a tensor-parallel all-reduce between two layers), that chain's time
//   + tail (the longest path after its last compute task ends),
// and, for the graph's own micro-batch count, the longest path through the whole graph. For a
// step of m micro-batches from a graph built with fewer (compute/step_extrapolation.hpp's
// first point, whose warm-up and drain the longer step shares), a worker's work is its
// step-level tasks plus m times one micro-batch's: each micro-batch runs the same tasks; its
// gaps are its step-level gaps plus m times the fewest any one micro-batch has between two of
// its own tasks (every micro-batch runs its passes in the same order: the gaps inside a pass
// repeat, those between passes of different micro-batches are not counted).
// Units: seconds; O(tasks + dependencies), no simulator.
#include <span>
#include <vector>

#include "sim/compute/alone_time_comm.hpp"
#include "workloads/training_graph.hpp"

namespace cs::compute {

struct StepBound {
  double step_time_s = 0;  // the bound: compute, optimizer and the pipeline's bubble
  double compute_s = 0;    // mean over workers of their forward, backward and recompute, nominal
  double optimizer_s = 0;  // mean over workers of their optimizer tasks, nominal
};

// `item_seconds`: each of graph.compute_items' nominal time (item_seconds() of
// training_step.hpp). `comm_seconds`: each of graph.comm_items' time at least (empty: every
// transfer free). `micro_batches`: the step's, at least graph.micro_batches. Throws
// std::logic_error when the graph's dependencies and stream orders form a cycle (a graph no
// executor finishes).
StepBound step_time_lower_bound(const work::TaskGraph& graph, std::span<const double> item_seconds, int micro_batches,
                                std::span<const double> comm_seconds = {});

// Each of graph.comm_items' time on the contention-free screening layer as the executor issues
// it (training_executor.hpp): its parts at once, so the longest part's time alone; a send at
// AloneTimeComm::send_time_s, a collective with the algorithm `nccl_algorithms` picks
// (nccl_collective_options). A part the layer refuses counts 0 (the step's own simulation
// reports the error).
std::vector<double> comm_item_seconds(const work::TaskGraph& graph, AloneTimeComm& comm, bool nccl_algorithms);

}  // namespace cs::compute
