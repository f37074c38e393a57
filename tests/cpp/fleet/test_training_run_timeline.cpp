// Hand-worked timelines of a training run: every overhead is switched off except the one under
// test, interruptions come from traces at chosen times, and each expected number is derived in
// the comment above its assertion.
#include <catch2/catch.hpp>

#include "fleet_test_support.hpp"
#include "sim/engine/simulator.hpp"
#include "sim/fleet/training_run.hpp"

using namespace cs::fleet;
using cs::sources::Distribution;
using cs::fleet::test::kInf;
using cs::fleet::test::quiet_config;

namespace {

TrainingRunResult run(const TrainingRunConfig& c, uint64_t seed = 1) {
  return run_training(c, seed);
}

double in_state(const TrainingRunResult& r, JobState s) {
  return r.time_in_state_s[static_cast<std::size_t>(s)];
}

}  // namespace

TEST_CASE("Without failures, wall time = steps x step time + checkpoints x write time (sync)",
          "[fleet][training_run]") {
  // 1000 s of work, a checkpoint every 100 s of work written in 7 s: checkpoints at work
  // 100, 200, ..., 900 and the final one at 1000, i.e. 10 checkpoints.
  const TrainingRunConfig c = quiet_config(16, 1000, 100, 7);
  const TrainingRunResult r = run(c);
  REQUIRE(r.completed);
  CHECK(r.checkpoints == 10);
  CHECK(r.wall_time_s == Approx(1000 + 10 * 7).epsilon(1e-12));
  CHECK(r.goodput == Approx(1000.0 / 1070.0).epsilon(1e-12));
  CHECK(r.lost_work_s == 0.0);
  CHECK(r.interruptions == 0);
  CHECK(r.failures == 0);
  CHECK(in_state(r, JobState::running) == Approx(1000).epsilon(1e-12));
  CHECK(in_state(r, JobState::checkpointing) == Approx(70).epsilon(1e-12));
  // 16 nodes on demand at $10 per node-hour for the whole run.
  CHECK(r.node_hours_by_market[Market::on_demand] == Approx(16 * 1070 / 3600.0).epsilon(1e-12));
  CHECK(r.cost_usd == Approx(16 * 1070 / 3600.0 * 10).epsilon(1e-12));

  SECTION("an interval that does not divide the work: no checkpoint right before the final one") {
    const TrainingRunResult r2 = run(quiet_config(4, 250, 100, 7));
    // Checkpoints at 100, 200 and the final one at 250.
    CHECK(r2.checkpoints == 3);
    CHECK(r2.wall_time_s == Approx(250 + 3 * 7).epsilon(1e-12));
  }
  SECTION("the launch pays restart + warm-up once; the write time follows from size and tier") {
    TrainingRunConfig c3 = quiet_config(8, 1000, 500, 0);
    c3.checkpoint.write_time_s.reset();
    c3.checkpoint.size_bytes = 8e12;  // sharded over 8 nodes: 1e12 each
    c3.checkpoint.storage = StorageTier{"t", 50e9, 50e9, 200e9, 200e9, 0.0, 1.0, false, "test"};
    c3.restore.launch_overhead_at_start = true;
    c3.restore.restart = RestartOverhead{30.0, 0.5, 0.0};
    c3.restore.warmup_s = 20.0;
    // Write: 1 s latency + 8e12 B / min(8 x 50 GB/s, 200 GB/s) = 41 s. Launch: 30 + 0.5 x 8
    // + 20 = 54 s. Checkpoints at 500 and 1000 (final).
    const TrainingRunResult r3 = run(c3);
    CHECK(r3.checkpoint_write_s == Approx(41).epsilon(1e-12));
    CHECK(in_state(r3, JobState::starting) == Approx(54).epsilon(1e-12));
    CHECK(r3.wall_time_s == Approx(54 + 1000 + 2 * 41).epsilon(1e-12));
  }
}

TEST_CASE("run_until_done leaves the clock at the job's end, or at the limit", "[fleet][training_run]") {
  TrainingRunConfig c = quiet_config(4, 1000, 100, 7);
  c.failures.node_mtbf_s = 1e7;  // the pools keep scheduling failures after the job is done
  cs::engine::Simulator sim(3);
  TrainingRun job(sim, c);
  job.start();
  run_until_done(sim, job, 1e9);
  REQUIRE(job.done());
  CHECK(sim.now() == Approx(job.result().wall_time_s).epsilon(1e-12));
  cs::engine::Simulator cut_sim(3);
  TrainingRun cut(cut_sim, c);
  cut.start();
  run_until_done(cut_sim, cut, 500.0);
  CHECK_FALSE(cut.done());
  CHECK(cut_sim.now() == 500.0);
  CHECK(cut.result().wall_time_s == 500.0);
}

