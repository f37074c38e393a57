#pragma once
// Runs a simulator until a model says it is done, leaving the clock at the event that finished
// it (events after it, such as a pool's next failure, are not run), or until `until`, leaving
// the clock there. Simulator::run(until) alone would move the clock on to `until` after the
// model is done, so this steps one event at a time.
#include <cstdint>

#include "sim/engine/simulator.hpp"

namespace cs::fleet {

// Polls the simulator's interrupt check as run() does (every 4,096 events, before an event
// that runs): a jobs run or a training run stepped here stops on Ctrl-C too.
template <class Done>
void run_until_done(engine::Simulator& sim, Done done, engine::Time until) {
  for (uint64_t steps = 1; !done(); ++steps) {
    if (steps % 4096 == 0) {
      if (sim.queue().top_time() > until) break;
      sim.poll_interrupt();
    }
    if (!sim.step_until(until)) break;
  }
  if (!done()) sim.run(until);
}

}  // namespace cs::fleet
