// The scheduler against queueing theory and the policies' own promises: FIFO on c GPUs is an
// M/M/c queue (Erlang C), EASY backfilling never delays the head job's reservation and raises
// utilization, a pass with a reservation examines at most bf_max_job_test jobs after the
// head, fair share divides a saturated cluster by the quotas, gang jobs never start partially,
// topology-aware placement spans fewer leaves, and a run is a function of its seed.
#include <catch2/catch.hpp>

#include <cmath>

#include "tests/cpp/jobs/jobs_test_support.hpp"

using namespace cs::jobs;
using namespace cs::jobs::test;
using cs::sources::Distribution;

namespace {

// Erlang C: the probability an arrival waits in M/M/c with offered load a = lambda / mu < c,
// and the mean wait W_q = C(c, a) / (c mu - lambda).
double erlang_c_wait(int c, double lambda, double mu) {
  const double a = lambda / mu;
  double term = 1.0, sum = 1.0;  // a^k / k!, summed for k < c
  for (int k = 1; k < c; ++k) {
    term *= a / k;
    sum += term;
  }
  const double last = term * a / c;  // a^c / c!
  const double waiting = last * c / (c - a);
  const double C = waiting / (sum + waiting);
  return C / (c * mu - lambda);
}

JobsConfig mm_c(int gpus, double lambda, double mean_s, int64_t jobs) {
  JobsConfig c = quiet_cluster(1, gpus);
  c.classes = {job_class("one_gpu", 0, 1.0, Distribution::constant(1.0), Distribution::exponential(mean_s))};
  c.arrivals.rate_per_s = lambda;
  c.max_jobs = jobs;
  return c;
}

}  // namespace

// [heavy]: 1.6 million jobs, the sample the 3% tolerance needs (the sanitized ctest leaves it
// out; "The same seed gives the same run" runs FIFO's arrivals, waits and completions).
TEST_CASE("FIFO on c GPUs with Poisson arrivals of 1-GPU exponential jobs is Erlang C",
          "[jobs][scheduling][erlang][heavy]") {
  // c = 8, rho = 0.8 (a = 6.4): C = 0.4576, W_q = 0.2860 s for a 1 s mean; c = 4, rho = 0.6:
  // W_q = 0.1794 s.
  struct Case {
    int gpus;
    double lambda;
  };
  for (const Case k : {Case{8, 6.4}, Case{4, 2.4}}) {
    const double expected = erlang_c_wait(k.gpus, k.lambda, 1.0);
    // Four independent replications of 200,000 jobs each.
    double mean = 0.0;
    for (uint64_t seed = 1; seed <= 4; ++seed) {
      const JobsResult r = run_jobs(mm_c(k.gpus, k.lambda, 1.0, 200000), seed);
      REQUIRE(r.completed == 200000);
      mean += r.wait_mean_s / 4;
      CHECK(r.utilization == Approx(k.lambda / k.gpus).epsilon(0.02));
    }
    INFO("c = " << k.gpus << ": simulated " << mean << " s, Erlang C " << expected << " s");
    CHECK(mean == Approx(expected).epsilon(0.03));
  }
}

TEST_CASE("EASY backfilling never delays the head's reservation and raises utilization",
          "[jobs][scheduling][backfill]") {
  // 8 nodes x 8 GPUs; a mix of wide jobs (32-64 GPUs, long) and narrow ones (1-4 GPUs, short)
  // offered at about 90% of the cluster.
  JobsConfig c = quiet_cluster(8, 8);
  c.classes = {job_class("wide", 0, 1.0, Distribution::empirical({32, 48, 64}, {1, 1, 1}), Distribution::exponential(4 * 3600.0)),
               job_class("narrow", 0, 9.0, Distribution::empirical({1, 2, 4}, {2, 1, 1}), Distribution::lognormal(1800.0, 2.0))};
  // GPU-seconds per job: 0.1 * 48 * 14400 + 0.9 * 2 * 1800 = 72,360; 90% of 64 GPUs.
  c.arrivals.rate_per_s = 0.9 * 64 / 72360.0;
  c.max_jobs = 4000;
  c.record_jobs = true;
  JobsConfig fifo = c;
  fifo.scheduler.policy = Policy::fifo;
  JobsConfig easy = c;
  easy.scheduler.policy = Policy::backfill;
  const JobsResult f = run_jobs(fifo, 7);
  const JobsResult b = run_jobs(easy, 7);
  REQUIRE(b.completed == 4000);
  int reserved = 0, backfilled = 0;
  for (const JobRecord& j : b.jobs) {
    if (std::isnan(j.reserved_start_s)) continue;
    ++reserved;
    CHECK(j.start_s <= j.reserved_start_s + 1e-6);
  }
  // Jobs that started before a job submitted earlier: the queue was jumped.
  double latest_start = 0.0;
  for (const JobRecord& j : b.jobs) {
    if (j.start_s < latest_start) ++backfilled;
    latest_start = std::max(latest_start, j.start_s);
  }
  INFO("reservations " << reserved << ", jobs that jumped the queue " << backfilled);
  CHECK(reserved > 100);
  CHECK(backfilled > 100);
  // The same stream (same seed): backfilling fills the holes FIFO leaves before wide jobs.
  INFO("utilization FIFO " << f.utilization << ", EASY " << b.utilization);
  CHECK(b.utilization > f.utilization + 0.03);
  CHECK(b.wait_mean_s < f.wait_mean_s);
  CHECK(b.horizon_s < f.horizon_s);
}

