// The job feed (sim/jobs/job_feed.hpp): drawing the stream ahead on a second thread gives the
// same jobs in the same order as drawing each in the simulation's thread, ends and fails at the
// same job, pauses at the run's horizon (and draws on past it), stops cleanly when the run ends
// first, and leaves a run's results the same.
#include <catch2/catch.hpp>

#include <cmath>
#include <limits>
#include <optional>
#include <stdexcept>
#include <string>
#include <vector>

#include "sim/jobs/job_feed.hpp"
#include "tests/cpp/jobs/jobs_test_support.hpp"

using namespace cs::jobs;
using namespace cs::jobs::test;
using cs::sources::Distribution;

namespace {

// Two queues, three classes (discrete class choice, empirical GPUs, lognormal durations) on
// diurnal arrivals: every draw the stream makes.
JobsConfig drawn_stream(int64_t max_jobs) {
  JobsConfig c = quiet_cluster(8, 8);
  c.scheduler.policy = Policy::fair_share;
  c.scheduler.queues = {queue("a"), queue("b")};
  c.classes = {job_class("small", 0, 3.0, Distribution::empirical({1, 2, 4}, {2, 1, 1}), Distribution::lognormal(1800.0, 2.0)),
               job_class("wide", 1, 1.0, Distribution::empirical({8, 16, 64}, {1, 1, 1}), Distribution::exponential(7200.0)),
               job_class("any", 1, 1.0, Distribution::uniform(1.0, 30.0), Distribution::constant(600.0))};
  c.arrivals.process = cs::work::ArrivalProcess::diurnal;
  c.arrivals.rate_per_s = 1.0 / 60.0;
  c.max_jobs = max_jobs;
  return c;
}

void check_same(const JobRequest& a, const JobRequest& b) {
  CHECK(a.submit_s == b.submit_s);
  CHECK(a.gpus == b.gpus);
  CHECK(a.duration_s == b.duration_s);
  CHECK(a.queue == b.queue);
  CHECK(a.job_class == b.job_class);
}

// The stream's jobs drawn one at a time in this thread: several blocks and a last one part
// full, n of them.
std::vector<JobRequest> stream_jobs(uint64_t seed, int64_t n) {
  JobsConfig serial = drawn_stream(n);
  JobStream stream(seed, serial);
  std::vector<JobRequest> jobs;
  while (const auto r = stream.next()) jobs.push_back(*r);
  REQUIRE(static_cast<int64_t>(jobs.size()) == n);
  return jobs;
}

}  // namespace

TEST_CASE("Drawn ahead, the feed gives the stream's jobs in its order and ends where it ends",
          "[jobs][feed]") {
  // Several blocks, and a last one part full; the producer taking over at the start, after a
  // few jobs, and mid-block.
  const int64_t n = 3 * static_cast<int64_t>(JobFeed::kBlockJobs) + 17;
  const std::vector<JobRequest> expected = stream_jobs(7, n);
  for (const int64_t after : {int64_t{0}, int64_t{5}, static_cast<int64_t>(JobFeed::kBlockJobs) + 3}) {
    JobsConfig c = drawn_stream(n);
    c.draw_ahead = true;
    c.draw_ahead_after = after;
    JobFeed feed(7, c);
    for (std::size_t i = 0; i < expected.size(); ++i) {
      const std::optional<JobRequest> r = feed.next();
      REQUIRE(r);
      check_same(*r, expected[i]);
      CHECK(feed.drawing_ahead() == (static_cast<int64_t>(i) >= after));
    }
    CHECK(feed.taken() == n);
    CHECK_FALSE(feed.next());
    CHECK_FALSE(feed.next());
    CHECK(feed.taken() == n);
  }
  // Off, or a stream that ends before draw_ahead_after: no thread.
  JobsConfig small = drawn_stream(10);
  small.draw_ahead = true;
  JobFeed feed(7, small);
  for (int i = 0; i < 10; ++i) REQUIRE(feed.next());
  CHECK_FALSE(feed.next());
  CHECK_FALSE(feed.drawing_ahead());
}

