// The job cluster's parts, each against numbers worked by hand: a run segment's checkpoints
// and losses, the cluster's free-GPU bookkeeping, the placement policies, the fair-share
// factor with usage decay, the step-time seam, the pending queue a pass walks, the release
// index a reservation walks.
#include <catch2/catch.hpp>

#include <algorithm>
#include <cmath>
#include <limits>
#include <random>
#include <span>
#include <stdexcept>
#include <utility>
#include <vector>

#include "sim/jobs/cluster_state.hpp"
#include "sim/jobs/fair_share.hpp"
#include "sim/jobs/job_progress.hpp"
#include "sim/jobs/pending_queue.hpp"
#include "sim/jobs/placement.hpp"
#include "sim/jobs/queue_order.hpp"
#include "sim/jobs/release_index.hpp"
#include "sim/jobs/sort_descending.hpp"
#include "sim/jobs/step_time.hpp"

using namespace cs::jobs;

TEST_CASE("A run segment restores, works and checkpoints in closed form", "[jobs][progress]") {
  RunSegment r;
  r.start_s = 100.0;
  r.overhead_s = 50.0;  // restoring until 150
  r.rate = 0.5;         // a scattered placement: half speed
  r.work0 = 200.0;
  r.total_work = 1000.0;
  r.plan.interval_work_s = 300.0;  // checkpoints at work 500 and 800 (not at 1000: the end)
  r.plan.blocking_s = 20.0;
  CHECK(r.checkpoints_planned() == 2);
  // 800 s of work at half speed, two 20 s stops, 50 s restoring.
  CHECK(r.end_s() == Approx(100.0 + 50.0 + 1600.0 + 40.0));
  CHECK(r.work_at(120.0) == 200.0);                     // restoring
  CHECK(r.work_at(150.0 + 100.0) == Approx(250.0));     // 100 s at half speed
  // The first cycle is 600 s of work time + 20 s stop: during the stop the interval is done
  // but not safe; after it, committed.
  CHECK(r.work_at(150.0 + 610.0) == Approx(500.0));
  CHECK(r.committed_at(150.0 + 610.0) == Approx(200.0));
  CHECK(r.committed_at(150.0 + 620.0) == Approx(500.0));
  CHECK(r.checkpoints_at(150.0 + 620.0) == 1);
  CHECK(r.work_at(150.0 + 620.0 + 60.0) == Approx(530.0));
  CHECK(r.committed_at(r.end_s()) == Approx(800.0));
  CHECK(r.work_at(r.end_s()) == Approx(1000.0));
  // An async write is durable only lag_s after the stop.
  r.plan.lag_s = 100.0;
  CHECK(r.committed_at(150.0 + 620.0 + 99.0) == Approx(200.0));
  CHECK(r.committed_at(150.0 + 620.0 + 100.0) == Approx(500.0));
  // Without checkpoints nothing is ever safe beyond the start.
  RunSegment n;
  n.total_work = 10.0;
  CHECK(n.end_s() == 10.0);
  CHECK(n.work_at(4.0) == 4.0);
  CHECK(n.committed_at(9.0) == 0.0);
}

TEST_CASE("The cluster keeps free GPUs per node, domain and bucket", "[jobs][cluster]") {
  ClusterState c(4, 8, {0, 0, 1, 1});
  CHECK(c.free_gpus() == 32);
  CHECK(c.domains() == 2);
  c.allocate({{0, 3}, {2, 8}});
  CHECK(c.free_gpus() == 21);
  CHECK(c.free_in_domain(0) == 13);
  CHECK(c.free_in_domain(1) == 8);
  CHECK(c.nodes_with_free(-1, 5).size() == 1);
  CHECK(c.nodes_with_free(1, 8).front() == 3);
  // A node going out takes its free GPUs; its allocated ones stay until released.
  c.set_available(0, false);
  CHECK(c.free_gpus() == 16);
  CHECK(c.allocated(0) == 3);
  // In service: the three available nodes, and the 3 GPUs a job still holds on the one going.
  CHECK(c.in_service_gpus() == 24 + 3);
  c.check();
  c.release({{0, 3}});
  CHECK(c.free_gpus() == 16);
  CHECK(c.in_service_gpus() == 24);
  c.set_available(0, true);
  CHECK(c.in_service_gpus() == 32);
  CHECK(c.free_gpus() == 24);
  c.check();
  CHECK_THROWS_AS(c.allocate({{3, 9}}), std::logic_error);
  CHECK(c.spread({{0, 1}, {1, 1}, {3, 1}}) == 2);
  CHECK(c.min_spread(16) == 1);
  CHECK(c.min_spread(17) == 2);
}

