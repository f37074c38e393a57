#pragma once
// The job stream (job_stream.hpp) as the cluster reads it, one job per submission: drawn in the
// simulation's thread, or, with JobsConfig::draw_ahead, by a second thread that draws ahead of
// the simulation into a few blocks of jobs while it runs.
//
// The same jobs in the same order either way: the stream owns its random streams and reads only
// the (immutable) configuration, so nothing the simulation does reaches a draw; the producer
// takes the stream over once config.draw_ahead_after jobs have been drawn in the calling
// thread (a small run never starts a thread) and from then on only it draws. An error of the
// stream (a malformed trace row) is raised by next() at the job where it occurred, as when
// drawing in the calling thread; jobs drawn past the end of the run are dropped.
//
// The producer fills blocks of kBlockJobs jobs; kBlocks blocks go round between it and the
// reader through two TBB queues (filled, free), so the threads meet once per block, not per
// job, and the producer is at most kBlocks blocks ahead. The producer draws several times faster
// than a simulation uses the jobs, so it sleeps once a block is filled and the reader wakes it
// when it gives one back: a futex wake and a context switch per block on each side, some 30 us
// of both threads' CPU together on a VM. Blocks of 4,096 jobs (128 KiB, 32 bytes a job) make
// that one wake per 4,096 jobs (blocks of 512 cost the year at 85% about 3% of its CPU in those
// wakes, more when the second core sat idle between them). Two blocks: the producer fills one while the
// reader reads the other. It pauses at the first job submitted after config.until_s (the run
// takes that job from the feed and never submits it): it ends its block there and draws on
// only once the reader has given back every block, which a run driven past its horizon does;
// so no jobs are drawn for nothing when the run ends (two blocks of 4,096 would draw up to
// 8,192 past it: 5.8 M of the producer's instructions at a month's end).
// It is a dedicated thread, not a TBB task: a task could wait behind others (a sweep's, the
// replications') on a busy arena while the simulation waits for its jobs. The destructor stops
// and joins it, whether the run ended, was interrupted or failed. Where no thread can be
// started, the feed draws in the calling thread. Not thread-safe itself: one reader.
#include <algorithm>
#include <cstddef>
#include <cstdint>
#include <exception>
#include <memory>
#include <optional>
#include <vector>

#include "sim/jobs/job_stream.hpp"
#include "sim/jobs/jobs_config.hpp"

namespace cs::jobs {

class JobFeed {
 public:
  static constexpr std::size_t kBlockJobs = 4096;
  static constexpr std::size_t kBlocks = 2;
  static constexpr std::size_t kPrefetchJobs = 12;  // how far ahead next() fetches a block's jobs

  // `seed`: the simulation's; `config` must outlive the feed (the stream reads it).
  JobFeed(uint64_t seed, const JobsConfig& config);
  JobFeed(const JobFeed&) = delete;
  JobFeed& operator=(const JobFeed&) = delete;
  ~JobFeed();

  // The stream's next job; nullopt once it has ended (and at every call after); the stream's
  // error at the job where it failed (and at every call after).
  std::optional<JobRequest> next() {
    if (block_ && at_ < block_->count) {
      ++taken_;
      // The block was written by the producer's core: fetch a few lines ahead of the reads.
      __builtin_prefetch(block_->jobs.data() + std::min(at_ + kPrefetchJobs, kBlockJobs - 1));
      return block_->jobs[at_++];
    }
    if (!ahead_ && (here_only_ || !config_.draw_ahead || taken_ < config_.draw_ahead_after)) {
      std::optional<JobRequest> r = stream_.next();
      if (r) ++taken_;
      else here_only_ = true;  // ended: no producer to start
      return r;
    }
    return next_ahead();
  }
  // Jobs next() has given.
  int64_t taken() const { return taken_; }
  // Whether a producer thread draws the jobs (it started and has not been stopped).
  bool drawing_ahead() const { return ahead_ != nullptr; }

 private:
  struct Block {
    std::vector<JobRequest> jobs = std::vector<JobRequest>(kBlockJobs);
    std::size_t count = 0;
    bool last = false;         // the stream ended (or failed) after these jobs
    std::exception_ptr error;  // its error, raised after the jobs before it
  };

  struct Ahead;  // the blocks, their queues and the producer thread (job_feed.cpp)

  // Starts the producer if it is time, then takes the next job from its blocks (out of line:
  // the queues' code kept off the path that draws here).
  std::optional<JobRequest> next_ahead();
  void start_producer();

  const JobsConfig& config_;
  JobStream stream_;  // drawn from the calling thread until the producer starts, then by it alone
  int64_t taken_ = 0;
  Block* block_ = nullptr;  // the reader's, jobs [at_, count) still to give
  std::size_t at_ = 0;
  bool here_only_ = false;  // the stream ended here, or no thread could be started
  std::unique_ptr<Ahead> ahead_;
};

}  // namespace cs::jobs
