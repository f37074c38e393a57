#pragma once
// When the symmetry shortcut (GraphOptions::one_replica with mirrored traffic: one
// expert-data-parallel replica simulated, the others' traffic issued beside it) gives exactly
// the full simulation's step.
//
// It does when every replica runs alike, which this checks conservatively: each replica's
// GPUs (its tp x cp x ep x pp ranks) share one node whose fabric is a star, every GPU on links
// of its own to one switch (an NVSwitch, or a PCIe host without PCIe switches). Then a
// replica's tensor, context, expert and pipeline traffic crosses only its own GPUs' links, the
// data-parallel collectives run on their full groups in either simulation, and the replicas'
// GPUs are interchangeable. Other fabrics may be symmetric too (a non-blocking fat-tree with
// D-mod-K routing often is); there the shortcut is an approximation unless asked for, and the
// full simulation is the default.
#include <cstdint>
#include <string>
#include <vector>

#include "workloads/training_graph.hpp"
#include "workloads/training_plan.hpp"

namespace cs::compute {

struct NodeShape {
  int gpus_per_node = 8;
  // Every GPU reaches the node's other GPUs over links of its own only (NVSwitch, or PCIe
  // straight to the host); false for NVLink meshes and PCIe switches.
  bool star = true;
};

struct ShortcutVerdict {
  bool exact = false;
  std::string reason;  // why, for the summary
};

// `gpu_of_rank`: RankLayout(plan).gpu_of_rank(). `w` must be valid.
ShortcutVerdict one_replica_exact(const work::TrainingWorkload& w, const std::vector<int>& gpu_of_rank,
                                  NodeShape node);

// Under the shortcut, the groups of `graph` (built from `w` with one_replica and mirrored
// traffic) whose mirrored traffic need not be issued: a group of ranks of replicas not built
// (another replica's tensor, context or expert group, or pipeline pair) that lies in one star
// node, as does its replica-0 counterpart, where no other group has two members on that node
// including one of its members (the step's closing all-ranks gradient-norm all-reduce aside: a
// stage's other transfers are done before it starts). Such a group's traffic crosses only its
// own GPUs' links, which nothing else uses, so it takes its uncontended time, never more than
// its replica-0 counterpart's, which the step waits for anyway: dropping it changes no time.
// One flag per graph group.
std::vector<uint8_t> isolated_mirrored_groups(const work::TrainingWorkload& w, const work::TaskGraph& graph,
                                              const std::vector<int>& gpu_of_rank, NodeShape node);

}  // namespace cs::compute