TEST_CASE("Async checkpoints stop the job only for the snapshot", "[fleet][training_run]") {
  TrainingRunConfig c = quiet_config(4, 1000, 100, 5);
  c.checkpoint.mode = CheckpointMode::async;
  c.checkpoint.size_bytes = 4e9;
  c.checkpoint.snapshot_Bps_per_node = 1e9;  // 1e9 B per node at 1 GB/s: a 1 s snapshot
  const TrainingRunResult r = run(c);
  // Nine regular checkpoints stop the job 1 s each; their 5 s writes finish within the next
  // 100 s of work. The final one must be durable: snapshot + write = 6 s.
  CHECK(r.checkpoints == 10);
  CHECK(r.checkpoint_blocking_s == Approx(1).epsilon(1e-12));
  CHECK(r.wall_time_s == Approx(1000 + 9 * 1 + 6).epsilon(1e-12));

  SECTION("a write longer than the interval makes the next checkpoint wait for it") {
    TrainingRunConfig slow = c;
    slow.checkpoint.write_time_s = 150.0;
    // Checkpoint 1 at t=100: snapshot to 101, write to 251. Checkpoint 2 due at t=201 (work
    // 200) waits until 251, snapshots to 252, writes to 402; each later one likewise waits
    // 50 s + 1 s: t = 100 + 1 + 9 x 100 + 8 x 51 = 1409 when the work reaches 1000, then the
    // final checkpoint (151 s). The given interval is kept (only auto is clamped to the write).
    const TrainingRunResult s = run(slow);
    CHECK(s.wall_time_s == Approx(1409 + 151).epsilon(1e-12));
    CHECK(s.checkpoints == 10);
  }
}

TEST_CASE("A failure during a checkpoint write loses that checkpoint", "[fleet][training_run]") {
  // 4 nodes, checkpoints every 10 s of work written in 5 s. Timeline: run 0-10, write 10-15
  // (work 10 durable), run 15-25, write 25-30; a node fails at t = 27, in the second write.
  TrainingRunConfig c = quiet_config(4, 100, 10, 5);
  c.failures.trace = {{27.0, 1}};
  const TrainingRunResult r = run(c);
  CHECK(r.failures == 1);
  CHECK(r.node_failures == 1);
  CHECK(r.checkpoint_writes_lost == 1);
  // Work since the last durable checkpoint (10) is lost: 20 - 10.
  CHECK(r.lost_work_s == Approx(10).epsilon(1e-12));
  // The replacement is instant and the restore free: from t = 27 the job redoes work 10..100,
  // with checkpoints at 20, 30, ..., 90 (8) and the final one: 27 + 90 + 9 x 5 = 162.
  CHECK(r.wall_time_s == Approx(162).epsilon(1e-12));
  CHECK(r.checkpoints == 1 + 8 + 1);
  // Running time is the useful work plus the lost work.
  CHECK(in_state(r, JobState::running) == Approx(100 + r.lost_work_s).epsilon(1e-12));
  CHECK(in_state(r, JobState::checkpointing) == Approx(5 + 2 + 45).epsilon(1e-12));
}

TEST_CASE("Async writes are lost when a failure beats them", "[fleet][training_run]") {
  TrainingRunConfig c = quiet_config(4, 100, 10, 5);
  c.checkpoint.mode = CheckpointMode::async;
  c.checkpoint.size_bytes = 4e9;
  c.checkpoint.snapshot_Bps_per_node = 1e9;  // 1 s snapshots
  // Run 0-10, snapshot 10-11, write 11-16 (work 10 durable at 16); run 11-21, snapshot 21-22,
  // write 22-27. A node fails at t = 24: the second write is lost, work 20 is not durable.
  c.failures.trace = {{24.0, 1}};
  const TrainingRunResult r = run(c);
  CHECK(r.async_writes_lost == 1);
  CHECK(r.checkpoint_writes_lost == 0);
  // At t = 24 the job had worked 20 + (24 - 22) = 22; durable was 10.
  CHECK(r.lost_work_s == Approx(12).epsilon(1e-12));
  // The restore reads the 4 GB checkpoint from the parallel file system: 2 s latency +
  // 4e9 B / (4 x 12.5 GB/s) = 2.08 s. Then from work 10: 90 s of work, 8 snapshots (at
  // 20..90), the final checkpoint 6 s.
  CHECK(r.restore_time_s == Approx(2.08).epsilon(1e-12));
  CHECK(r.wall_time_s == Approx(24 + 2.08 + 90 + 8 + 6).epsilon(1e-12));
}