TEST_CASE("Without cluster-wide buckets the domains' are the same and pack placement refuses", "[jobs][cluster]") {
  // The same allocations, releases and outages on a cluster with and without the buckets over
  // the whole cluster: the domains' buckets hold the same nodes in the same order.
  ClusterState with(8, 4, {0, 0, 0, 0, 1, 1, 1, 1});
  ClusterState without(8, 4, {0, 0, 0, 0, 1, 1, 1, 1}, false);
  CHECK(with.has_cluster_buckets());
  CHECK_FALSE(without.has_cluster_buckets());
  const auto same = [&] {
    for (int d = 0; d < 2; ++d)
      for (int k = 0; k <= 4; ++k) {
        const std::span<const int> a = with.nodes_with_free(d, k), b = without.nodes_with_free(d, k);
        REQUIRE(std::vector<int>(a.begin(), a.end()) == std::vector<int>(b.begin(), b.end()));
      }
    CHECK(without.nodes_with_free(-1, 4).empty());
    with.check();
    without.check();
  };
  for (ClusterState* c : {&with, &without}) {
    c->allocate({{0, 3}, {5, 4}, {6, 1}});
    c->set_available(1, false);
    c->release({{5, 4}});
    c->allocate({{2, 2}});
    c->set_available(1, true);
  }
  same();
  const Allocation a = place(without, 6, PlacementPolicy::topology), b = place(with, 6, PlacementPolicy::topology);
  REQUIRE(a.size() == b.size());
  for (std::size_t i = 0; i < a.size(); ++i) CHECK((a[i].node == b[i].node && a[i].gpus == b[i].gpus));
  CHECK_THROWS_AS(place(without, 2, PlacementPolicy::pack), std::logic_error);
  CHECK(place(with, 2, PlacementPolicy::pack).size() == 1);
}

