// What interrupts a running job, against timelines worked by hand: a preemption loses exactly
// the work since the last checkpoint, node failures hold the job's GPUs until detected and
// requeue it, a spot reclaim notice long enough for a checkpoint loses nothing, queue caps
// hold jobs back without blocking others, and trace jobs too large for their queue are refused.
#include <catch2/catch.hpp>

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <vector>

#include "tests/cpp/jobs/jobs_test_support.hpp"

using namespace cs::jobs;
using namespace cs::jobs::test;
using cs::sources::Distribution;

namespace {

// One node of 8 GPUs, queues "low" (priority 0) and "high" (priority 10), preemption on, a
// sync checkpoint every 600 s of work taking 60 s, restores free.
JobsConfig preemptible(const std::string& trace) {
  JobsConfig c = quiet_cluster(1, 8);
  c.scheduler.policy = Policy::priority;
  c.scheduler.preemption = true;
  c.scheduler.queues = {queue("low"), queue("high", 10)};
  c.checkpoint = cs::fleet::CheckpointConfig{};
  c.checkpoint->interval_s = 600.0;
  c.checkpoint->write_time_s = 60.0;
  c.trace_path = trace;
  c.record_jobs = true;
  return c;
}

}  // namespace

TEST_CASE("A preempted job loses exactly the work since its last checkpoint", "[jobs][interruptions]") {
  // The low job runs from 0: checkpoints end at 660, 1320, 1980 (each 600 s of work + 60 s).
  // At 2000 the high job preempts it 20 s into its fourth interval: 20 s lost, 1,800 s kept.
  // The high job runs 2000-2100; the low job resumes at 2100 from 1,800 s with 8,200 s to go
  // and 13 more checkpoints (at 2,400 ... 9,600 s of work): it ends at 2100 + 8200 + 780.
  const JobsConfig c = preemptible(write_trace("preempt", {"0,8,10000,low", "2000,8,100,high"}));
  const JobsResult r = run_jobs(c, 1);
  REQUIRE(r.jobs.size() == 2);
  const JobRecord& low = r.jobs[0];
  const JobRecord& high = r.jobs[1];
  CHECK(low.preemptions == 1);
  CHECK(low.lost_work_s == Approx(20.0));
  CHECK(high.start_s == 2000.0);
  CHECK(high.end_s == 2100.0);
  CHECK(low.end_s == Approx(2100.0 + 8200.0 + 13 * 60.0));
  CHECK(low.wait_s == Approx(100.0));
  CHECK(r.preemptions == 1);
  CHECK(r.queues[0].preemptions == 1);
  CHECK(r.lost_gpu_hours == Approx(20.0 * 8 / 3600.0));
  CHECK(r.checkpoints == 3 + 13);
  // During a checkpoint the interval is done but not yet safe: preempted at 1970, it loses the
  // whole third interval (600 s).
  const JobsResult mid = run_jobs(preemptible(write_trace("preempt_mid", {"0,8,10000,low", "1970,8,100,high"})), 1);
  CHECK(mid.jobs[0].lost_work_s == Approx(600.0));
  // Without checkpoints a preemption loses everything done.
  JobsConfig none = preemptible(write_trace("preempt_none", {"0,8,10000,low", "2000,8,100,high"}));
  none.checkpoint.reset();
  CHECK(run_jobs(none, 1).jobs[0].lost_work_s == Approx(2000.0));
  // A queue of equal priority never preempts: the second job waits.
  JobsConfig equal = preemptible(write_trace("preempt_equal", {"0,8,10000,low", "2000,8,100,low"}));
  const JobsResult e = run_jobs(equal, 1);
  CHECK(e.preemptions == 0);
  CHECK(e.jobs[1].start_s == Approx(e.jobs[0].end_s));
}

TEST_CASE("Preemption takes the youngest jobs of the lowest-priority queue first", "[jobs][interruptions]") {
  JobsConfig c = preemptible(write_trace("youngest", {"0,4,5000,low", "100,4,5000,low", "200,4,100,high"}));
  const JobsResult r = run_jobs(c, 1);
  CHECK(r.jobs[0].preemptions == 0);
  CHECK(r.jobs[1].preemptions == 1);  // started at 100: the younger
  CHECK(r.jobs[2].start_s == 200.0);
}

TEST_CASE("Jobs releasing at one instant release in the order of their holds, not of their ids",
          "[jobs][interruptions]") {
  // Queues low, mid and high on one node of 8 GPUs, no checkpoints. Job 0 (low) and job 1 (mid)
  // start at 0; at 100 the high job preempts job 0, which starts again from scratch when the
  // high job ends at 150 and then releases at 150 + 1,000: the instant job 1, held since 0,
  // releases. The release index orders the two by id (0 first); the holds put job 1 first, as
  // one release event per holder, each scheduled at its hold, ran them.
  JobsConfig c = preemptible(write_trace("hold_order", {"0,4,1000,low", "0,4,1150,mid", "100,4,50,high"}));
  c.scheduler.queues = {queue("low"), queue("mid", 5), queue("high", 10)};
  c.checkpoint.reset();
  cs::engine::Simulator sim(1);
  JobCluster cluster(sim, c);
  cluster.start();
  std::vector<int64_t> held, released;
  std::vector<double> when;
  while (!cluster.done() && sim.step()) {
    std::vector<int64_t> now_held;
    cluster.book().by_release().walk([&](const ReleaseIndex::Entry& e) {
      now_held.push_back(cluster.book().at(e.slot).id);
      return true;
    });
    for (const int64_t id : held)
      if (std::find(now_held.begin(), now_held.end(), id) == now_held.end()) {
        released.push_back(id);
        when.push_back(sim.now());
      }
    held = now_held;
  }
  // Job 0 stops at 100 (preempted), the high job ends at 150, then jobs 1 and 0 at 1,150.
  CHECK(released == std::vector<int64_t>{0, 2, 1, 0});
  CHECK(when == std::vector<double>{100.0, 150.0, 1150.0, 1150.0});
  const JobsResult r = cluster.result();
  CHECK(r.jobs[0].preemptions == 1);
  CHECK(r.jobs[0].end_s == 1150.0);
  CHECK(r.jobs[1].end_s == 1150.0);
}