TEST_CASE("A feed drawing ahead pauses at its run's horizon and draws on if the reader goes past it",
          "[jobs][feed]") {
  // The producer ends its block at the first job submitted after until_s (the run never
  // submits it) and waits; a reader that reads on (a run driven past its horizon) gets the
  // stream's jobs in order all the same, across the pause, mid-block and at a block's end.
  const int64_t n = 3 * static_cast<int64_t>(JobFeed::kBlockJobs) + 17;
  const std::vector<JobRequest> expected = stream_jobs(11, n);
  const auto kb = static_cast<std::size_t>(JobFeed::kBlockJobs);
  for (const std::size_t past : {std::size_t{1}, kb / 2, kb - 1, kb, kb + 5}) {
    JobsConfig c = drawn_stream(n);
    c.draw_ahead = true;
    c.draw_ahead_after = 0;
    // Job `past` is the first after the horizon (submission times never decrease; ties with
    // the job before it move the horizon's first job later, which is as good a test).
    c.until_s = (expected[past - 1].submit_s + expected[past].submit_s) / 2.0;
    if (!(c.until_s < expected[past].submit_s)) continue;
    JobFeed feed(11, c);
    for (std::size_t i = 0; i < expected.size(); ++i) {
      const std::optional<JobRequest> r = feed.next();
      REQUIRE(r);
      check_same(*r, expected[i]);
    }
    CHECK_FALSE(feed.next());
  }
  // Destroyed while paused at the horizon (the run ended there): it stops.
  JobsConfig c = drawn_stream(-1);
  c.draw_ahead = true;
  c.draw_ahead_after = 0;
  c.until_s = expected[100].submit_s;
  JobFeed feed(11, c);
  for (int i = 0; i < 102; ++i) REQUIRE(feed.next());
}

TEST_CASE("Drawn ahead, a stream ending at a block's end or at the horizon's first job ends there",
          "[jobs][feed]") {
  // max_jobs ends the stream one short of a block's end, at it, one past it, at the second's;
  // and the same with the stream's last job the first past the horizon (the producer pauses
  // after a block not marked last, and finds the end when the reader reads on).
  // A block's memory as job_feed.hpp states it: 32 bytes a job, 128 KiB a block.
  STATIC_REQUIRE(sizeof(JobRequest) * JobFeed::kBlockJobs == 128 * 1024);
  const auto kb = static_cast<int64_t>(JobFeed::kBlockJobs);
  for (const int64_t n : {kb - 1, kb, kb + 1, 2 * kb}) {
    const std::vector<JobRequest> expected = stream_jobs(13, n);
    for (const bool last_past_horizon : {false, true}) {
      JobsConfig c = drawn_stream(n);
      c.draw_ahead = true;
      c.draw_ahead_after = 0;
      const auto last = static_cast<std::size_t>(n - 1);
      if (last_past_horizon) c.until_s = (expected[last - 1].submit_s + expected[last].submit_s) / 2.0;
      if (last_past_horizon && !(c.until_s < expected[last].submit_s)) continue;
      JobFeed feed(13, c);
      for (const JobRequest& e : expected) {
        const std::optional<JobRequest> r = feed.next();
        REQUIRE(r);
        check_same(*r, e);
      }
      CHECK_FALSE(feed.next());
      CHECK_FALSE(feed.next());  // and at every call after
      CHECK(feed.taken() == n);
    }
  }
}

TEST_CASE("A feed drawing ahead stops when its reader goes first", "[jobs][feed]") {
  // An endless stream: the producer fills every block and waits; destroying the feed (the run
  // ended at run.until, or failed) must stop and join it, whatever it was doing.
  for (const int taken : {0, 1, 600, 5000}) {
    JobsConfig c = drawn_stream(-1);
    c.draw_ahead = true;
    c.draw_ahead_after = 0;
    JobFeed feed(3, c);
    for (int i = 0; i < taken; ++i) REQUIRE(feed.next());
    CHECK(feed.taken() == taken);
  }
}

