// EventQueue: cancellation, stale handles and the bound on cancelled entries.
#include <catch2/catch.hpp>

#include <algorithm>
#include <cstdint>
#include <random>
#include <vector>

#include "engine_test_support.hpp"
#include "sim/engine/event_queue.hpp"

using namespace cs::engine;
using namespace cs::engine::test;

TEST_CASE("Cancelling a pending event removes it", "[event_queue][cancel]") {
  NullTarget t;
  EventQueue q;
  const EventId a = q.push(1.0, 0, &t, 1);
  const EventId b = q.push(2.0, 0, &t, 2);
  const EventId c = q.push(3.0, 0, &t, 3);
  CHECK(a.valid());
  CHECK(a != b);
  CHECK(q.contains(b));
  CHECK(q.cancel(b));
  CHECK_FALSE(q.contains(b));
  CHECK(q.size() == 2);
  CHECK(q.pop().tag == 1);
  CHECK(q.pop().tag == 3);
  CHECK(q.empty());
  CHECK_FALSE(q.cancel(c));  // already ran
}

TEST_CASE("Cancelling the earliest event updates top_time", "[event_queue][cancel]") {
  NullTarget t;
  EventQueue q;
  const EventId a = q.push(1.0, 0, &t, 1);
  const EventId b = q.push(2.0, 0, &t, 2);
  q.push(3.0, 0, &t, 3);
  CHECK(q.cancel(a));
  CHECK(q.top_time() == 2.0);
  CHECK(q.cancel(b));
  CHECK(q.top_time() == 3.0);
  CHECK(q.size() == 1);
}

TEST_CASE("cancel_and_get returns the cancelled payload", "[event_queue][cancel]") {
  NullTarget t;
  EventQueue q;
  const EventId a = q.push(1.0, 0, &t, 77);
  const auto got = q.cancel_and_get(a);
  REQUIRE(got.has_value());
  CHECK(got->target == &t);
  CHECK(got->tag == 77);
  CHECK_FALSE(q.cancel_and_get(a).has_value());
}

TEST_CASE("Double cancel, unknown and empty handles are rejected", "[event_queue][cancel]") {
  NullTarget t;
  EventQueue q;
  const EventId a = q.push(1.0, 0, &t, 1);
  CHECK(q.cancel(a));
  CHECK_FALSE(q.cancel(a));
  CHECK_FALSE(q.cancel(EventId{}));
  CHECK_FALSE(q.cancel(EventId{0xFFFFFFFF00000000ULL | 12345}));  // slot never used
  CHECK_FALSE(q.cancel(EventId{a.raw & 0xFFFFFFFFULL}));            // generation 0
  CHECK(q.empty());
}

TEST_CASE("A stale handle does not cancel the event that reuses its slot", "[event_queue][cancel]") {
  NullTarget t;
  EventQueue q;
  const EventId a = q.push(1.0, 0, &t, 1);
  CHECK(q.pop().tag == 1);
  const EventId b = q.push(2.0, 0, &t, 2);  // reuses a's slot
  CHECK((a.raw & 0xFFFFFFFFULL) == (b.raw & 0xFFFFFFFFULL));
  CHECK(a != b);
  CHECK_FALSE(q.cancel(a));
  CHECK(q.size() == 1);

  // Same after a cancellation: the cancelled slot comes back with a new generation.
  CHECK(q.cancel(b));
  const EventId c = q.push(3.0, 0, &t, 3);
  CHECK_FALSE(q.cancel(b));
  CHECK(q.contains(c));
  CHECK(q.pop().tag == 3);
}

TEST_CASE("Cancelled entries never outnumber live ones", "[event_queue][cancel]") {
  NullTarget t;
  EventQueue q;
  std::mt19937_64 rng(7);
  std::vector<EventId> ids;
  for (uint64_t i = 0; i < 5000; ++i) {
    ids.push_back(q.push(static_cast<double>(rng() % 1000), 0, &t, i));
  }
  std::shuffle(ids.begin(), ids.end(), rng);
  std::size_t cancelled = 0;
  for (std::size_t i = 0; i < 4900; ++i) {
    REQUIRE(q.cancel(ids[i]));
    ++cancelled;
    REQUIRE(q.size() == 5000 - cancelled);
    REQUIRE(q.dead_entries() <= q.size());
  }
  // The survivors come out in order, and all of them.
  double last = -1.0;
  std::size_t n = 0;
  while (!q.empty()) {
    const auto ev = q.pop();
    CHECK(ev.time >= last);
    last = ev.time;
    ++n;
  }
  CHECK(n == 100);
  CHECK(q.dead_entries() == 0);
}

TEST_CASE("Cancelling everything empties the queue", "[event_queue][cancel]") {
  NullTarget t;
  EventQueue q;
  std::vector<EventId> ids;
  for (uint64_t i = 0; i < 100; ++i) ids.push_back(q.push(1.0, 0, &t, i));
  for (const EventId id : ids) CHECK(q.cancel(id));
  CHECK(q.empty());
  CHECK(q.dead_entries() == 0);
  CHECK(q.top_time() == kForever);
  q.push(2.0, 0, &t, 9);
  CHECK(q.pop().tag == 9);
}
