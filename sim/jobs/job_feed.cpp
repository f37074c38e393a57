#include "sim/jobs/job_feed.hpp"

#include <array>
#include <atomic>
#include <limits>
#include <system_error>
#include <thread>

#include <tbb/concurrent_queue.h>

namespace cs::jobs {

struct JobFeed::Ahead {
  std::vector<Block> blocks = std::vector<Block>(kBlocks);
  // Unbounded: only kBlocks blocks exist, so a push never waits; a pop waits for a block.
  tbb::concurrent_bounded_queue<Block*> filled, free;  // nullptr in free: stop
  std::atomic<bool> stop{false};
  std::thread producer;

  ~Ahead() {
    stop.store(true, std::memory_order_relaxed);
    free.push(nullptr);  // wakes the producer if it waits for a free block
    if (producer.joinable()) producer.join();
  }

  // Fills free blocks from `stream` until it ends or fails (the block that ends it is marked
  // last and carries its error) or until stopped. A job submitted after `horizon_s` ends its
  // block, and the producer then waits until the reader has given back every block (it read
  // that job and asked for the next: a run that goes on past its horizon) before it draws on,
  // without pausing again.
  void produce(JobStream& stream, double horizon_s) {
    Block* b = nullptr;
    while (true) {
      free.pop(b);
      if (!b || stop.load(std::memory_order_relaxed)) return;
      b->count = 0;
      bool past_horizon = false;
      try {
        while (b->count < kBlockJobs && !past_horizon) {
          JobRequest& r = b->jobs[b->count];
          if (!stream.next(r)) {  // drawn into its place in the block
            b->last = true;
            break;
          }
          ++b->count;
          past_horizon = r.submit_s > horizon_s;
        }
      } catch (...) {
        b->error = std::current_exception();
        b->last = true;
      }
      filled.push(b);
      if (b->last) return;
      if (past_horizon) {
        if (!take_every_block()) return;
        horizon_s = std::numeric_limits<double>::infinity();  // past it: no more pauses
      }
    }
  }

  // Waits until every block is free (then gives them back to `free` for the loop above);
  // false when stopped meanwhile.
  bool take_every_block() {
    std::array<Block*, kBlocks> back{};
    for (Block*& x : back) {
      free.pop(x);
      if (!x || stop.load(std::memory_order_relaxed)) return false;
    }
    for (Block* x : back) free.push(x);
    return true;
  }
};

JobFeed::JobFeed(uint64_t seed, const JobsConfig& config) : config_(config), stream_(seed, config) {}

// The producer stops (and is joined) before the stream it draws from goes.
JobFeed::~JobFeed() { ahead_.reset(); }

void JobFeed::start_producer() {
  auto ahead = std::make_unique<Ahead>();
  for (Block& b : ahead->blocks) ahead->free.push(&b);
  try {
    ahead->producer = std::thread([a = ahead.get(), this] { a->produce(stream_, config_.until_s); });
  } catch (const std::system_error&) {
    here_only_ = true;  // no thread to be had: draw here, as without draw_ahead
    return;
  }
  ahead_ = std::move(ahead);
}

std::optional<JobRequest> JobFeed::next_ahead() {
  if (!ahead_) {
    start_producer();
    if (!ahead_) return next();  // no thread: drawn here from now on (here_only_)
  }
  // The reader's block is used up (or it has none yet): give it back, take the next filled one.
  while (!block_ || at_ == block_->count) {
    if (block_) {
      if (block_->last) {
        if (block_->error) std::rethrow_exception(block_->error);
        return std::nullopt;
      }
      ahead_->free.push(block_);
      block_ = nullptr;
    }
    ahead_->filled.pop(block_);
    at_ = 0;
  }
  ++taken_;
  return block_->jobs[at_++];
}

}  // namespace cs::jobs