TEST_CASE("A spot notice long enough for a checkpoint is used for an emergency checkpoint",
          "[fleet][training_run]") {
  TrainingRunConfig c = quiet_config(4, 300, 1000, 5);
  c.spot_share = 1.0;
  c.checkpoint.emergency_on_notice = true;
  c.reclaims.warning_s = 120.0;
  c.reclaims.trace = {{13.0, 1}};
  SECTION("the checkpoint fits: the job trains through the notice and loses nothing") {
    const TrainingRunResult r = run(c);
    // Notice at 13, reclaim at 133: train to 128, checkpoint 128-133 (work 128 durable as the
    // node goes), then (instant replacement, free restore) 172 s of work and the final one.
    CHECK(r.emergency_checkpoints == 1);
    CHECK(r.interruptions == 1);
    CHECK(r.lost_work_s == 0.0);
    CHECK(r.checkpoints == 2);
    CHECK(r.wall_time_s == Approx(133 + 172 + 5).epsilon(1e-12));
    CHECK(in_state(r, JobState::running) == Approx(300).epsilon(1e-12));
    CHECK(in_state(r, JobState::waiting) == 0.0);
  }
  SECTION("a notice that outlasts the job: it finishes, no emergency checkpoint") {
    c.reclaims.warning_s = 1e6;
    const TrainingRunResult r = run(c);
    CHECK(r.emergency_checkpoints == 0);
    CHECK(r.interruptions == 0);
    CHECK(r.wall_time_s == Approx(300 + 5).epsilon(1e-12));
  }
  SECTION("the notice is too short: the work since the start is lost") {
    c.reclaims.warning_s = 3.0;
    const TrainingRunResult r = run(c);
    // Reclaimed at 16 with nothing durable: 16 s lost; restart at 16, 300 s of work + final.
    CHECK(r.emergency_checkpoints == 0);
    CHECK(r.lost_work_s == Approx(16).epsilon(1e-12));
    CHECK(r.wall_time_s == Approx(16 + 300 + 5).epsilon(1e-12));
  }
}

TEST_CASE("Restore = detection, retrieval, read at the tier's bandwidth, restart, warm-up",
          "[fleet][training_run]") {
  TrainingRunConfig c = quiet_config(16, 100, 20, 5);
  c.checkpoint.size_bytes = 1.6e12;
  c.checkpoint.storage = *storage_tier("archive");  // 12 h retrieval, 10 GB/s read per node
  c.restore.restart = RestartOverhead{60.0, 0.02, 0.0};
  c.restore.warmup_s = 60.0;
  c.restore.detection_s = 30.0;
  c.failures.trace = {{55.0, 1}};
  // Read: 12 h + 5 s latency + 1.6e12 / (16 x 10 GB/s) = 43,215 s; restart 60 + 0.02 x 16.
  const double restore = 12 * 3600.0 + 5 + 10 + 60.32 + 60;
  // Run 0-20, write 20-25 (work 20), run 25-45, write 45-50 (work 40), run 50-55: the failure
  // at 55 loses 5 s of work.
  SECTION("the replacement takes longer than detection") {
    c.failures.replacement = Distribution::constant(100.0);
    const TrainingRunResult r = run(c);
    CHECK(r.lost_work_s == Approx(5).epsilon(1e-12));
    CHECK(in_state(r, JobState::waiting) == Approx(100).epsilon(1e-12));
    CHECK(r.restore_time_s == Approx(restore).epsilon(1e-12));
    // From work 40: 60 s of work, checkpoints at 60 and 80 and the final one.
    CHECK(r.wall_time_s == Approx(155 + restore + 60 + 3 * 5).epsilon(1e-12));
  }
  SECTION("an instant replacement still waits for the failure to be detected") {
    const TrainingRunResult r = run(c);
    CHECK(r.restore_time_s == Approx(30 + restore).epsilon(1e-12));
  }
  SECTION("a given restore time replaces the derivation (detection still applies)") {
    c.restore.time_s = 200.0;
    const TrainingRunResult r = run(c);
    CHECK(r.restore_time_s == Approx(30 + 200).epsilon(1e-12));
  }
}

