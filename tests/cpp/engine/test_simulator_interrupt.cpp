// Simulator: the interrupt check (a binding's Ctrl-C), polled every N events, per simulator.
#include <catch2/catch.hpp>

#include <cstdint>

#include "sim/engine/simulator.hpp"

using namespace cs::engine;

namespace {

// Reschedules itself forever, one event per simulated second.
struct Forever final : EventTarget {
  explicit Forever(Simulator& s) : sim(s) {}
  void on_event(uint64_t) override { sim.schedule_in(1.0, *this); }
  Simulator& sim;
};

}  // namespace

TEST_CASE("run() stops with Interrupted when the check says so, polled every N events", "[simulator][interrupt]") {
  Simulator sim;
  Forever f(sim);
  sim.schedule_at(0.0, f);
  uint64_t calls = 0;
  sim.set_interrupt_check([&] { return ++calls == 3; }, 100);
  REQUIRE_THROWS_AS(sim.run(), Interrupted);
  CHECK(calls == 3);
  CHECK(sim.events_processed() == 299);  // polled before events 100, 200 and 300
  // Without a check the same simulator runs on (up to a limit here).
  sim.set_interrupt_check({});
  sim.run(1000.0);
  CHECK(sim.now() == 1000.0);
}

TEST_CASE("the interrupt check belongs to one simulator", "[simulator][interrupt]") {
  Simulator a, b;
  Forever fa(a), fb(b);
  a.schedule_at(0.0, fa);
  b.schedule_at(0.0, fb);
  a.set_interrupt_check([] { return true; }, 1);
  CHECK_THROWS_AS(a.run(), Interrupted);
  b.run(50.0);
  CHECK(b.events_processed() == 51);
  CHECK_THROWS_AS(a.set_interrupt_check([] { return false; }, 0), std::invalid_argument);
  CHECK_NOTHROW(b.poll_interrupt());
}
