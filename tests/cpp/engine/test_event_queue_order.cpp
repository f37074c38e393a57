// EventQueue: the total order (time, then priority, then insertion).
#include <catch2/catch.hpp>

#include <cstdint>
#include <limits>
#include <stdexcept>
#include <vector>

#include "engine_test_support.hpp"
#include "sim/engine/event_queue.hpp"

using namespace cs::engine;
using namespace cs::engine::test;

TEST_CASE("EventQueue pops in time order", "[event_queue]") {
  NullTarget t;
  EventQueue q;
  CHECK(q.empty());
  CHECK(q.top_time() == kForever);
  q.push(3.0, 0, &t, 3);
  q.push(1.0, 0, &t, 1);
  q.push(2.0, 0, &t, 2);
  q.push(0.5, 0, &t, 0);
  CHECK(q.size() == 4);
  CHECK(q.top_time() == 0.5);
  const auto first = q.pop();
  CHECK(first.time == 0.5);
  CHECK(first.target == &t);
  CHECK(first.tag == 0);
  CHECK(drain_tags(q) == std::vector<uint64_t>{1, 2, 3});
  CHECK(q.top_time() == kForever);
}

TEST_CASE("EventQueue breaks time ties by priority, then FIFO", "[event_queue]") {
  NullTarget t;
  EventQueue q;
  q.push(1.0, 0, &t, 10);
  q.push(1.0, 5, &t, 11);
  q.push(1.0, -3, &t, 12);
  q.push(1.0, 0, &t, 13);
  q.push(0.0, 127, &t, 14);
  q.push(1.0, -3, &t, 15);
  q.push(1.0, 5, &t, 16);
  q.push(2.0, -128, &t, 17);
  CHECK(drain_tags(q) == std::vector<uint64_t>{14, 12, 15, 10, 13, 11, 16, 17});
}

TEST_CASE("EventQueue keeps FIFO order among many equal keys", "[event_queue]") {
  NullTarget t;
  EventQueue q;
  constexpr uint64_t kN = 20000;
  // Interleave two priorities and three times; within each (time, priority) class the tags
  // must come out in push order.
  for (uint64_t i = 0; i < kN; ++i) q.push(static_cast<double>(i % 3), static_cast<int>(i % 2), &t, i);
  uint64_t last_class = 0;
  uint64_t last_tag = 0;
  bool first = true;
  while (!q.empty()) {
    const auto ev = q.pop();
    const uint64_t cls = static_cast<uint64_t>(ev.time) * 2 + ev.tag % 2;
    CHECK(ev.time == static_cast<double>(ev.tag % 3));
    if (!first && cls == last_class) {
      REQUIRE(ev.tag > last_tag);
    } else if (!first) {
      REQUIRE(cls > last_class);
    }
    first = false;
    last_class = cls;
    last_tag = ev.tag;
  }
}

TEST_CASE("EventQueue treats -0.0 as 0.0 and orders negative and infinite times", "[event_queue]") {
  NullTarget t;
  EventQueue q;
  q.push(0.0, 0, &t, 1);
  q.push(-0.0, 0, &t, 2);  // same time as 0.0: FIFO after tag 1
  q.push(-1.5, 0, &t, 3);
  q.push(kForever, 0, &t, 4);
  q.push(-kForever, 0, &t, 5);
  q.push(1e-300, 0, &t, 6);
  q.push(-1e-300, 0, &t, 7);
  CHECK(q.top_time() == -kForever);
  CHECK(drain_tags(q) == std::vector<uint64_t>{5, 3, 7, 1, 2, 6, 4});
}

TEST_CASE("EventQueue round-trips times exactly", "[event_queue]") {
  NullTarget t;
  EventQueue q;
  const std::vector<double> times{0.1, 1.0 / 3.0, 5e-324, 1e300, 123456.789012345};
  for (double x : times) q.push(x, 0, &t, 0);
  std::vector<double> out;
  while (!q.empty()) out.push_back(q.pop().time);
  CHECK(out == std::vector<double>{5e-324, 0.1, 1.0 / 3.0, 123456.789012345, 1e300});
}

TEST_CASE("EventQueue rejects invalid pushes", "[event_queue]") {
  NullTarget t;
  EventQueue q;
  CHECK_THROWS_AS(q.push(std::numeric_limits<double>::quiet_NaN(), 0, &t, 0), std::invalid_argument);
  CHECK_THROWS_AS(q.push(1.0, 128, &t, 0), std::out_of_range);
  CHECK_THROWS_AS(q.push(1.0, -129, &t, 0), std::out_of_range);
  // The extremes of int too (no overflow in the range test: the sanitizer build checks it).
  CHECK_THROWS_AS(q.push(1.0, std::numeric_limits<int>::max(), &t, 0), std::out_of_range);
  CHECK_THROWS_AS(q.push(1.0, std::numeric_limits<int>::min(), &t, 0), std::out_of_range);
  CHECK_THROWS_AS(q.push(1.0, 0, nullptr, 0), std::invalid_argument);
  CHECK(q.empty());
  CHECK_THROWS_AS(q.pop(), std::out_of_range);
}

