// Simulator: cancelling target and function events, and handles that went stale.
#include <catch2/catch.hpp>

#include <cstdint>
#include <memory>
#include <vector>

#include "engine_test_support.hpp"
#include "sim/engine/simulator.hpp"

using namespace cs::engine;
using namespace cs::engine::test;

TEST_CASE("Cancelled events never run", "[simulator][cancel]") {
  Simulator sim;
  Counter c;
  const EventId a = sim.schedule_at(1.0, c, 1);
  const EventId b = sim.schedule_at(2.0, c, 2);
  sim.schedule_at(3.0, c, 3);
  CHECK(sim.cancel(b));
  CHECK_FALSE(sim.cancel(b));
  CHECK(sim.pending() == 2);
  sim.run();
  CHECK(c.tags == std::vector<uint64_t>{1, 3});
  CHECK_FALSE(sim.cancel(a));  // already ran
  CHECK_FALSE(sim.cancel(EventId{}));
}

TEST_CASE("Cancelling a function event releases its captures", "[simulator][cancel]") {
  Simulator sim;
  auto token = std::make_shared<int>(42);
  bool ran = false;
  const EventId id = sim.schedule_at(1.0, [token, &ran] { ran = *token == 42; });
  CHECK(token.use_count() == 2);
  CHECK(sim.cancel(id));
  CHECK(token.use_count() == 1);
  sim.run();
  CHECK_FALSE(ran);
}

TEST_CASE("A function event can cancel another, and stale handles stay stale",
          "[simulator][cancel]") {
  Simulator sim;
  std::vector<int> ran;
  EventId victim;
  sim.schedule_at(1.0, [&] {
    ran.push_back(1);
    CHECK(sim.cancel(victim));
  });
  victim = sim.schedule_at(2.0, [&] { ran.push_back(2); });
  sim.schedule_at(3.0, [&] { ran.push_back(3); });
  sim.run();
  CHECK(ran == std::vector<int>{1, 3});
  // The cancelled event's function slot and queue slot are reused by new events; the old
  // handle must not reach them.
  bool later_ran = false;
  sim.schedule_in(1.0, [&] { later_ran = true; });
  CHECK_FALSE(sim.cancel(victim));
  sim.run();
  CHECK(later_ran);
}

TEST_CASE("Function events run once and their slots are recycled", "[simulator][functions]") {
  Simulator sim;
  int count = 0;
  // A chain of 10000 self-rescheduling callables uses one slot at a time.
  std::function<void()> tick = [&] {
    if (++count < 10000) sim.schedule_in(0.001, tick);
  };
  sim.schedule_at(0.0, tick);
  sim.run();
  CHECK(count == 10000);
  CHECK(sim.events_processed() == 10000);
  CHECK(sim.now() == Approx(9.999).epsilon(1e-9));
}
