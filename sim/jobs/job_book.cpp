#include "sim/jobs/job_book.hpp"

#include <algorithm>
#include <memory>
#include <new>
#include <stdexcept>

namespace cs::jobs {

JobBook::JobBook(int queues, int nodes, int gpus_per_node, bool track_running)
    : pending_(static_cast<std::size_t>(queues)),
      track_running_(track_running),
      running_(static_cast<std::size_t>(queues)),
      held_gpus_(static_cast<std::size_t>(queues), 0),
      on_node_stride_(static_cast<std::size_t>(gpus_per_node) + 1),
      on_node_(static_cast<std::size_t>(nodes) * on_node_stride_, 0) {}

Slot JobBook::add() {
  Slot s;
  if (!free_.empty()) {
    s = free_.back();
    free_.pop_back();
    // The slot's allocation buffer stays with the slot, for the new job's runs (a start copies
    // its placement into it: no allocation per job). The record is built again in place:
    // `slot = Job{}` zeroed a 256-byte temporary on the stack and copied it in. Every field
    // has its default in job.hpp, so a default-initialized Job is the same record.
    Job& slot = jobs_[static_cast<std::size_t>(s)];
    Allocation buffer = std::move(slot.allocation);
    std::destroy_at(&slot);
    ::new (static_cast<void*>(&slot)) Job;
    slot.allocation = std::move(buffer);
    live_[static_cast<std::size_t>(s)] = 1;
  } else {
    s = static_cast<Slot>(jobs_.size());
    jobs_.emplace_back();
    live_.push_back(1);
  }
  return s;
}

void JobBook::remove(Slot s) {
  live_[static_cast<std::size_t>(s)] = 0;
  Job& j = at(s);
  j.allocation.clear();  // its capacity kept for the slot's next job
  free_.push_back(s);
}

void JobBook::enqueue(Slot s) {
  const Job& j = at(s);
  if (pending_[static_cast<std::size_t>(j.queue)].insert({j.id, s, j.gpus, j.work_s - j.committed_s})) ++pending_total_;
}

void JobBook::dequeue(Slot s) {
  const Job& j = at(s);
  if (pending_[static_cast<std::size_t>(j.queue)].erase(j.id)) --pending_total_;
}

void JobBook::hold(Slot s) {
  const Job& j = at(s);
  by_release_.insert({j.release_s, j.id, s, j.gpus});
  if (track_running_ && j.phase == JobPhase::running)
    running_[static_cast<std::size_t>(j.queue)].emplace(j.run.start_s, j.id, s);
  held_gpus_[static_cast<std::size_t>(j.queue)] += j.gpus;
  for (const NodeShare& n : j.allocation) {
    Slot* row = on_node_.data() + static_cast<std::size_t>(n.node) * on_node_stride_;
    if (static_cast<std::size_t>(row[0]) + 1 >= on_node_stride_) throw std::logic_error("JobBook: more jobs on a node than GPUs");
    row[1 + row[0]++] = s;
  }
}

void JobBook::stop_running(Slot s) {
  if (!track_running_) return;
  const Job& j = at(s);
  running_[static_cast<std::size_t>(j.queue)].erase({j.run.start_s, j.id, s});
}

void JobBook::unhold(Slot s) {
  const Job& j = at(s);
  by_release_.erase(j.release_s, j.id);
  stop_running(s);
  held_gpus_[static_cast<std::size_t>(j.queue)] -= j.gpus;
  for (const NodeShare& n : j.allocation) {
    Slot* row = on_node_.data() + static_cast<std::size_t>(n.node) * on_node_stride_;
    Slot* const end = row + 1 + row[0];
    Slot* const it = std::find(row + 1, end, s);
    if (it == end) throw std::logic_error("JobBook: a job missing from its node");
    *it = end[-1];  // the last takes its place
    --row[0];
  }
}

}  // namespace cs::jobs