TEST_CASE("Elastic: continue with fewer replicas instead of waiting", "[fleet][training_run]") {
  TrainingRunConfig c = quiet_config(4, 100, kInf, 5);
  c.spot_share = 1.0;
  c.checkpoint.final_checkpoint = false;
  c.reclaims.trace = {{10.5, 1}};
  c.reclaims.capacity_return = Distribution::constant(20.0);
  SECTION("elastic") {
    c.elastic = ElasticConfig{true, 1, 1, 1.0, 2.0};
    const TrainingRunResult r = run(c);
    // At 10.5 the step in flight (0.5 s) is lost; reconfigure 10.5-12.5; run at 3/4 until the
    // capacity is back at 30.5 (work 10 + 0.75 x 18 = 23.5); reconfigure 30.5-32.5; 76.5 s of
    // work at full speed: done at 109.
    CHECK(r.interruptions == 1);
    CHECK(r.reconfigurations == 2);
    CHECK(r.lost_work_s == Approx(0.5).epsilon(1e-12));
    CHECK(r.wall_time_s == Approx(109).epsilon(1e-12));
    CHECK(in_state(r, JobState::reconfiguring) == Approx(4).epsilon(1e-12));
  }
  SECTION("waiting for capacity") {
    const TrainingRunResult r = run(c);
    // Everything is lost at 10.5 (no checkpoint); wait until 30.5; redo 100 s.
    CHECK(r.lost_work_s == Approx(10.5).epsilon(1e-12));
    CHECK(r.wall_time_s == Approx(130.5).epsilon(1e-12));
    CHECK(in_state(r, JobState::waiting) == Approx(20).epsilon(1e-12));
  }
}

TEST_CASE("Spot capacity that does not come back falls back to on-demand",
          "[fleet][training_run]") {
  TrainingRunConfig c = quiet_config(2, 100, kInf, 0);
  c.spot_share = 1.0;
  c.checkpoint.final_checkpoint = false;
  c.reclaims.trace = {{10.0, 1}};
  c.reclaims.capacity_return = Distribution::constant(1e9);
  c.fallback_after_s = 60.0;
  c.provisioning[Market::on_demand] = Distribution::constant(40.0);
  const TrainingRunResult r = run(c);
  // Reclaimed at 10 (10 s lost); the spot request falls back at 70; the on-demand node is ready
  // at 110; 100 s of work: done at 210.
  CHECK(r.fallbacks == 1);
  CHECK(r.wall_time_s == Approx(210).epsilon(1e-12));
  // Spot: one node 0-210, one 0-10. On demand: one node 110-210.
  CHECK(r.node_hours_by_market[Market::spot] == Approx(220 / 3600.0).epsilon(1e-12));
  CHECK(r.node_hours_by_market[Market::on_demand] == Approx(100 / 3600.0).epsilon(1e-12));
  CHECK(r.cost_usd_by_market[Market::spot] == Approx(220 / 3600.0 * 3).epsilon(1e-12));
  CHECK(r.cost_usd_by_market[Market::on_demand] == Approx(100 / 3600.0 * 10).epsilon(1e-12));
  CHECK(r.cost_usd == Approx((220 * 3 + 100 * 10) / 3600.0).epsilon(1e-12));
}

TEST_CASE("Software faults restart the job on the same nodes", "[fleet][training_run]") {
  TrainingRunConfig c = quiet_config(8, 2000, 100, 1);
  c.failures.node_mtbf_s = 8 * 500.0;  // one fault per 500 s of the job
  c.failures.causes = {{"software_bug", 1.0, false}};
  c.failures.replacement = Distribution::constant(1e9);  // would never come back
  const TrainingRunResult r = run(c, 7);
  REQUIRE(r.completed);
  CHECK(r.failures > 0);
  CHECK(r.node_failures == r.failures);
  CHECK(in_state(r, JobState::waiting) == 0.0);  // no node ever left
  CHECK(r.node_hours_by_market[Market::on_demand] == Approx(8 * r.wall_time_s / 3600).epsilon(1e-12));
}