TEST_CASE("A pass with a reservation examines at most bf_max_job_test jobs after the head",
          "[jobs][scheduling][backfill]") {
  // One node of 8 GPUs, two queues in one group (backfill: submission order). A (6 GPUs)
  // runs from 0 to 100. At 1, in one pass: B (8 GPUs) is the head, its shadow time 100 and no
  // extra GPUs; then C1-C4 (4 GPUs: 2 are free), E (1 GPU but 500 s: past the shadow time),
  // all passed over; then D (1 GPU, 10 s) backfills, if it is within the limit. The jobs
  // alternate between the queues, so the pass walks both queues in id order.
  const std::string trace = write_trace("bf_max_job_test", {"0,6,100,a", "1,8,50,a", "1,4,10,b", "1,4,10,a",
                                                           "1,4,10,b", "1,1,500,a", "1,4,10,b", "1,1,10,b"});
  const auto run_to = [&](int bf_max_job_test, double until) {
    JobsConfig c = quiet_cluster(1, 8);
    c.scheduler.policy = Policy::backfill;
    c.scheduler.queues = {queue("a"), queue("b")};
    c.scheduler.bf_max_job_test = bf_max_job_test;
    c.trace_path = trace;
    c.record_jobs = true;
    cs::engine::Simulator sim(1);
    JobCluster cluster(sim, c);
    cluster.start();
    sim.run(until);
    // The pass at 0 examined A; the one at 1 examined B, the five passed over and D (counted
    // as the pass stops at it when it is past the limit).
    CHECK(cluster.scheduler().passes() == 2);
    CHECK(cluster.scheduler().jobs_examined() == 8);
    const JobsResult r = cluster.result();
    REQUIRE(r.jobs.size() == 8);
    return r.jobs[7];  // D
  };
  CHECK(run_to(6, 1.0).start_s == 1.0);    // the sixth job after the head: within the limit
  CHECK(std::isnan(run_to(5, 1.0).start_s));  // past it: D waits
}

TEST_CASE("Under saturation, fair share gives two queues 70/30 of the busy GPU-time",
          "[jobs][scheduling][fair_share]") {
  JobsConfig c = quiet_cluster(8, 8);
  c.scheduler.policy = Policy::fair_share;
  c.scheduler.queues = {queue("a"), queue("b")};
  c.scheduler.queues[0].quota = 0.7;
  c.scheduler.queues[1].quota = 0.3;
  c.scheduler.usage_half_life_s = 86400.0;
  // Each queue alone would ask for 1.5x the cluster: both always have jobs waiting.
  c.classes = {job_class("a", 0, 1.0, Distribution::empirical({1, 2, 4}, {1, 1, 1}), Distribution::exponential(1800.0)),
               job_class("b", 1, 1.0, Distribution::empirical({1, 2, 4}, {1, 1, 1}), Distribution::exponential(1800.0))};
  c.arrivals.rate_per_s = 3.0 * 64 / (7.0 / 3.0 * 1800.0);
  c.until_s = 60 * 86400.0;
  const JobsResult r = run_jobs(c, 3);
  INFO("shares " << r.queues[0].gpu_share << " / " << r.queues[1].gpu_share << ", utilization " << r.utilization);
  CHECK(r.utilization > 0.97);
  CHECK(r.queues[0].gpu_share == Approx(0.7).margin(0.02));
  CHECK(r.queues[1].gpu_share == Approx(0.3).margin(0.02));
  CHECK(r.pending_at_end > 1000);  // saturated to the end
}