TEST_CASE("The best-fit domain is the fullest that holds a job, indexed or scanned", "[jobs][cluster]") {
  // The definition: the fewest free GPUs among the domains with at least `gpus`, the lowest
  // index on a tie. Through the free-count index: 12 domains of 3 x 8 GPUs, 64 (the last bit of
  // a word), 3 of 20 x 8 (free counts over three words), 2 of 341 x 3 = 1,023 GPUs (its
  // largest); through the scan: 70 domains (over 64), 2 of 128 x 8 = 1,024 GPUs. Random
  // allocations and releases, and nodes going out and back.
  struct Shape {
    int domains, nodes_per_domain, gpus_per_node;
  };
  for (const Shape shape : {Shape{12, 3, 8}, Shape{64, 3, 8}, Shape{70, 3, 8}, Shape{3, 20, 8}, Shape{2, 341, 3},
                            Shape{2, 128, 8}}) {
    const int domains = shape.domains, per_node = shape.gpus_per_node;
    CAPTURE(domains, shape.nodes_per_domain, per_node);
    std::vector<int> node_domain;
    for (int d = 0; d < domains; ++d)
      for (int k = 0; k < shape.nodes_per_domain; ++k) node_domain.push_back(d);
    const int nodes = static_cast<int>(node_domain.size());
    ClusterState c(nodes, per_node, node_domain);
    std::mt19937_64 rng(7);
    std::vector<Allocation> held;
    // Jobs up to a domain and a bit (none fits past it), in steps that fill a large domain.
    const int largest = shape.nodes_per_domain * per_node;
    const int steps = largest > 100 ? 600 : 3000;
    for (int step = 0; step < steps; ++step) {
      const int gpus = 1 + static_cast<int>(rng() % static_cast<uint64_t>(largest + 6));
      int expected = -1;
      for (int d = 0; d < domains; ++d) {
        const int f = c.free_in_domain(d);
        if (f >= gpus && (expected < 0 || f < c.free_in_domain(expected))) expected = d;
      }
      REQUIRE(c.best_fit_domain(gpus) == expected);
      const unsigned action = rng() % 8;
      if (action < 4 && gpus <= c.free_gpus()) {
        held.push_back(place(c, largest > 100 ? gpus : std::min(gpus, 8), PlacementPolicy::pack));
        c.allocate(held.back());
      } else if (action < 7 && !held.empty()) {
        const std::size_t i = rng() % held.size();
        c.release(held[i]);
        held.erase(held.begin() + static_cast<std::ptrdiff_t>(i));
      } else {
        const int n = static_cast<int>(rng() % static_cast<uint64_t>(nodes));
        c.set_available(n, !c.available(n));
      }
    }
    c.check();
  }
  ClusterState empty_domain(2, 8, {0, 2});  // domain 1 has no nodes: it never fits
  CHECK(empty_domain.best_fit_domain(1) == 0);
  CHECK(empty_domain.best_fit_domain(9) == -1);
}

TEST_CASE("Placement: any takes the first free GPUs, pack the fewest nodes, topology one domain",
          "[jobs][placement]") {
  // Two leaves of 4 nodes x 4 GPUs. Fragment leaf 0: 1 GPU free on each of its nodes; leaf 1
  // has node 4 whole and 5, 6, 7 with 2 free each.
  ClusterState c(8, 4, {0, 0, 0, 0, 1, 1, 1, 1});
  c.allocate({{0, 3}, {1, 3}, {2, 3}, {3, 3}, {5, 2}, {6, 2}, {7, 2}});
  const auto gpus_of = [](const Allocation& a) {
    int n = 0;
    for (const NodeShare& s : a) n += s.gpus;
    return n;
  };
  const Allocation any = place(c, 6, PlacementPolicy::any);
  CHECK(gpus_of(any) == 6);
  CHECK(any.front().node == 0);
  CHECK(c.spread(any) == 2);          // leaf 0's four single GPUs, then leaf 1
  const Allocation topo = place(c, 6, PlacementPolicy::topology);
  CHECK(gpus_of(topo) == 6);
  CHECK(c.spread(topo) == 1);         // leaf 1 alone holds 10 free
  CHECK(topo.front().node == 4);      // packed: the whole node first
  CHECK(topo.size() == 2);
  const Allocation pack = place(c, 2, PlacementPolicy::pack);
  CHECK(pack.size() == 1);
  CHECK(c.free_on(pack.front().node) == 2);  // best fit: a node with exactly 2 free
  // The best-fitting domain: 3 GPUs fit leaf 0 (4 free) better than leaf 1 (10 free).
  CHECK(c.domain_of(place(c, 3, PlacementPolicy::topology).front().node) == 0);
  CHECK_THROWS_AS(place(c, 15, PlacementPolicy::any), std::logic_error);
}