TEST_CASE("EventQueue pop_until takes the next event only when it is not after until", "[event_queue]") {
  NullTarget t;
  EventQueue q;
  QueuedEvent ev{};
  CHECK_FALSE(q.pop_until(kForever, ev));  // empty
  q.push(2.0, 0, &t, 2);
  q.push(1.0, 0, &t, 1);  // the lane (earlier than the heap's root)
  q.push(1.0, 1, &t, 11);
  q.push(3.0, 0, &t, 3);
  CHECK_FALSE(q.pop_until(0.5, ev));
  CHECK(q.size() == 4);
  REQUIRE(q.pop_until(1.0, ev));  // at until itself
  CHECK((ev.time == 1.0 && ev.tag == 1 && ev.target == &t));
  REQUIRE(q.pop_until(1.0, ev));
  CHECK(ev.tag == 11);
  CHECK_FALSE(q.pop_until(1.999, ev));
  CHECK(q.top_time() == 2.0);
  REQUIRE(q.pop_until(kForever, ev));
  CHECK((ev.time == 2.0 && ev.tag == 2));
  q.push(-0.0, 0, &t, 0);
  REQUIRE(q.pop_until(0.0, ev));  // -0.0 and +0.0 are the same time, either way round
  CHECK(ev.tag == 0);
  q.push(0.0, 0, &t, 5);
  REQUIRE(q.pop_until(-0.0, ev));
  CHECK(ev.tag == 5);
  REQUIRE(q.pop_until(3.0, ev));
  CHECK(ev.tag == 3);
  CHECK(q.empty());
}

TEST_CASE("EventQueue clear drops everything and invalidates handles", "[event_queue]") {
  NullTarget t;
  EventQueue q;
  const auto a = q.push(1.0, 0, &t, 1);
  q.push(2.0, 0, &t, 2);
  q.clear();
  CHECK(q.empty());
  CHECK_FALSE(q.contains(a));
  CHECK_FALSE(q.cancel(a));
  q.push(5.0, 0, &t, 5);
  q.push(4.0, 0, &t, 4);
  CHECK(drain_tags(q) == std::vector<uint64_t>{4, 5});
}

TEST_CASE("EventQueue memory is about 40 bytes per pending event", "[event_queue]") {
  NullTarget t;
  EventQueue q;
  for (uint64_t i = 0; i < 4096; ++i) q.push(static_cast<double>(i), 0, &t, i);
  const double per_event = static_cast<double>(q.memory_bytes()) / 4096.0;
  CHECK(per_event >= 40.0);
  CHECK(per_event <= 90.0);  // vector growth leaves at most 2x slack
}

TEST_CASE("EventQueue keeps the total order for events pushed at the earliest time (its lane)", "[event_queue]") {
  NullTarget t;
  EventQueue q;
  q.push(10.0, 0, &t, 10);
  q.push(20.0, 0, &t, 20);
  q.pop();  // now at 10: 20 is left
  // An instant's pass (a later priority), then events of that instant at earlier and equal
  // priorities, pushed after it: they come out by (time, priority, insertion) all the same.
  q.push(15.0, 1, &t, 1);
  q.push(15.0, 0, &t, 0);
  q.push(15.0, 1, &t, 2);
  q.push(15.0, 2, &t, 3);
  const EventId cancelled = q.push(15.0, 3, &t, 99);
  q.push(15.0, 3, &t, 4);
  CHECK(q.cancel(cancelled));
  CHECK(q.top_time() == 15.0);
  CHECK(drain_tags(q) == std::vector<uint64_t>{0, 1, 2, 3, 4, 20});

  // Cancelling the first event leaves the next as the first.
  const EventId first = q.push(30.0, 0, &t, 30);
  q.push(31.0, 0, &t, 31);
  CHECK(q.cancel(first));
  CHECK(q.top_time() == 31.0);
  CHECK(q.dead_entries() == 0);
  CHECK(drain_tags(q) == std::vector<uint64_t>{31});
}

TEST_CASE("EventQueue: one event always pending at the earliest time keeps its memory bounded", "[event_queue]") {
  NullTarget t;
  EventQueue q;
  q.push(0.0, 0, &t, 0);
  for (uint64_t i = 1; i <= 100000; ++i) {
    q.push(static_cast<double>(i), 0, &t, i);
    REQUIRE(q.pop().tag == i - 1);
  }
  CHECK(q.size() == 1);
  CHECK(q.memory_bytes() < 4096);
}

TEST_CASE("EventQueue shrink_to_fit releases the lane's burst too", "[event_queue]") {
  // Events pushed in time order onto an empty queue all go to the lane (each is the earliest
  // yet and after the lane's last); once they ran, shrink_to_fit gives their memory back.
  NullTarget t;
  EventQueue q;
  for (uint64_t i = 0; i < 4096; ++i) q.push(static_cast<double>(i), 0, &t, i);
  const std::size_t full = q.memory_bytes();
  for (uint64_t i = 0; i < 4095; ++i) REQUIRE(q.pop().tag == i);
  q.shrink_to_fit();
  // The slots stay (their free list spans them); the lane's 4,096 keys of 16 bytes go.
  CHECK(q.memory_bytes() <= full - 4000 * 16);
  CHECK(q.pop().tag == 4095);
  CHECK(q.empty());
}
