// RequestsById: the requests in flight by id, a window of consecutive ids beside a hash map,
// against std::map on the same operations (consecutive ids finishing out of order, ids out of
// sequence, a duplicate, a request stuck while many after it finish: the window compacts; the
// ring's growth and wrap-around, ids that come again, gaps).
#include <catch2/catch.hpp>

#include <algorithm>
#include <cstddef>
#include <cstdint>
#include <map>
#include <vector>

#include "sim/engine/random.hpp"
#include "sim/serving/requests_by_id.hpp"

using cs::serving::RequestsById;

namespace {

std::map<uint64_t, int> contents(const RequestsById<int>& held) {
  std::map<uint64_t, int> out;
  held.for_each([&out](uint64_t id, int v) { CHECK(out.emplace(id, v).second); });
  return out;
}

}  // namespace

TEST_CASE("Requests by id hold what a map holds, in and out of their window", "[serving]") {
  RequestsById<int> held;
  std::map<uint64_t, int> expected;
  const auto add = [&](uint64_t id, int v) {
    held.emplace(id, v);
    expected.emplace(id, v);
  };
  const auto erase = [&](uint64_t id) {
    held.erase(id);
    expected.erase(id);
  };
  add(10, 1);
  add(11, 2);
  add(12, 3);
  add(5, 4);    // before the window: the map
  add(40, 5);   // past it: the map
  add(11, 99);  // held already: kept as it was
  CHECK(*held.find(11) == 2);
  erase(11);    // in the middle of the window
  CHECK(held.find(11) == nullptr);
  erase(10);    // the front: 12 is the front now
  add(13, 6);
  erase(5);
  erase(7);     // never held
  CHECK(held.size() == expected.size());
  CHECK(contents(held) == expected);
  *held.find(13) = 7;
  expected[13] = 7;
  CHECK(contents(held) == expected);

  // One request stuck while 300,000 after it come and go, finishing out of order.
  cs::engine::RandomStream rng(3);
  add(1000, 0);
  std::vector<uint64_t> open;
  for (uint64_t id = 1001; id < 301001; ++id) {
    add(id, static_cast<int>(id % 1000));
    open.push_back(id);
    if (open.size() > 50) {
      const std::size_t k = static_cast<std::size_t>(rng.uniform_int(uint64_t{open.size()}));
      erase(open[k]);
      open[k] = open.back();
      open.pop_back();
    }
  }
  CHECK(held.size() == expected.size());
  CHECK(contents(held) == expected);
  for (const uint64_t id : open) CHECK(*held.find(id) == static_cast<int>(id % 1000));
  CHECK(*held.find(1000) == 0);
}

TEST_CASE("A request stuck at the window's front does not keep the window growing", "[serving]") {
  // The ids in sequence from the start (the case above sends them to the map once an id out of
  // sequence is held): the stuck request is the window's front while 300,000 after it come and
  // go; the window compacts and stays within its bound, and holds what a map holds.
  RequestsById<int> held;
  std::map<uint64_t, int> expected;
  cs::engine::RandomStream rng(5);
  std::vector<uint64_t> open;
  std::size_t most = 0;
  for (uint64_t id = 0; id < 300000; ++id) {
    held.emplace(id, static_cast<int>(id % 977));
    expected.emplace(id, static_cast<int>(id % 977));
    if (id > 0) open.push_back(id);  // id 0 never finishes
    if (open.size() > 50) {
      const std::size_t k = static_cast<std::size_t>(rng.uniform_int(uint64_t{open.size()}));
      held.erase(open[k]);
      expected.erase(open[k]);
      open[k] = open.back();
      open.pop_back();
    }
    most = std::max(most, held.window_entries());
  }
  CHECK(most <= (std::size_t{1} << 16) + 1);
  CHECK(held.window_entries() > 0);  // the ids after the compaction in the window again
  CHECK(held.size() == expected.size());
  CHECK(contents(held) == expected);
  CHECK(*held.find(0) == 0);
}

TEST_CASE("Requests by id hold what a map holds through the ring's growth, wrap-around, reused ids and gaps",
          "[serving]") {
  // Random operations against std::map: the window starts at an id that is not a multiple of
  // the ring's size (so it grows while wrapped round), requests stay in flight a long or a
  // short time, an id finished long ago comes again, ids jump ahead by large gaps, and ids
  // past the window or never held are looked up and erased.
  RequestsById<int> held;
  std::map<uint64_t, int> expected;
  cs::engine::RandomStream rng(17);
  std::vector<uint64_t> open;
  uint64_t next = 13;
  std::size_t most_open = 0;
  for (int step = 0; step < 200000; ++step) {
    const uint64_t roll = rng.uniform_int(uint64_t{1000});
    if (roll < 495 || open.empty()) {  // the next arrival
      const int v = static_cast<int>(next % 7919);
      held.emplace(next, v);
      expected.emplace(next, v);
      open.push_back(next++);
    } else if (roll < 990) {  // a finish, the oldest more often than not in a burst
      const std::size_t k = roll < 700 ? 0 : static_cast<std::size_t>(rng.uniform_int(uint64_t{open.size()}));
      held.erase(open[k]);
      expected.erase(open[k]);
      open.erase(open.begin() + static_cast<std::ptrdiff_t>(k));
    } else if (roll < 994) {  // an id held before comes again (finished or still in flight)
      const uint64_t id = 13 + rng.uniform_int(next - 13);
      held.emplace(id, -1);
      if (expected.emplace(id, -1).second) open.push_back(id);
    } else if (roll < 997) {  // a gap: ids skipped
      next += 1 + rng.uniform_int(uint64_t{1} << 20);
    } else {  // ids never held, or not any more: nothing to find or erase
      const uint64_t id = next + 1 + rng.uniform_int(uint64_t{1000});
      CHECK(held.find(id) == nullptr);
      held.erase(id);
    }
    most_open = std::max(most_open, open.size());
    if (step % 20000 == 0) {
      CHECK(held.size() == expected.size());
      CHECK(contents(held) == expected);
    }
  }
  CHECK(most_open > 100);  // the ring grew several times
  CHECK(held.size() == expected.size());
  CHECK(contents(held) == expected);
  for (const auto& [id, v] : expected) {
    const int* found = held.find(id);
    REQUIRE(found != nullptr);
    CHECK(*found == v);
  }
}