TEST_CASE("A node failure stops the job until detected, then requeues it", "[jobs][interruptions]") {
  // Two nodes; one failure at 1,000 s on a node of the 16-GPU job (a failure trace hits a
  // random held node); detection 120 s; the node is replaced after 600 s.
  JobsConfig c = quiet_cluster(2, 8);
  c.fleet.failures.trace = {{1000.0, 1}};
  c.fleet.failures.replacement = Distribution::constant(600.0);
  c.restore.detection_s = 120.0;
  c.trace_path = write_trace("failure", {"0,16,5000,default"});
  c.record_jobs = true;
  const JobsResult r = run_jobs(c, 1);
  const JobRecord& j = r.jobs[0];
  CHECK(j.interruptions == 1);
  CHECK(j.lost_work_s == Approx(1000.0));  // no checkpoints
  // Stopped 1000-1120, then pending until the node is back at 1600, then 5,000 s again.
  CHECK(j.wait_s == Approx(480.0));
  CHECK(j.end_s == Approx(1600.0 + 5000.0));
  CHECK(r.interruptions == 1);
  CHECK(r.node_failures == 1);
  CHECK(r.stalled_gpu_hours == Approx(120.0 * 16 / 3600.0));
  CHECK(r.lost_gpu_hours == Approx(1000.0 * 16 / 3600.0));
  // Busy: 16 GPUs from 0 to 1120 and from 1600 to 6600.
  CHECK(r.busy_gpu_hours == Approx(16 * (1120.0 + 5000.0) / 3600.0));
  // The failed node's 8 GPUs stay in service while the hung job holds them (to 1,120 s), then
  // are out until its replacement at 1,600 s: never fewer GPU-hours in service than busy.
  CHECK(r.gpu_hours_available == Approx((16 * 6600.0 - 8 * (600.0 - 120.0)) / 3600.0));
  CHECK(r.busy_gpu_hours <= r.gpu_hours_available);
}

TEST_CASE("A spot reclaim notice long enough for a checkpoint loses nothing", "[jobs][interruptions]") {
  // One spot node, noticed at 1,000 s and reclaimed at 1,120 s. The job's checkpoint takes
  // 60 s: it trains on through the notice and writes an emergency one from 1,060 s, durable as
  // the node goes at 1,120 s.
  JobsConfig c = quiet_cluster(1, 8);
  c.fleet.spot_share = 1.0;
  c.fleet.reclaims.trace = {{1000.0, 1}};
  c.fleet.reclaims.warning_s = 120.0;
  c.fleet.reclaims.capacity_return = Distribution::constant(900.0);
  c.checkpoint = cs::fleet::CheckpointConfig{};
  c.checkpoint->interval_s = 3600.0;
  c.checkpoint->write_time_s = 60.0;
  c.trace_path = write_trace("reclaim", {"0,8,5000,default"});
  c.record_jobs = true;
  const JobsResult r = run_jobs(c, 1);
  CHECK(r.emergency_checkpoints == 1);
  CHECK(r.jobs[0].lost_work_s == 0.0);
  // The reclaim finds its checkpoint written: it leaves, it is not interrupted.
  CHECK(r.jobs[0].interruptions == 0);
  // Back at 1,120 + 900: the remaining 5,000 - 1,060 = 3,940 s, one checkpoint (at 3,600 s of
  // work) on the way.
  CHECK(r.jobs[0].end_s == Approx(2020.0 + 3940.0 + 60.0));
  CHECK(r.reclaims == 1);
  // The write is the only stall: 60 s on 8 GPUs.
  CHECK(r.stalled_gpu_hours == Approx(60.0 * 8 / 3600.0));
  // With a notice shorter than the checkpoint the job runs on and loses its work at the reclaim.
  c.fleet.reclaims.warning_s = 30.0;
  const JobsResult late = run_jobs(c, 1);
  CHECK(late.emergency_checkpoints == 0);
  CHECK(late.jobs[0].lost_work_s == Approx(1030.0));
  CHECK(late.jobs[0].interruptions == 1);
  // Running on through the notice on a node out of scheduling: its GPUs are in service until
  // it goes (1,030 s), so busy never exceeds what was in service.
  for (const JobsResult* x : {&r, &late}) CHECK(x->busy_gpu_hours <= x->gpu_hours_available);
  CHECK(late.gpu_hours_available * 3600.0 == Approx(8 * 1030.0 + 8 * (late.jobs[0].end_s - 1030.0 - 900.0)));
}

TEST_CASE("A queue's cap holds its jobs back without blocking other queues", "[jobs][interruptions]") {
  JobsConfig c = quiet_cluster(1, 8);
  c.scheduler.queues = {queue("capped"), queue("free")};
  c.scheduler.queues[0].max_gpus = 4;
  c.trace_path = write_trace("cap", {"0,4,1000,capped", "1,4,1000,capped", "2,2,1000,free", "3,16,10,free"});
  c.record_jobs = true;
  const JobsResult r = run_jobs(c, 1);
  CHECK(r.rejected == 1);      // 16 GPUs on an 8-GPU cluster
  CHECK(r.submitted == 3);
  CHECK(r.jobs[1].start_s == 1000.0);  // held by the cap until the first is done
  CHECK(r.jobs[2].start_s == 2.0);     // the other queue went on
}