TEST_CASE("A trace's bad row fails at the same job whether drawn ahead or not", "[jobs][feed]") {
  std::vector<std::string> rows;
  for (int i = 0; i < 40; ++i) rows.push_back(std::to_string(i) + ",1,60,a");
  rows.push_back("41,one,60,a");  // the 41st job's GPU count is not a number
  rows.push_back("42,1,60,a");    // a good row after it: never given
  const std::string trace = write_trace("feed_bad_row", rows);
  // Drawn ahead, also with a horizon the reader reads past: the producer pauses at the 22nd
  // job, or at the 40th (the last before the bad row), and meets the row once it draws on.
  for (const double until : {std::numeric_limits<double>::infinity(), 20.5, 38.5}) {
    for (const bool ahead : {false, true}) {
      JobsConfig c = quiet_cluster(1, 8);
      c.scheduler.queues = {queue("a")};
      c.trace_path = trace;
      c.until_s = until;
      c.draw_ahead = ahead;
      c.draw_ahead_after = 3;
      JobFeed feed(1, c);
      for (int i = 0; i < 40; ++i) REQUIRE(feed.next());
      CHECK(feed.drawing_ahead() == ahead);
      CHECK_THROWS_AS(feed.next(), std::invalid_argument);
      CHECK_THROWS_AS(feed.next(), std::invalid_argument);  // and at every call after
      CHECK(feed.taken() == 40);
    }
  }
}

TEST_CASE("A run with its jobs drawn ahead gives the same results", "[jobs][feed]") {
  // The determinism case's cluster (preemption, failures, checkpoints), until a horizon the
  // stream runs past: the jobs drawn ahead beyond it are dropped.
  JobsConfig c = drawn_stream(-1);
  c.scheduler.preemption = true;
  c.scheduler.queues[1].priority = 10;
  add_failures_and_checkpoints(c);
  c.arrivals.rate_per_s = 1.0 / 200.0;
  c.until_s = 10 * 86400.0;
  c.record_jobs = true;
  JobsConfig ahead = c;
  ahead.draw_ahead = true;
  ahead.draw_ahead_after = 100;
  const JobsResult x = run_jobs(c, 42), y = run_jobs(ahead, 42);
  REQUIRE(x.submitted > 1000);
  CHECK(x.preemptions > 0);
  CHECK(x.interruptions > 0);
  check_same_run(x, y);
}

TEST_CASE("A run of a trace, or ending at max_jobs, drawn ahead gives the same results", "[jobs][feed]") {
  // A trace of two blocks and a part, run to its end and to a horizon mid-block; and the
  // classes' stream ended by max_jobs at a block's end, with preemption, failures and
  // checkpoints.
  std::vector<std::string> rows;
  for (int i = 0; i < 9000; ++i)
    rows.push_back(std::to_string(30 * i) + "," + std::to_string(1 + i % 8) + "," + std::to_string(600 + (37 * i) % 3000) + ",a");
  const std::string trace = write_trace("feed_run", rows);
  for (const double until : {std::numeric_limits<double>::infinity(), 30.0 * 6000 + 15.0}) {
    JobsConfig c = quiet_cluster(4, 8);
    c.scheduler.queues = {queue("a")};
    c.trace_path = trace;
    c.until_s = until;
    c.record_jobs = true;
    JobsConfig ahead = c;
    ahead.draw_ahead = true;
    ahead.draw_ahead_after = 100;
    const JobsResult x = run_jobs(c, 5), y = run_jobs(ahead, 5);
    CHECK(x.submitted == (std::isinf(until) ? 9000 : 6001));
    check_same_run(x, y);
  }
  JobsConfig c = drawn_stream(static_cast<int64_t>(JobFeed::kBlockJobs));
  c.scheduler.preemption = true;
  c.scheduler.queues[1].priority = 10;
  add_failures_and_checkpoints(c);
  c.record_jobs = true;
  JobsConfig ahead = c;
  ahead.draw_ahead = true;
  ahead.draw_ahead_after = 0;
  const JobsResult x = run_jobs(c, 43), y = run_jobs(ahead, 43);
  CHECK(x.submitted == static_cast<int64_t>(JobFeed::kBlockJobs));
  CHECK(x.preemptions > 0);
  check_same_run(x, y);
}
