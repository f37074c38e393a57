#pragma once
// A lower bound of a training step's time without simulating it, from its task graph with
// every compute (and host) task at its nominal time and every communication task taking no
// time, each stream running its tasks in order. Any executor that honours the graph's
// dependencies and streams' orders, with compute never faster than nominal and transfers never
// faster than instant, takes at least this long: the contention-free screening
// (AloneTimeComm) and every network model alike. So tokens / bound bounds a plan's throughput
// from above, which lets plan search (sim/studies/plan_search.hpp) leave unsimulated the plans
// that cannot reach its top. What it leaves out is communication: exposed transfers and the
// compute they slow down.
//
// The bound is, over workers, the most of
//   head (the longest path to the worker's first compute task)
//   + its compute stream's nominal work (serial: its tasks never overlap)
//   + tail (the longest path after its last compute task ends),
// and, for the graph's own micro-batch count, the longest path through the whole graph. For a
// step of m micro-batches from a graph built with fewer (compute/step_extrapolation.hpp's
// first point, whose warm-up and drain the longer step shares), a worker's work is its
// step-level tasks plus m times one micro-batch's: each micro-batch runs the same tasks.
// Units: seconds; O(tasks + dependencies), no simulator.
#include <span>

#include "workloads/training_graph.hpp"

namespace cs::compute {

struct StepBound {
  double step_time_s = 0;  // the bound: compute, optimizer and the pipeline's bubble
  double compute_s = 0;    // mean over workers of their forward, backward and recompute, nominal
  double optimizer_s = 0;  // mean over workers of their optimizer tasks, nominal
};

// `item_seconds`: each of graph.compute_items' nominal time (item_seconds() of
// training_step.hpp). `micro_batches`: the step's, at least graph.micro_batches. Throws
// std::logic_error when the graph's dependencies and stream orders form a cycle (a graph no
// executor finishes).
StepBound step_time_lower_bound(const work::TaskGraph& graph, std::span<const double> item_seconds, int micro_batches);

}  // namespace cs::compute
