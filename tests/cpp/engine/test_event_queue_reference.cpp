// EventQueue against a simple reference (std::map keyed by the total order) over ~1e5
// random pushes, pops and cancels, with many ties; once with the real sequence space and
// once with a tiny one so that renumbering happens hundreds of times; and once as a
// simulation drives it (pushes at or after the time last popped, many at that very instant:
// the lane beside the heap), with cancels, compactions, shrink_to_fit and clear; and that once
// more as the Simulator pops (pop_until_open: pushes fill the open root, settle() now and then),
// over a queue grown past a thousand keys and shrunk again.
#include <catch2/catch.hpp>

#include <cstdint>
#include <map>
#include <random>
#include <tuple>
#include <vector>

#include "engine_test_support.hpp"
#include "sim/engine/event_queue.hpp"

using namespace cs::engine;
using namespace cs::engine::test;

namespace {

struct Issued {
  EventId id;
  std::tuple<double, int, uint64_t> key;
};

// Pops whatever is left: in the reference's order, and nothing more.
void drain_against_reference(EventQueue& q, std::map<std::tuple<double, int, uint64_t>, uint64_t>& ref) {
  while (!ref.empty()) {
    REQUIRE(q.pop().tag == ref.begin()->second);
    ref.erase(ref.begin());
  }
  REQUIRE(q.empty());
}

// Returns the number of renumberings the queue went through.
uint64_t run_against_reference(EventQueue& q, std::size_t max_pending, uint64_t seed) {
  NullTarget t;
  std::mt19937_64 rng(seed);
  std::map<std::tuple<double, int, uint64_t>, uint64_t> ref;  // (time, priority, seq) -> tag
  std::vector<Issued> issued;
  uint64_t seq = 0;
  constexpr int kOps = 100000;
  for (int op = 0; op < kOps; ++op) {
    const uint64_t r = rng() % 100;
    const bool can_push = ref.size() < max_pending;
    if (r < 50 && can_push) {
      // Few distinct times and priorities: plenty of exact ties.
      const double time = static_cast<double>(rng() % 50) * 0.25;
      const int priority = static_cast<int>(rng() % 5) - 2;
      const uint64_t tag = seq;
      const EventId id = q.push(time, priority, &t, tag);
      ref.emplace(std::make_tuple(time, priority, seq), tag);
      issued.push_back({id, std::make_tuple(time, priority, seq)});
      ++seq;
    } else if (r < 80 || !can_push) {
      if (ref.empty()) {
        REQUIRE(q.empty());
        continue;
      }
      const auto expected = ref.begin();
      REQUIRE(q.top_time() == std::get<0>(expected->first));
      const auto ev = q.pop();
      REQUIRE(ev.tag == expected->second);
      REQUIRE(ev.time == std::get<0>(expected->first));
      ref.erase(expected);
    } else if (!issued.empty()) {
      // Any handle ever issued: pending, already run, or already cancelled.
      const Issued& pick = issued[rng() % issued.size()];
      const bool pending = ref.count(pick.key) != 0;
      REQUIRE(q.contains(pick.id) == pending);
      REQUIRE(q.cancel(pick.id) == pending);
      ref.erase(pick.key);
    }
    REQUIRE(q.size() == ref.size());
    REQUIRE(q.dead_entries() <= q.size());
  }
  drain_against_reference(q, ref);
  return q.renumber_count();
}

// As a simulator drives the queue: every push is at or after `now` (the time last popped),
// half of them at `now` itself at any priority, so most go through the lane. Every few
// thousand operations the queue is cleared: every handle issued before is then stale.
// `open`: pops leave the queue open (pop_until_open), settled at random or by the next call
// that needs it; top_time(), pushes and cancels meet it open.
void run_instants_against_reference(EventQueue& q, std::size_t max_pending, uint64_t seed, bool open = false) {
  NullTarget t;
  std::mt19937_64 rng(seed);
  std::map<std::tuple<double, int, uint64_t>, uint64_t> ref;  // (time, priority, seq) -> tag
  std::vector<Issued> issued;
  uint64_t seq = 0;
  double now = 0;
  for (int op = 0; op < 60000; ++op) {
    const uint64_t r = rng() % 100;
    if (r < 50 && ref.size() < max_pending) {
      const double time = (rng() % 2 == 0) ? now : now + static_cast<double>(rng() % 8) * 0.5;
      const int priority = static_cast<int>(rng() % 5) - 2;
      const EventId id = q.push(time, priority, &t, seq);
      ref.emplace(std::make_tuple(time, priority, seq), seq);
      issued.push_back({id, std::make_tuple(time, priority, seq)});
      ++seq;
    } else if (r < 80) {
      if (ref.empty()) {
        REQUIRE(q.top_time() == kForever);
        continue;
      }
      const auto expected = ref.begin();
      REQUIRE(q.top_time() == std::get<0>(expected->first));
      QueuedEvent ev{};
      if (open) {
        // Not before the next key: nothing taken.
        REQUIRE_FALSE(q.pop_until_open(std::get<0>(expected->first) - 0.125, ev));
        REQUIRE(q.pop_until_open(std::get<0>(expected->first), ev));
        if (rng() % 4 == 0) q.settle();
      } else {
        ev = q.pop();
      }
      REQUIRE(ev.tag == expected->second);
      now = ev.time;
      ref.erase(expected);
    } else if (r < 98) {
      if (issued.empty()) continue;
      const Issued& pick = issued[rng() % issued.size()];
      const bool pending = ref.count(pick.key) != 0;
      REQUIRE(q.cancel(pick.id) == pending);
      ref.erase(pick.key);
    } else if (r < 99) {
      q.shrink_to_fit();
    } else if (rng() % 20 == 0) {
      q.clear();
      ref.clear();
      for (const Issued& i : issued) REQUIRE_FALSE(q.contains(i.id));
      issued.clear();
    }
    REQUIRE(q.size() == ref.size());
    REQUIRE(q.dead_entries() <= q.size());
  }
  drain_against_reference(q, ref);
}

}  // namespace

