#pragma once
// Hardware and software failures of the instances of a pool: configuration and published
// defaults.
//
// Model (instance_pool.cpp runs it)
// - Independent failures: every held instance fails after a lifetime drawn from a Weibull
//   distribution of mean `node_mtbf_s` and shape `weibull_shape`, counted from when it became
//   ready (a new or repaired node is as good as new). Shape 1 is the exponential: then the pool
//   runs one superposed Poisson process of rate n / node_mtbf_s over its n held instances,
//   redrawn when n changes, which is exact (memoryless). Any other shape needs each node's age,
//   so each held instance carries its own pending failure event.
// - Each failure has a cause drawn from `causes` (shares). A cause either takes the node out of
//   service until a replacement arrives (hardware) or only crashes the job, which restarts on
//   the same nodes (software bugs, NCCL timeouts).
// - Correlated failures: a failure domain (a rack, a leaf switch) of `domain_nodes`
//   consecutive instance slots fails as a whole at rate 1 / domain_mtbf_s per domain, taking
//   every held instance in it.
// - A trace, when given, replays failures at fixed times in addition to the rates.
// - A node taken out of service is replaced after `replacement` (a spare swapped in, or a
//   repaired node back).
// Units: seconds.
#include <limits>
#include <string>
#include <vector>

#include "sim/fleet/event_trace.hpp"
#include "sim/sources/distribution.hpp"

namespace cs::fleet {

struct FailureCause {
  std::string name;
  double share = 0.0;          // relative weight (normalised over the list)
  bool replaces_node = true;   // false: the job restarts on the same nodes
};

// Llama 3 (Meta, "The Llama 3 Herd of Models", 2024, Table 5): 419 unexpected interruptions
// in a 54-day snapshot of pre-training on 16,384 H100 GPUs (2,048 nodes of 8), 78% attributed
// to confirmed or suspected hardware. Per node: 54 d x 24 h x 2,048 / 419 = 6,335 node-hours
// between interruptions (a job on all 2,048 nodes is interrupted every 3.1 h).
inline constexpr double kLlama3Interruptions = 419.0;
inline constexpr double kLlama3Days = 54.0;
inline constexpr double kLlama3Nodes = 16384.0 / 8.0;
inline constexpr double kLlama3NodeMtbf_s =
    kLlama3Days * 86400.0 * kLlama3Nodes / kLlama3Interruptions;

// The Llama 3 root-cause split of those 419 interruptions (counts as shares). Software bugs,
// NCCL watchdog timeouts and dependency failures restart the job on the same nodes; every other
// cause takes the node out for repair (our reading: the table lists components, not actions).
std::vector<FailureCause> llama3_failure_causes();

struct CorrelatedFailures {
  int domain_nodes = 0;  // instances per failure domain; 0 disables correlated failures
  double domain_mtbf_s = std::numeric_limits<double>::infinity();
};

struct FailureConfig {
  double node_mtbf_s = kLlama3NodeMtbf_s;  // mean lifetime of one node; inf: no failures
  double weibull_shape = 1.0;              // 1: exponential (superposed); < 1: infant mortality
  std::vector<FailureCause> causes = llama3_failure_causes();  // empty: all replace the node
  CorrelatedFailures correlated;
  EventTrace trace;  // replayed failures (hardware, node replaced), in addition to the rates
  // Time to swap in a repaired or spare node. An estimate: Llama 3 reports that all but three
  // interruptions were handled by automation; MegaScale (NSDI'24) detects and diagnoses a
  // fault in under 10 minutes. Constant 10 min.
  sources::Distribution replacement = sources::Distribution::constant(600.0);

  // Share of failures that take the node out (1 when `causes` is empty).
  double replacing_share() const;
  void validate(const char* what) const;
};

}  // namespace cs::fleet
