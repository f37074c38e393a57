#pragma once
// Preemption by queue priority, as Slurm's PreemptType=preempt/partition_prio with
// PreemptMode=REQUEUE does it (slurm.schedmd.com/preempt.html): a pending job that cannot start
// may take the GPUs of running jobs in queues of a lower priority than its own; they are
// requeued and resume from their last checkpoint (the work since is lost).
//
// Victims: from the lowest-priority queue up and, within a queue, the most recently started
// first (PBS Professional's documented rule, Slurm's PreemptParameters=youngest_first: the
// least work to lose), until the free GPUs and the victims' would hold the job. If all the
// candidates together would not, nobody is preempted. Jobs already stopping (a failure being
// detected, an emergency checkpoint) are not candidates, and GPUs on nodes that are out do not
// count.
#include <vector>

#include "sim/jobs/cluster_state.hpp"
#include "sim/jobs/job_book.hpp"
#include "sim/jobs/jobs_config.hpp"

namespace cs::jobs {

// The jobs to preempt so that a job of queue `queue` needing `gpus` GPUs can start; empty when
// it cannot be done (or no preemption is needed).
std::vector<Slot> choose_victims(int queue, int gpus, const std::vector<QueueConfig>& queues,
                                 const JobBook& book, const ClusterState& cluster);

}  // namespace cs::jobs
