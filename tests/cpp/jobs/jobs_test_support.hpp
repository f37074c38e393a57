#pragma once
// Shared set-up for the job cluster tests: a quiet cluster (no failures, no reclaims, free
// restarts) that a test fills with the queues, classes or trace it exercises.
#include <fstream>
#include <string>
#include <vector>

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
