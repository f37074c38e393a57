// The classic "hold" model: keep N events pending; repeatedly take the earliest one and
// schedule a new one at its time + Exp(1). Measures the pending-event set at a constant size.
//
// Variants, all in this binary with the same flags and the same random increments:
//   binary heap  std::priority_queue of a 40-byte {time, priority, seq, target, tag} (baseline)
//   heap+hugepage  the same in storage advised to use transparent huge pages (for reference)
//   EventQueue   the engine's queue (pop + push)
//   Simulator    the full engine: schedule_in from inside EventTarget::on_event
// For each pending count: fill, warm up, then time `ops` holds 5 times; report the median.
//
// Usage: bench_engine_hold [--quick]
#include <algorithm>
#include <ctime>
#include <memory>
#include <cstdint>
#include <cstdio>
#include <cstring>
#include <optional>
#include <queue>
#include <vector>

#include "bench/bench_util.hpp"
#include "sim/engine/event_queue.hpp"
#include "sim/engine/random.hpp"
#include "sim/engine/simulator.hpp"

namespace {

using cs::engine::EventQueue;
using cs::engine::EventTarget;
using cs::engine::QueuedEvent;
using cs::engine::Simulator;

// Increments come from a table (fits in L2) so the random number generator does not dilute
// the comparison between queues.
constexpr std::size_t kIncrements = 1 << 14;
constexpr std::size_t kIncrementMask = kIncrements - 1;

struct BaselineEvent {
  double time;
  int priority;
  uint64_t seq;
  EventTarget* target;
  uint64_t tag;
};
struct Later {
  bool operator()(const BaselineEvent& a, const BaselineEvent& b) const {
    if (a.time != b.time) return a.time > b.time;
    if (a.priority != b.priority) return a.priority > b.priority;
    return a.seq > b.seq;
  }
};
template <class Container>
class BaselineQueue : public std::priority_queue<BaselineEvent, Container, Later> {
 public:
  std::size_t memory_bytes() const { return this->c.capacity() * sizeof(BaselineEvent); }
};
using PlainHeap = BaselineQueue<std::vector<BaselineEvent>>;
// The same heap in storage that asks for transparent huge pages, as EventQueue's does: shows
// how much of the difference is the page size rather than the layout.
using HugePageHeap = BaselineQueue<
    std::vector<BaselineEvent, cs::engine::detail::AlignedAllocator<BaselineEvent, 64>>>;

class NullTarget final : public EventTarget {
 public:
  void on_event(uint64_t) override {}
};

class HoldTarget final : public EventTarget {
 public:
  HoldTarget(Simulator& sim, const std::vector<double>& inc) : sim_(sim), inc_(inc.data()) {}
  void arm(uint64_t holds) { remaining_ = holds; }
  void on_event(uint64_t tag) override {
    sim_.schedule_in(inc_[next_++ & kIncrementMask], *this, tag);
    if (--remaining_ == 0) sim_.stop();
  }

 private:
  Simulator& sim_;
  const double* inc_;
  uint64_t next_ = 0;
  uint64_t remaining_ = 0;
};

// Thread CPU time, not wall time: the machine may be shared, and time spent descheduled
// says nothing about the queue. (Cache pollution by neighbours still shows.)
using cs::bench::median;
double cpu_seconds() { return cs::bench::thread_cpu_s(); }

struct Config {
  std::size_t pending;
  uint64_t warmup;
  uint64_t ops;
  int reps;
};

// One way of running the hold model; all variants see the same initial times and increments.
class Variant {
 public:
  virtual ~Variant() = default;
  virtual void hold(uint64_t n) = 0;
  virtual std::size_t memory_bytes() const = 0;
  virtual double checksum() const = 0;
};

template <class Queue>
class BaselineVariant final : public Variant {
 public:
  BaselineVariant(const std::vector<double>& init, const std::vector<double>& inc)
      : inc_(inc.data()) {
    for (std::size_t i = 0; i < init.size(); ++i) q_.push({init[i], 0, seq_++, &target_, i});
  }
  void hold(uint64_t n) override {
    for (uint64_t i = 0; i < n; ++i) {
      BaselineEvent e = q_.top();
      q_.pop();
      e.time += inc_[k_++ & kIncrementMask];
      e.seq = seq_++;
      q_.push(e);
    }
  }
  std::size_t memory_bytes() const override { return q_.memory_bytes(); }
  double checksum() const override { return q_.top().time; }