TEST_CASE("EventQueue matches a reference ordered map when pushed at the instant it is at (the lane)",
          "[event_queue][reference]") {
  EventQueue q;
  run_instants_against_reference(q, 500, 3);
  EventQueue renumbered(/*sequence_limit=*/64);
  run_instants_against_reference(renumbered, 40, 4);
  CHECK(renumbered.renumber_count() > 100);
}

TEST_CASE("EventQueue popped open (the Simulator's pop_until_open) matches the reference ordered map",
          "[event_queue][reference]") {
  EventQueue q;
  run_instants_against_reference(q, 500, 5, /*open=*/true);
  EventQueue renumbered(/*sequence_limit=*/64);
  run_instants_against_reference(renumbered, 40, 6, /*open=*/true);
  CHECK(renumbered.renumber_count() > 100);
}

TEST_CASE("EventQueue matches a reference ordered map", "[event_queue][reference]") {
  EventQueue q;
  CHECK(run_against_reference(q, 3000, 1) == 0);
}

TEST_CASE("EventQueue matches the reference across sequence renumbering",
          "[event_queue][reference][renumber]") {
  EventQueue q(/*sequence_limit=*/64);
  CHECK(run_against_reference(q, 40, 2) > 100);
}

TEST_CASE("EventQueue matches the reference while it grows large and shrinks again", "[event_queue][reference]") {
  // Popped open as the Simulator pops, a queue grows past the 1,024 keys beyond which a pop
  // prefetches (the sift-down's and the next root's slot), loses more than half its events to
  // cancels (a compaction of the large heap), and shrinks to a few hundred, twice: the events
  // come out in the reference's order throughout.
  NullTarget t;
  std::mt19937_64 rng(7);
  EventQueue q;
  std::map<std::tuple<double, int, uint64_t>, uint64_t> ref;  // (time, priority, seq) -> tag
  std::vector<Issued> issued;
  uint64_t seq = 0;
  double now = 0;
  const auto push = [&] {
    const double time = now + static_cast<double>(rng() % 64) * 0.25;  // now itself too: the lane
    const int priority = static_cast<int>(rng() % 3) - 1;
    issued.push_back({q.push(time, priority, &t, seq), std::make_tuple(time, priority, seq)});
    ref.emplace(std::make_tuple(time, priority, seq), seq);
    ++seq;
  };
  const auto pop_open = [&] {
    QueuedEvent ev{};
    REQUIRE(q.pop_until_open(kForever, ev));
    REQUIRE(ev.tag == ref.begin()->second);
    now = ev.time;
    ref.erase(ref.begin());
  };
  // Cancels a handle issued at random (pending or not); true if it was pending.
  const auto cancel_one = [&] {
    const Issued& pick = issued[rng() % issued.size()];
    const bool pending = ref.erase(pick.key) != 0;
    REQUIRE(q.cancel(pick.id) == pending);
    return pending;
  };
  for (int cycle = 0; cycle < 2; ++cycle) {
    while (ref.size() < 4600) {
      push();
      push();
      if (rng() % 8 == 0) cancel_one();
      pop_open();
    }
    // Some 2,600 cancels against 2,000 events left: only a compaction of the large heap keeps
    // the dead keys at most as many as the live ones (few dead keys come first to be dropped).
    while (ref.size() > 2000) cancel_one();
    REQUIRE(q.size() == ref.size());
    CHECK(q.dead_entries() <= q.size());
    while (ref.size() > 500) {
      pop_open();
      if (rng() % 3 == 0) push();
      if (rng() % 8 == 0) cancel_one();
    }
    q.settle();
    REQUIRE(q.size() == ref.size());
    REQUIRE(q.dead_entries() <= q.size());
  }
  drain_against_reference(q, ref);
}
