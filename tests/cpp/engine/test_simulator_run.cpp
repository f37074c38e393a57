// Simulator: run(until) and the clock, stop(), step(), events scheduled from events, errors.
#include <catch2/catch.hpp>

#include <cmath>
#include <cstdint>
#include <limits>
#include <stdexcept>
#include <utility>
#include <vector>

#include "engine_test_support.hpp"
#include "sim/engine/simulator.hpp"

using namespace cs::engine;
using namespace cs::engine::test;

TEST_CASE("run(until) runs events up to and including until, then sets the clock",
          "[simulator][run]") {
  Simulator sim;
  Log log(sim);
  sim.schedule_at(1.0, log, 1);
  sim.schedule_at(2.0, log, 2);
  sim.schedule_at(3.0, log, 3);
  sim.run(2.0);
  CHECK(log.seen == std::vector<std::pair<Time, uint64_t>>{{1.0, 1}, {2.0, 2}});
  CHECK(sim.now() == 2.0);
  sim.run(2.5);
  CHECK(sim.now() == 2.5);
  CHECK(log.seen.size() == 2);
  CHECK(sim.pending() == 1);
  sim.run();
  CHECK(sim.now() == 3.0);
  CHECK(sim.events_processed() == 3);
  CHECK(sim.pending() == 0);
}

TEST_CASE("run(until) on an empty queue advances the clock; never backwards", "[simulator][run]") {
  Simulator sim;
  sim.run(10.0);
  CHECK(sim.now() == 10.0);
  sim.run(5.0);  // earlier than now: nothing happens
  CHECK(sim.now() == 10.0);
  sim.run();  // kForever: the clock stays at the last event
  CHECK(sim.now() == 10.0);
  CHECK_THROWS_AS(sim.run(std::numeric_limits<double>::quiet_NaN()), std::invalid_argument);
}

TEST_CASE("A loop of run(now + dt) always makes progress", "[simulator][run]") {
  Simulator sim;
  Log log(sim);
  sim.schedule_at(0.35, log, 1);
  int chunks = 0;
  while (sim.now() < 1.0 && chunks < 100) {
    sim.run(sim.now() + 0.125);  // exact in binary: exactly 8 chunks
    ++chunks;
  }
  CHECK(chunks == 8);
  CHECK(sim.now() == 1.0);
  CHECK(log.seen.size() == 1);
}

TEST_CASE("stop() makes run return after the current event", "[simulator][stop]") {
  Simulator sim;
  Log log(sim);
  sim.schedule_at(1.0, [&] { sim.stop(); });
  sim.schedule_at(1.0, log, 2);
  sim.schedule_at(5.0, log, 3);
  sim.run(10.0);
  CHECK(sim.now() == 1.0);  // not advanced to 10: stopped
  CHECK(log.seen.empty());
  CHECK(sim.pending() == 2);
  sim.run(10.0);  // a new run resumes
  CHECK(log.seen.size() == 2);
  CHECK(sim.now() == 10.0);
}

TEST_CASE("stop() before run does not stop the next run", "[simulator][stop]") {
  Simulator sim;
  Log log(sim);
  sim.schedule_at(1.0, log, 1);
  sim.stop();
  sim.run();
  CHECK(log.seen.size() == 1);
}

TEST_CASE("step() runs one event at a time", "[simulator][step]") {
  Simulator sim;
  Log log(sim);
  CHECK_FALSE(sim.step());
  sim.schedule_at(2.0, log, 2);
  sim.schedule_at(1.0, log, 1);
  CHECK(sim.step());
  CHECK(sim.now() == 1.0);
  CHECK(sim.step());
  CHECK(sim.now() == 2.0);
  CHECK_FALSE(sim.step());
  CHECK(sim.events_processed() == 2);
}

