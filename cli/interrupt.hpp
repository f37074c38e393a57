#pragma once
// Ctrl-C for the `clustersim` command: the first SIGINT (or SIGTERM) asks the running work to
// stop (every simulator polls it: world::RunOptions::interrupted, the plan search's), so that
// the outputs' temporaries and a directory --out created are removed on the way out and the
// command exits 130 with "interrupted"; a second signal ends the process at once.
#include <functional>

namespace cs::cli {

// Installs the handlers (once, from main).
void install_interrupt_handler();
// True once a signal came; what RunOptions::interrupted and PlanSearchOptions::interrupted poll.
bool interrupt_requested();
// interrupt_requested, as the callback those options take.
std::function<bool()> interrupt_check();

}  // namespace cs::cli
