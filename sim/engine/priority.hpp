#pragma once
// The event priorities every model uses, in one place: among events at the same simulated
// time, lower values run first (simulator.hpp), and each model's place in an instant is a
// role, not a number picked per file.
//
//   act      what workloads do: start and cancel work, arrivals, timers (the default)
//   resolve  models that settle what this instant's actions changed, once for all of them
//            (the flow model admits and completes flows and re-solves rates)
//   settle   models that build on what `resolve` settled (the analytical model's stage
//            fluid re-solves after every flow and workload event of the instant)
//   observe  samplers and recorders: they see the instant's final state
//
// A model that acts from inside a later role's event (a completion callback starting new
// work) needs no event of its own at that instant: each model re-solves after its callbacks.
namespace cs::engine::priority {

inline constexpr int act = 0;
inline constexpr int resolve = 1;
inline constexpr int settle = 2;
inline constexpr int observe = 3;

}  // namespace cs::engine::priority