TEST_CASE("Fair share: 2^(-U/S) of the decayed, normalized usage", "[jobs][fair_share]") {
  const double h = 3600.0;
  FairShare f({0.7, 0.3}, h);
  CHECK(f.factors(0.0) == std::vector<double>{1.0, 1.0});  // nothing used yet
  f.set_held(0, 10.0, 0.0);
  // 10 GPUs for one half-life: integral of 10 * 2^(-(t-s)/h) = 10 h / ln 2 * (1 - 1/2).
  CHECK(f.usage(0, h) == Approx(10.0 * h / std::log(2.0) * 0.5));
  f.set_held(0, 0.0, h);
  CHECK(f.usage(0, 2 * h) == Approx(f.usage(0, h) / 2));  // decays by half per half-life
  // Only queue 0 used anything: U = 1 for it, 0 for the other.
  const std::vector<double> F = f.factors(2 * h);
  CHECK(F[0] == Approx(std::exp2(-1.0 / 0.7)));
  CHECK(F[1] == 1.0);
  // At usage in proportion to the shares, both factors are 1/2.
  FairShare g({0.7, 0.3}, 0.0);
  g.set_held(0, 7.0, 0.0);
  g.set_held(1, 3.0, 0.0);
  for (const double x : g.factors(100.0)) CHECK(x == Approx(0.5));
  CHECK(g.usage(0, 100.0) == Approx(700.0));  // half-life 0: no decay
}

TEST_CASE("Fair share's order by the factors' exponents is the order by the factors", "[jobs][fair_share]") {
  // The reference: queues by (priority, factor) highest first, index order on a tie, cut where
  // the key changes, from FairShare::factors.
  const auto reference = [](const std::vector<QueueConfig>& queues, const FairShare& f, double now) {
    const std::vector<double> F = f.factors(now);
    std::vector<int> order(queues.size());
    for (std::size_t q = 0; q < order.size(); ++q) order[q] = static_cast<int>(q);
    const auto key = [&](int q) { return std::pair{queues[static_cast<std::size_t>(q)].priority, F[static_cast<std::size_t>(q)]}; };
    std::stable_sort(order.begin(), order.end(), [&](int a, int b) { return key(a) > key(b); });
    QueueOrder::Groups groups;
    for (std::size_t i = 0; i < order.size(); ++i) {
      if (i == 0 || key(order[i]) != key(order[i - 1])) groups.emplace_back();
      groups.back().push_back(order[i]);
    }
    return groups;
  };
  // Random holdings of four queues (two of equal quota, one with none, two priorities), and
  // holdings that make two exponents equal, one ulp apart or 1e-13 apart (the factors decide).
  std::vector<QueueConfig> queues(4);
  const std::vector<double> quotas{0.4, 0.3, 0.3, 0.0};
  for (std::size_t q = 0; q < queues.size(); ++q) queues[q].quota = quotas[q];
  queues[3].priority = 1;
  std::mt19937_64 rng(11);
  for (const double half_life : {0.0, 3600.0}) {
    FairShare f(quotas, half_life);
    FairShareOrder order(queues, f);
    double now = 0.0;
    for (int step = 0; step < 2000; ++step) {
      const int q = static_cast<int>(rng() % 4);
      const double gpus = step % 7 == 0 ? 0.0 : static_cast<double>(rng() % 64);
      f.set_held(q, gpus, now);
      if (step % 5 == 0) f.set_held(q == 1 ? 2 : 1, f.usage(q, now) > 0.0 ? gpus : 0.0, now);
      now += static_cast<double>(rng() % 600);
      REQUIRE(order.groups(now) == reference(queues, f, now));
    }
  }
  for (const double other : {1.0, std::nextafter(1.0, 2.0), 1.0 + 1e-13, 1.001}) {
    FairShare g(quotas, 0.0);
    FairShareOrder by(queues, g);
    g.set_held(1, 1.0, 0.0);
    g.set_held(2, other, 0.0);
    CAPTURE(other);
    CHECK(by.groups(10.0) == reference(queues, g, 10.0));
  }
  CHECK(factors_order_as_exponents(-1.0, -1.0));
  CHECK(factors_order_as_exponents(-0.0, 0.0));
  CHECK_FALSE(factors_order_as_exponents(-1.0, std::nextafter(-1.0, 0.0)));
  CHECK(factors_order_as_exponents(-1.0, -1.0 - 1e-9));
  CHECK(factors_order_as_exponents(-std::numeric_limits<double>::infinity(), -2.0));
  CHECK_FALSE(factors_order_as_exponents(-std::numeric_limits<double>::infinity(), -2000.0));
  CHECK_FALSE(factors_order_as_exponents(-1100.0, -1200.0));
  CHECK_FALSE(factors_order_as_exponents(std::nan(""), -1.0));
}

