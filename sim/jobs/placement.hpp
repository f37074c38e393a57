#pragma once
// Placement: which free GPUs a job gets (jobs_config.hpp: PlacementPolicy says what each
// policy does and why). A placement only chooses; the caller allocates.
//
// Gang scheduling is the caller's rule: place() is asked only for a job whose every GPU is
// free now (cluster.free_gpus() >= gpus), and it always returns exactly `gpus` GPUs.
// Deterministic: the same cluster state gives the same allocation.
#include "sim/jobs/cluster_state.hpp"
#include "sim/jobs/jobs_config.hpp"

namespace cs::jobs {

// Precondition: 1 <= gpus <= cluster.free_gpus(). Postcondition: the shares sum to gpus, each
// on an available node with that many free GPUs, nodes in the order they were chosen.
Allocation place(const ClusterState& cluster, int gpus, PlacementPolicy policy);
// The same into `out` (its previous contents dropped, its capacity reused: a scheduling pass
// places into one buffer rather than allocating one per start).
void place(const ClusterState& cluster, int gpus, PlacementPolicy policy, Allocation& out);

}  // namespace cs::jobs