 private:
  NullTarget target_;
  Queue q_;
  const double* inc_;
  uint64_t seq_ = 0;
  uint64_t k_ = 0;
};

class EventQueueVariant final : public Variant {
 public:
  EventQueueVariant(const std::vector<double>& init, const std::vector<double>& inc)
      : inc_(inc.data()) {
    for (std::size_t i = 0; i < init.size(); ++i) q_.push(init[i], 0, &target_, i);
  }
  void hold(uint64_t n) override {
    for (uint64_t i = 0; i < n; ++i) {
      const QueuedEvent e = q_.pop();
      q_.push(e.time + inc_[k_++ & kIncrementMask], 0, e.target, e.tag);
    }
  }
  std::size_t memory_bytes() const override { return q_.memory_bytes(); }
  double checksum() const override { return q_.top_time(); }

 private:
  NullTarget target_;
  EventQueue q_;
  const double* inc_;
  uint64_t k_ = 0;
};

class SimulatorVariant final : public Variant {
 public:
  SimulatorVariant(const std::vector<double>& init, const std::vector<double>& inc)
      : sim_(1), target_(sim_, inc) {
    for (std::size_t i = 0; i < init.size(); ++i) sim_.schedule_at(init[i], target_, i);
  }
  void hold(uint64_t n) override {
    if (n == 0) return;
    target_.arm(n);
    sim_.run();
  }
  std::size_t memory_bytes() const override { return sim_.queue().memory_bytes(); }
  double checksum() const override { return sim_.now(); }

 private:
  Simulator sim_;
  HoldTarget target_;
};

volatile double g_sink = 0.0;  // keeps the loops from being optimized away

}  // namespace

int main(int argc, char** argv) {
  const std::optional<bool> parsed = cs::bench::parse_quick(argc, argv);
  if (!parsed) return 2;
  const bool quick = *parsed;

  const std::vector<Config> configs =
      quick ? std::vector<Config>{{1'000, 100'000, 500'000, 3},
                                  {100'000, 100'000, 300'000, 3},
                                  {1'000'000, 200'000, 200'000, 3}}
            : std::vector<Config>{{1'000, 1'000'000, 2'000'000, 5},
                                  {100'000, 1'000'000, 1'500'000, 5},
                                  {1'000'000, 1'000'000, 1'000'000, 5}};

  cs::engine::RandomStream rng(20240601);
  std::vector<double> inc(kIncrements);
  for (double& x : inc) x = rng.exponential(1.0);

  std::printf("hold model: pop the earliest event, push it back at +Exp(1); median of %d runs%s\n",
              configs.front().reps, quick ? " (--quick)" : "");
  std::printf("%-10s %-14s %14s %12s %14s\n", "pending", "variant", "events/s", "vs heap",
              "bytes/pending");
  const char* const names[] = {"binary heap", "heap+hugepage", "EventQueue", "Simulator"};
  double sink = 0.0;
  for (const Config& cfg : configs) {
    std::vector<double> init(cfg.pending);
    for (double& x : init) x = rng.exponential(1.0);
    std::vector<std::unique_ptr<Variant>> variants;
    variants.push_back(std::make_unique<BaselineVariant<PlainHeap>>(init, inc));
    variants.push_back(std::make_unique<BaselineVariant<HugePageHeap>>(init, inc));
    variants.push_back(std::make_unique<EventQueueVariant>(init, inc));
    variants.push_back(std::make_unique<SimulatorVariant>(init, inc));
    for (auto& v : variants) v->hold(cfg.warmup);
    // Repetitions interleave the variants so that a change in machine load hits all of them.
    std::vector<std::vector<double>> rates(variants.size());
    for (int r = 0; r < cfg.reps; ++r) {
      for (std::size_t v = 0; v < variants.size(); ++v) {
        variants[v]->hold(cfg.ops / 10);  // bring this variant's data back into the caches
        const double t0 = cpu_seconds();
        variants[v]->hold(cfg.ops);
        rates[v].push_back(static_cast<double>(cfg.ops) / (cpu_seconds() - t0));
      }
    }
    const double base = median(rates[0]);
    for (std::size_t v = 0; v < variants.size(); ++v) {
      const double rate = median(rates[v]);
      std::printf("%-10zu %-14s %14.3e %11.2fx %14.1f\n", cfg.pending, names[v], rate,
                  rate / base,
                  static_cast<double>(variants[v]->memory_bytes()) /
                      static_cast<double>(cfg.pending));
      sink += variants[v]->checksum();
      if (v >= 2) {  // the project's own queue and simulator, not the baselines
        char name[96];
        std::snprintf(name, sizeof name, "engine_hold/%s/pending_%zu", v == 2 ? "event_queue" : "simulator",
                      cfg.pending);
        cs::bench::figure(name, rate, "events/s", cs::bench::Better::higher);
      }
    }
  }
  g_sink = sink;
  std::printf("(bytes/pending: reserved capacity of the containers / pending events)\n");
  return 0;
}