TEST_CASE("The step-time seam: a spread penalty per extra domain, asked once per shape",
          "[jobs][step_time]") {
  ClusterState c(4, 8, {0, 0, 1, 1});
  StepTimeCache cache(std::make_unique<SpreadPenaltyModel>(std::vector<double>{0.25}));
  const Allocation compact{{0, 8}, {1, 8}};
  const Allocation scattered{{1, 8}, {2, 8}};
  CHECK(shape_of(c, scattered).domains == 2);
  CHECK(shape_of(c, scattered).min_domains == 1);
  CHECK(cache.slowdown(0, shape_of(c, compact), compact) == 1.0);
  CHECK(cache.slowdown(0, shape_of(c, scattered), scattered) == 1.25);
  CHECK(cache.slowdown(-1, shape_of(c, scattered), scattered) == 1.0);  // classless trace jobs
  const Allocation same_shape{{0, 8}, {3, 8}};
  CHECK(cache.slowdown(0, shape_of(c, same_shape), same_shape) == 1.25);
  CHECK(cache.distinct_shapes() == 3);
  CHECK(cache.queries() == 4);
}

namespace {

// A model that says how often it was asked; its answer names the shape.
class CountingStepTimeModel final : public StepTimeModel {
 public:
  explicit CountingStepTimeModel(int& calls) : calls_(calls) {}
  double slowdown(int job_class, const PlacementShape& shape, const Allocation&) override {
    ++calls_;
    return 1.0 + shape.gpus + 1e-3 * shape.nodes + 1e-6 * shape.domains + 1e-9 * (job_class + 1);
  }

 private:
  int& calls_;
};

}  // namespace

TEST_CASE("The step-time cache answers many shapes, recent or not, as the model does, asking it once each",
          "[jobs][step_time]") {
  int calls = 0;
  StepTimeCache cache(std::make_unique<CountingStepTimeModel>(calls));
  const Allocation none;
  // 2 classes x 1,100 GPU counts x 2 domain counts: more shapes than the cache's 4,096 recent
  // answers hold, so that some collide there and are found again in the map.
  for (int round = 0; round < 2; ++round)
    for (int job_class = -1; job_class <= 0; ++job_class)
      for (int gpus = 1; gpus <= 1100; ++gpus)
        for (int domains = 1; domains <= 2; ++domains) {
          const PlacementShape shape{gpus, 1 + gpus / 8, domains, 1};
          CHECK(cache.slowdown(job_class, shape, none) ==
                1.0 + gpus + 1e-3 * shape.nodes + 1e-6 * domains + 1e-9 * (job_class + 1));
        }
  CHECK(calls == 4400);
  CHECK(cache.distinct_shapes() == 4400);
  CHECK(cache.queries() == 8800);
}

namespace {

// The ids a cursor from the front visits.
std::vector<int64_t> walk(const PendingQueue& q) {
  std::vector<int64_t> ids;
  PendingQueue::Cursor c = q.begin();
  for (const PendingQueue::Entry* e = q.peek(c); e != nullptr; e = q.peek(c)) {
    ids.push_back(e->id);
    q.advance(c);
  }
  return ids;
}

PendingQueue::Entry pending_job(int64_t id) { return {id, static_cast<int32_t>(id), 1, 10.0 * static_cast<double>(id)}; }

}  // namespace

