// EventQueue: when the packed insertion sequence runs out, live entries are renumbered in
// order, and FIFO among ties survives it.
#include <catch2/catch.hpp>

#include <cstdint>
#include <stdexcept>
#include <vector>

#include "engine_test_support.hpp"
#include "sim/engine/event_queue.hpp"

using namespace cs::engine;
using namespace cs::engine::test;

TEST_CASE("Renumbering keeps FIFO among equal times", "[event_queue][renumber]") {
  NullTarget t;
  EventQueue q(/*sequence_limit=*/8);
  // 6 pending at one time, then hold: pop one, push one at the same time. Every push past the
  // 8th sequence number forces a renumbering; the order must stay strictly FIFO.
  uint64_t next_tag = 0;
  for (; next_tag < 6; ++next_tag) q.push(1.0, 0, &t, next_tag);
  uint64_t expected = 0;
  for (int i = 0; i < 1000; ++i) {
    REQUIRE(q.pop().tag == expected++);
    q.push(1.0, 0, &t, next_tag++);
  }
  CHECK(q.renumber_count() > 100);
  while (!q.empty()) REQUIRE(q.pop().tag == expected++);
  CHECK(expected == next_tag);
}

TEST_CASE("Renumbering keeps priorities and discards cancelled entries", "[event_queue][renumber]") {
  NullTarget t;
  EventQueue q(/*sequence_limit=*/16);
  std::vector<EventId> ids;
  for (uint64_t i = 0; i < 10; ++i) ids.push_back(q.push(2.0, static_cast<int>(i % 3) - 1, &t, i));
  for (uint64_t i = 0; i < 10; i += 3) CHECK(q.cancel(ids[i]));  // 0, 3, 6, 9
  for (uint64_t i = 10; i < 20; ++i) q.push(2.0, static_cast<int>(i % 3) - 1, &t, i);
  CHECK(q.renumber_count() >= 1);
  // Handles issued before a renumbering stay valid.
  CHECK(q.contains(ids[1]));
  CHECK_FALSE(q.contains(ids[3]));
  // priority -1 (i % 3 == 0), then 0 (i % 3 == 1), then 1; FIFO inside each
  CHECK(drain_tags(q) == std::vector<uint64_t>{12, 15, 18, 1, 4, 7, 10, 13, 16, 19, 2, 5, 8, 11, 14, 17});
}

TEST_CASE("A sequence limit smaller than the pending count is reported", "[event_queue][renumber]") {
  NullTarget t;
  EventQueue q(/*sequence_limit=*/4);
  for (uint64_t i = 0; i < 4; ++i) q.push(1.0, 0, &t, i);
  CHECK_THROWS_AS(q.push(1.0, 0, &t, 4), std::length_error);
  CHECK(q.size() == 4);  // the failed push changed nothing
  CHECK(q.pop().tag == 0);
  CHECK_THROWS_AS(EventQueue(1), std::invalid_argument);
  CHECK_THROWS_AS(EventQueue(EventQueue::kSequenceLimit + 1), std::invalid_argument);
}
