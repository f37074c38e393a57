// Chargeback for a shared cluster: each queue's GPU-hours, share of the cluster against its
// quota and part of the cost add up to the cluster's; waits per class and by job size are the
// completed jobs' waits, regrouped.
#include <catch2/catch.hpp>

#include <cmath>

#include "tests/cpp/jobs/jobs_test_support.hpp"

using namespace cs::jobs;
using namespace cs::jobs::test;
using cs::sources::Distribution;

TEST_CASE("Queues' GPU-hours, cluster shares and costs add up to the cluster's; waits regroup by class and size",
          "[jobs][chargeback]") {
  JobsConfig c = quiet_cluster(8, 8);
  c.scheduler.policy = Policy::fair_share;
  c.scheduler.queues = {queue("small"), queue("big")};
  c.scheduler.queues[0].quota = 0.4;  // "big" has none: an equal part of what is left
  // One-GPU jobs in one queue, 16-GPU jobs in the other: each size bucket holds one class.
  c.classes = {job_class("single", 0, 3.0, Distribution::constant(1.0), Distribution::exponential(3600.0)),
               job_class("wide", 1, 1.0, Distribution::constant(16.0), Distribution::exponential(3600.0))};
  c.arrivals.rate_per_s = 0.8 * 64 / ((3.0 * 1 + 1.0 * 16) / 4.0 * 3600.0);  // 80% of the GPUs offered
  c.until_s = 7 * 86400.0;
  const JobsResult r = run_jobs(c, 5);
  REQUIRE(r.completed > 500);

  // The cluster's cost by hand: 8 on-demand nodes at $10 an hour for the week.
  CHECK(r.cost_usd == Approx(8 * 10.0 * r.horizon_s / 3600.0).epsilon(1e-9));
  double cost = 0, busy = 0, share = 0;
  for (const QueueResult& q : r.queues) {
    cost += q.cost_usd;
    busy += q.busy_gpu_hours;
    share += q.cluster_share;
    CHECK(q.cost_usd == Approx(r.cost_usd * q.busy_gpu_hours / r.busy_gpu_hours).epsilon(1e-9));
  }
  CHECK(cost == Approx(r.cost_usd).epsilon(1e-9));
  CHECK(busy == Approx(r.busy_gpu_hours).epsilon(1e-9));
  // No failures: every GPU is in service, so the shares of the cluster add up to the utilization.
  CHECK(share == Approx(r.utilization).epsilon(1e-9));
  CHECK(r.queues[0].quota == 0.4);
  CHECK(std::isnan(r.queues[1].quota));

  // Waits: per class and per size bucket, the completed jobs of each, the same waits.
  REQUIRE(r.classes.size() == 2);
  REQUIRE(r.sizes.size() == std::size(kSizeBuckets));
  CHECK(r.classes[0].completed + r.classes[1].completed == r.completed);
  const WaitGroup& one = r.sizes[size_bucket(1)];
  const WaitGroup& sixteen = r.sizes[size_bucket(16)];
  CHECK(one.name == std::string("1"));
  CHECK(sixteen.name == std::string("9-64"));
  CHECK(one.completed == r.classes[0].completed);
  CHECK(sixteen.completed == r.classes[1].completed);
  CHECK(one.wait_mean_s == r.classes[0].wait_mean_s);
  CHECK(sixteen.wait_p95_s == r.classes[1].wait_p95_s);
  CHECK(r.sizes[size_bucket(8)].completed == 0);
  // The per-queue waits are the per-class ones here (one class per queue), and the overall mean
  // is their completed-weighted mean.
  CHECK(r.queues[1].wait_mean_s == Approx(r.classes[1].wait_mean_s));
  CHECK(r.wait_mean_s == Approx((r.classes[0].wait_mean_s * double(r.classes[0].completed) +
                                 r.classes[1].wait_mean_s * double(r.classes[1].completed)) /
                                double(r.completed)));
  CHECK(r.classes[1].wait_mean_s > r.classes[0].wait_mean_s);  // a 16-GPU gang waits longer
}

TEST_CASE("Size buckets: one GPU, within an 8-GPU node, then eightfold steps", "[jobs][chargeback]") {
  CHECK(kSizeBuckets[size_bucket(1)].name == std::string("1"));
  CHECK(kSizeBuckets[size_bucket(2)].name == std::string("2-8"));
  CHECK(kSizeBuckets[size_bucket(8)].name == std::string("2-8"));
  CHECK(kSizeBuckets[size_bucket(9)].name == std::string("9-64"));
  CHECK(kSizeBuckets[size_bucket(512)].name == std::string("65-512"));
  CHECK(kSizeBuckets[size_bucket(513)].name == std::string("513+"));
  CHECK(kSizeBuckets[size_bucket(100000)].name == std::string("513+"));
}