TEST_CASE("Gang scheduling: a job starts with all its GPUs or not at all", "[jobs][scheduling][gang]") {
  JobsConfig c = quiet_cluster(6, 8);
  c.scheduler.policy = Policy::backfill;
  c.scheduler.placement = PlacementPolicy::topology;
  c.node_domain = {0, 0, 1, 1, 2, 2};
  c.classes = {job_class("mixed", 0, 1.0, Distribution::empirical({1, 3, 8, 12, 24, 40}, {3, 2, 2, 1, 1, 1}),
                         Distribution::lognormal(3600.0, 1.5))};
  c.arrivals.rate_per_s = 1.0 / 600.0;
  c.max_jobs = 1500;
  int64_t checks = 0;
  const JobsResult r = run_checked(c, 11, [&](const JobCluster& cluster) {
    cluster.cluster().check();
    int held = 0;
    cluster.book().for_each([&](const Job& j) {
      if (!j.holds_gpus()) return;
      int gpus = 0;
      for (const NodeShare& s : j.allocation) gpus += s.gpus;
      CHECK(gpus == j.gpus);
      held += gpus;
      ++checks;
    });
    CHECK(held == cluster.cluster().allocated_gpus());
  });
  CHECK(r.completed == 1500);
  CHECK(checks > 10000);
}

TEST_CASE("Topology-aware placement spans fewer leaves than any on a fragmented cluster",
          "[jobs][scheduling][placement]") {
  // 16 nodes x 8 GPUs in 4 leaves of 32 GPUs, 60% busy; small jobs keep the cluster
  // fragmented, and 8-24 GPU jobs (sensitive to their spread) land in whatever is free.
  JobsConfig c = quiet_cluster(16, 8);
  c.node_domain = {0, 0, 0, 0, 1, 1, 1, 1, 2, 2, 2, 2, 3, 3, 3, 3};
  c.scheduler.policy = Policy::backfill;
  c.classes = {job_class("small", 0, 6.0, Distribution::empirical({1, 2, 3}, {1, 1, 1}), Distribution::exponential(3600.0)),
               job_class("training", 0, 1.0, Distribution::empirical({8, 16, 24}, {1, 1, 1}), Distribution::exponential(3 * 3600.0))};
  c.classes[1].spread_penalty = 0.2;
  c.arrivals.rate_per_s = 0.6 * 128 / (6.0 / 7.0 * 2 * 3600.0 + 1.0 / 7.0 * 16 * 3 * 3600.0);
  c.max_jobs = 3000;
  c.record_jobs = true;
  JobsConfig any = c, topo = c;
  any.scheduler.placement = PlacementPolicy::any;
  topo.scheduler.placement = PlacementPolicy::topology;
  JobsConfig waiting = topo;
  waiting.scheduler.max_switch_wait_s = 1800.0;
  const JobsResult a = run_jobs(any, 5);
  const JobsResult t = run_jobs(topo, 5);
  const JobsResult w = run_jobs(waiting, 5);
  // Leaves per job of the jobs that could fit one leaf (up to 32 GPUs), at their last start.
  const auto leaves = [](const JobsResult& r) {
    double sum = 0.0, n = 0.0;
    for (const JobRecord& j : r.jobs)
      if (j.gpus >= 8 && j.nodes > 0) {
        sum += j.spread;
        n += 1.0;
      }
    return sum / n;
  };
  INFO("leaves per 8-24 GPU job: any " << leaves(a) << ", topology " << leaves(t) << ", waiting " << leaves(w)
                                       << "; slowdown " << a.mean_slowdown << " vs " << t.mean_slowdown << " vs "
                                       << w.mean_slowdown << "; wait " << a.wait_mean_s << " " << t.wait_mean_s << " "
                                       << w.wait_mean_s);
  CHECK(leaves(t) < 0.6 * leaves(a));
  CHECK(leaves(w) < leaves(t));
  CHECK(t.mean_spread < a.mean_spread);
  CHECK(t.mean_slowdown < a.mean_slowdown);
  CHECK(t.slowdown_gpu_hours < a.slowdown_gpu_hours);
}

TEST_CASE("The same seed gives the same run; another seed another", "[jobs][scheduling][determinism]") {
  JobsConfig c = quiet_cluster(4, 8);
  c.scheduler.policy = Policy::fair_share;
  c.scheduler.preemption = true;
  c.scheduler.queues = {queue("batch"), queue("urgent", 10)};
  c.classes = {job_class("batch", 0, 4.0, Distribution::empirical({1, 4, 8}, {1, 1, 1}), Distribution::lognormal(3600.0, 2.0)),
               job_class("urgent", 1, 1.0, Distribution::constant(8.0), Distribution::exponential(600.0))};
  add_failures_and_checkpoints(c);
  c.arrivals.rate_per_s = 1.0 / 300.0;
  c.until_s = 20 * 86400.0;
  c.record_jobs = true;
  const JobsResult x = run_jobs(c, 42), y = run_jobs(c, 42), z = run_jobs(c, 43);
  check_same_run(x, y);
  CHECK(x.preemptions > 0);
  CHECK(x.interruptions > 0);
  CHECK(z.wait_mean_s != x.wait_mean_s);
}