TEST_CASE("The pending queue walks jobs by id through erasures, requeues and compaction",
          "[jobs][pending]") {
  PendingQueue q;
  for (int64_t id = 0; id < 10; ++id) CHECK(q.insert(pending_job(id)));
  CHECK_FALSE(q.insert(pending_job(3)));  // already pending
  CHECK(q.size() == 10);
  CHECK(q.erase(0));
  CHECK(q.erase(4));
  CHECK_FALSE(q.erase(4));   // no longer pending
  CHECK_FALSE(q.erase(42));  // never was
  q.check();
  CHECK(walk(q) == std::vector<int64_t>{1, 2, 3, 5, 6, 7, 8, 9});
  CHECK(q.insert(pending_job(4)));  // a requeued job takes back its place
  CHECK(walk(q) == std::vector<int64_t>{1, 2, 3, 4, 5, 6, 7, 8, 9});
  // Erase most of them: the queue compacts, and the walk and the entries stay right.
  for (int64_t id = 1; id < 9; ++id) CHECK(q.erase(id));
  q.check();
  CHECK(q.size() == 1);
  CHECK(walk(q) == std::vector<int64_t>{9});
  CHECK(q.insert(pending_job(2)));  // before every pending job
  CHECK(q.insert(pending_job(12)));
  CHECK(walk(q) == std::vector<int64_t>{2, 9, 12});
  PendingQueue::Cursor c = q.begin();
  CHECK(q.peek(c)->remaining_s == 20.0);
  q.check();
}

TEST_CASE("A pending-queue cursor sees jobs inserted after it, not before it, as an ordered set's iterator",
          "[jobs][pending]") {
  PendingQueue q;
  for (const int64_t id : {10, 20, 30, 40}) q.insert(pending_job(id));
  PendingQueue::Cursor c = q.begin();
  q.advance(c);  // past 10, resting on 20
  REQUIRE(q.peek(c)->id == 20);
  q.insert(pending_job(15));  // before the cursor (a shift: the cursor finds 20 again)
  q.insert(pending_job(35));  // after it
  CHECK(q.erase(10));         // behind it; a cursor survives an erasure behind it
  std::vector<int64_t> seen;
  for (const PendingQueue::Entry* e = q.peek(c); e != nullptr; e = q.peek(c)) {
    seen.push_back(e->id);
    q.advance(c);
  }
  CHECK(seen == std::vector<int64_t>{20, 30, 35, 40});
  q.insert(pending_job(50));  // a cursor past the last stays there
  CHECK(q.peek(c) == nullptr);
  // A cursor survives the compaction an erasure behind it triggers.
  PendingQueue big;
  for (int64_t id = 0; id < 100; ++id) big.insert(pending_job(id));
  PendingQueue::Cursor d = big.begin();
  for (int i = 0; i < 70; ++i) big.advance(d);
  for (int64_t id = 0; id < 70; ++id) big.erase(id);
  big.check();
  CHECK(big.peek(d)->id == 70);
  CHECK(walk(big).size() == 30);
}

TEST_CASE("A pending-queue cursor passes over the jobs a predicate skips, up to an id and a count",
          "[jobs][pending]") {
  PendingQueue q;
  // GPUs 1, 8, 8, 2, 8, 8, 8 for ids 0-6, and a tombstone among them (id 2 erased).
  const int gpus[] = {1, 8, 8, 2, 8, 8, 8};
  for (int64_t id = 0; id < 7; ++id) q.insert({id, static_cast<int32_t>(id), gpus[id], 1.0});
  q.erase(2);
  const auto larger_than_4 = [](const PendingQueue::Entry& e) { return e.gpus > 4; };
  PendingQueue::Cursor c = q.begin();
  CHECK(q.pass_over(c, 100, 100, larger_than_4) == 0);  // id 0 fits: nothing passed
  REQUIRE(q.peek(c)->id == 0);
  q.advance(c);
  CHECK(q.pass_over(c, 100, 100, larger_than_4) == 1);  // id 1 (the tombstone is not counted)
  REQUIRE(q.peek(c)->id == 3);
  q.advance(c);
  CHECK(q.pass_over(c, 5, 100, larger_than_4) == 1);  // id 4; id 5 is another queue's turn
  REQUIRE(q.peek(c)->id == 5);
  CHECK(q.pass_over(c, 100, 1, larger_than_4) == 1);  // at most one
  REQUIRE(q.peek(c)->id == 6);
  CHECK(q.pass_over(c, 100, 100, larger_than_4) == 1);
  CHECK(q.peek(c) == nullptr);
  CHECK(q.pass_over(c, 100, 100, larger_than_4) == 0);  // past the last
}