TEST_CASE("step_until(t) runs the next event only when it is not after t; the clock stays", "[simulator][step]") {
  Simulator sim;
  Log log(sim);
  CHECK_FALSE(sim.step_until(kForever));
  sim.schedule_at(2.0, log, 2);
  sim.schedule_at(1.0, log, 1);
  CHECK_FALSE(sim.step_until(0.5));
  CHECK(sim.now() == 0.0);  // not moved to until, unlike run(until)
  CHECK(sim.step_until(1.0));
  CHECK(sim.now() == 1.0);
  CHECK_FALSE(sim.step_until(1.5));
  CHECK(sim.now() == 1.0);
  CHECK(sim.pending() == 1);
  CHECK_THROWS_AS(sim.step_until(std::numeric_limits<double>::quiet_NaN()), std::invalid_argument);
  CHECK(sim.step_until(2.0));
  CHECK(log.seen == std::vector<std::pair<Time, uint64_t>>{{1.0, 1}, {2.0, 2}});
  CHECK(sim.events_processed() == 2);
  int caught = 0;
  sim.schedule_at(3.0, [&] {
    try {
      sim.step_until(kForever);
    } catch (const std::logic_error&) {
      ++caught;
    }
  });
  CHECK(sim.step_until(3.0));
  CHECK(caught == 1);
}

TEST_CASE("Events scheduled from events run in order, ties FIFO", "[simulator][nested]") {
  Simulator sim;
  std::vector<int> order;
  sim.schedule_at(1.0, [&] {
    order.push_back(1);
    sim.schedule_in(0.0, [&] { order.push_back(3); });  // same time, after the queued one
    sim.schedule_in(0.0, [&] { order.push_back(5); }, /*priority=*/1);
    sim.schedule_in(0.5, [&] {
      order.push_back(6);
      CHECK(sim.now() == 1.5);
    });
    sim.schedule_in(0.0, [&] { order.push_back(4); });
  });
  sim.schedule_at(1.0, [&] { order.push_back(2); });
  sim.schedule_at(1.0, [&] { order.push_back(0); }, /*priority=*/-1);
  sim.run();
  CHECK(order == std::vector<int>{0, 1, 2, 3, 4, 5, 6});
  CHECK(sim.now() == 1.5);
}

TEST_CASE("Scheduling in the past or at a non-finite time throws", "[simulator][errors]") {
  Simulator sim;
  Log log(sim);
  sim.run(5.0);
  CHECK_THROWS_AS(sim.schedule_at(4.0, log, 0), std::logic_error);
  CHECK_THROWS_AS(sim.schedule_in(-1e-9, log, 0), std::logic_error);
  CHECK_THROWS_AS(sim.schedule_at(std::numeric_limits<double>::quiet_NaN(), log, 0), std::logic_error);
  CHECK_THROWS_AS(sim.schedule_at(kForever, log, 0), std::logic_error);
  CHECK_THROWS_AS(sim.schedule_at(4.0, [] {}), std::logic_error);
  CHECK_THROWS_AS(sim.schedule_at(6.0, std::function<void()>{}), std::invalid_argument);
  CHECK_THROWS_AS(sim.schedule_at(6.0, log, 0, 1000), std::out_of_range);
  CHECK(sim.pending() == 0);
  sim.schedule_at(5.0, log, 1);  // now itself is fine
  sim.run();
  CHECK(log.seen.size() == 1);
}

TEST_CASE("run() and step() cannot be called from inside an event", "[simulator][errors]") {
  Simulator sim;
  int caught = 0;
  sim.schedule_at(1.0, [&] {
    try {
      sim.run();
    } catch (const std::logic_error&) {
      ++caught;
    }
    try {
      sim.step();
    } catch (const std::logic_error&) {
      ++caught;
    }
  });
  sim.run();
  CHECK(caught == 2);
}

TEST_CASE("An exception from a handler propagates and leaves the simulator usable",
          "[simulator][errors]") {
  Simulator sim;
  Log log(sim);
  sim.schedule_at(1.0, [] { throw std::runtime_error("model fault"); });
  sim.schedule_at(2.0, log, 2);
  CHECK_THROWS_AS(sim.run(), std::runtime_error);
  CHECK(sim.now() == 1.0);
  sim.run();
  CHECK(log.seen.size() == 1);
  CHECK(sim.now() == 2.0);
}
