#pragma once
// Shared set-up for the job cluster tests: a quiet cluster (no failures, no reclaims, free
// restarts) that a test fills with the queues, classes or trace it exercises; a check that two
// runs are the same.
#include <cmath>
#include <fstream>
#include <string>
#include <vector>

#include <catch2/catch.hpp>

#include "sim/jobs/job_cluster.hpp"
#include "tests/cpp/fleet/fleet_test_support.hpp"

namespace cs::jobs::test {

using fleet::test::kInf;

inline JobsConfig quiet_cluster(int nodes, int gpus_per_node) {
  JobsConfig c;
  c.fleet.nodes = nodes;
  c.gpus_per_node = gpus_per_node;
  c.fleet.usd_per_node_hour[fleet::Market::on_demand] = 10.0;
  fleet::test::quiet(c.fleet.failures, c.fleet.reclaims);
  c.restore.time_s = 0.0;
  c.restore.detection_s = 0.0;
  c.record_timeseries = false;
  return c;
}

inline QueueConfig queue(std::string name, int priority = 0) {
  QueueConfig q;
  q.name = std::move(name);
  q.priority = priority;
  return q;
}

inline JobClass job_class(std::string name, int queue, double share, cs::sources::Distribution gpus,
                          cs::sources::Distribution duration) {
  JobClass k;
  k.name = std::move(name);
  k.queue = queue;
  k.share = share;
  k.gpus = std::move(gpus);
  k.duration = std::move(duration);
  return k;
}

// Node failures (a mean of 5 days between a node's) and a 30 s checkpoint every 15 min of work:
// a run with interruptions, lost work and restores.
inline void add_failures_and_checkpoints(JobsConfig& c) {
  c.fleet.failures.node_mtbf_s = 5 * 86400.0;
  c.checkpoint = fleet::CheckpointConfig{};
  c.checkpoint->interval_s = 900.0;
  c.checkpoint->write_time_s = 30.0;
}

// Checks that two runs are the same run: its totals, and each job's submission and end.
inline void check_same_run(const JobsResult& x, const JobsResult& y) {
  CHECK(x.submitted == y.submitted);
  CHECK(x.completed == y.completed);
  CHECK(x.events == y.events);
  CHECK(x.wait_mean_s == y.wait_mean_s);
  CHECK(x.wait_p95_s == y.wait_p95_s);
  CHECK(x.utilization == y.utilization);
  CHECK(x.lost_gpu_hours == y.lost_gpu_hours);
  CHECK(x.cost_usd == y.cost_usd);
  REQUIRE(x.jobs.size() == y.jobs.size());
  for (std::size_t i = 0; i < x.jobs.size(); ++i) {
    CHECK(x.jobs[i].id == y.jobs[i].id);
    CHECK(x.jobs[i].submit_s == y.jobs[i].submit_s);
    CHECK((x.jobs[i].end_s == y.jobs[i].end_s || (std::isnan(x.jobs[i].end_s) && std::isnan(y.jobs[i].end_s))));
  }
}

// Writes a job trace (header and rows) under the build directory; returns its path.
inline std::string write_trace(const std::string& name, const std::vector<std::string>& rows) {
  const std::string path = std::string(CS_SOURCE_DIR) + "/build/test_jobs_" + name + ".csv";
  std::ofstream out(path);
  out << "submit_time,gpus,duration,queue\n";
  for (const std::string& r : rows) out << r << "\n";
  return path;
}

// Runs a cluster event by event, calling `after_event` after each.
template <class F>
JobsResult run_checked(const JobsConfig& c, uint64_t seed, F after_event) {
  engine::Simulator sim(seed);
  JobCluster cluster(sim, c);
  cluster.start();
  while (!cluster.done() && sim.queue().top_time() <= c.until_s && sim.step()) after_event(cluster);
  return cluster.result();
}

}  // namespace cs::jobs::test