TEST_CASE("A pass over crosses whole blocks by their summaries and passes the same jobs as a walk of every entry",
          "[jobs][pending]") {
  // Submissions, erasures (tombstones, compactions) and requeues (a tombstone taken back, or a
  // shift), then passes over from random places with a monotone predicate (the scheduler's
  // shape: larger than the room, or larger than the extra GPUs and too long), a random id
  // bound and count: the result is the reference's, a plain walk of the live entries.
  std::mt19937_64 rng(11);
  PendingQueue q;
  std::vector<PendingQueue::Entry> live;  // the reference, by id
  std::vector<PendingQueue::Entry> gone;
  int64_t next_id = 0;
  const int sizes[] = {1, 1, 1, 2, 4, 8, 8, 16, 64};
  const auto entry = [&](int64_t id) {
    return PendingQueue::Entry{id, static_cast<int32_t>(id), sizes[rng() % 9], static_cast<double>(rng() % 1000)};
  };
  std::size_t blocks_crossed = 0;
  for (int round = 0; round < 400; ++round) {
    const auto op = rng() % 10;
    if (op < 5 || live.empty()) {
      const PendingQueue::Entry e = entry(next_id++);
      REQUIRE(q.insert(e));
      live.push_back(e);
    } else if (op < 8) {
      const std::size_t k = rng() % live.size();
      REQUIRE(q.erase(live[k].id));
      gone.push_back(live[k]);
      live.erase(live.begin() + static_cast<std::ptrdiff_t>(k));
    } else if (!gone.empty()) {
      const std::size_t k = rng() % gone.size();
      REQUIRE(q.insert(gone[k]));
      live.insert(std::lower_bound(live.begin(), live.end(), gone[k],
                                   [](const auto& a, const auto& b) { return a.id < b.id; }),
                  gone[k]);
      gone.erase(gone.begin() + static_cast<std::ptrdiff_t>(k));
    }
    q.check();
    if (live.empty()) continue;
    const int room = static_cast<int>(rng() % 20), extra = static_cast<int>(rng() % 4);
    const double late = static_cast<double>(rng() % 1000);
    const auto skip = [&](const PendingQueue::Entry& e) { return e.gpus > room || (e.gpus > extra && e.remaining_s > late); };
    const std::size_t from = rng() % live.size();
    const int64_t bound = rng() % 4 == 0 ? live[rng() % live.size()].id : next_id;
    const std::size_t limit = 1 + rng() % 100;
    std::size_t expected = 0, k = from;
    for (; k < live.size() && expected < limit && live[k].id < bound && skip(live[k]); ++k) ++expected;
    PendingQueue::Cursor c = q.begin();
    while (q.peek(c)->id != live[from].id) q.advance(c);
    const std::size_t passed = q.pass_over(c, bound, limit, skip);
    CHECK(passed == expected);
    const PendingQueue::Entry* rest = q.peek(c);
    CHECK((rest == nullptr ? -1 : rest->id) == (k < live.size() ? live[k].id : -1));
    if (passed >= 16) ++blocks_crossed;
  }
  CHECK(blocks_crossed > 0);  // long runs were passed (crossing blocks by their summaries)
}

TEST_CASE("The release index walks holders by (release time, id) through inserts, erasures, splits and merges",
          "[jobs][release]") {
  ReleaseIndex index;
  CHECK_FALSE(index.erase(1.0, 1));  // nothing there
  // Enough entries for many blocks, with ties in release time (broken by id), inserted out of
  // order; the expected order is a sorted list of the same keys.
  std::mt19937_64 rng(7);
  std::vector<std::pair<double, int64_t>> expected;
  for (int64_t id = 0; id < 1000; ++id) {
    const double release = static_cast<double>(rng() % 300);
    index.insert({release, id, static_cast<int32_t>(id), static_cast<int32_t>(1 + id % 8)});
    expected.emplace_back(release, id);
  }
  CHECK_THROWS_AS(index.insert({expected[5].first, 5, 5, 1}), std::logic_error);
  const auto walked = [&] {
    std::vector<std::pair<double, int64_t>> seen;
    index.walk([&](const ReleaseIndex::Entry& e) {
      CHECK(e.slot == e.id);
      CHECK(e.gpus == 1 + e.id % 8);
      seen.emplace_back(e.release_s, e.id);
      return true;
    });
    return seen;
  };
  std::sort(expected.begin(), expected.end());
  index.check();
  CHECK(index.size() == 1000);
  CHECK(walked() == expected);
  // Erase the earliest half (as completions do) and every third of the rest: blocks empty
  // out and merge; the walk stays in order.
  std::vector<std::pair<double, int64_t>> kept;
  for (std::size_t i = 0; i < expected.size(); ++i) {
    if (i < 500 || i % 3 == 0) {
      // The earliest first, as releases come: first() names it before it goes.
      if (i < 500) CHECK(std::pair{index.first()->release_s, index.first()->id} == expected[i]);
      if (i < 499) CHECK(std::pair{index.second()->release_s, index.second()->id} == expected[i + 1]);
      CHECK(index.erase(expected[i].first, expected[i].second));
    } else {
      kept.push_back(expected[i]);
    }
  }
  CHECK_FALSE(index.erase(expected[0].first, expected[0].second));  // already gone
  CHECK_FALSE(index.erase(expected[501].first, expected[501].second + 5000));  // never there
  index.check();
  CHECK(index.size() == kept.size());
  CHECK(walked() == kept);
  // A walk stops where its function says.
  int visited = 0;
  index.walk([&](const ReleaseIndex::Entry&) { return ++visited < 3; });
  CHECK(visited == 3);
  // The latest first this time: each goes from the front of the last block.
  for (auto it = kept.rbegin(); it != kept.rend(); ++it) {
    CHECK(index.erase(it->first, it->second));
    if (index.size() % 97 == 0) index.check();
  }
  CHECK(index.empty());
  CHECK(index.first() == nullptr);
  CHECK(index.second() == nullptr);
  index.check();
  // Emptied (its last block dropped), it takes entries again: into a new block, in order.
  index.insert({4.0, 2, 2, 3});
  index.insert({3.0, 9, 9, 2});
  index.check();
  std::vector<std::pair<double, int64_t>> again = {{3.0, 9}, {4.0, 2}};
  CHECK(walked() == again);
}

TEST_CASE("Indices sorted by a key, highest first, ties in their order, as std::stable_sort sorts them",
          "[jobs][placement]") {
  std::vector<int> keys{3, 1, 4, 1, 5, 9, 2, 6, 5, 3, 5, 0, 9};
  std::vector<int> v(keys.size());
  for (std::size_t i = 0; i < v.size(); ++i) v[i] = static_cast<int>(i);
  std::vector<int> expected = v;
  const auto key = [&](int i) { return keys[static_cast<std::size_t>(i)]; };
  std::stable_sort(expected.begin(), expected.end(), [&](int a, int b) { return key(a) > key(b); });
  sort_descending_stable(v, key);
  CHECK(v == expected);
  CHECK(v == std::vector<int>{5, 12, 7, 4, 8, 10, 2, 0, 9, 6, 1, 3, 11});
  std::vector<int> none;
  sort_descending_stable(none, [&](int i) { return i; });
  CHECK(none.empty());
}
