#include "cli/interrupt.hpp"

#include <atomic>
#include <csignal>

namespace cs::cli {
namespace {

// The one piece of process state a signal may touch: a lock-free flag (async-signal-safe).
std::atomic<bool> g_interrupted{false};
static_assert(std::atomic<bool>::is_always_lock_free);

extern "C" void on_signal(int signal) {
  if (g_interrupted.exchange(true)) {
    // The second signal: the default action, now.
    std::signal(signal, SIG_DFL);
    std::raise(signal);
  }
}

}  // namespace

void install_interrupt_handler() {
  std::signal(SIGINT, on_signal);
  std::signal(SIGTERM, on_signal);
}

bool interrupt_requested() { return g_interrupted.load(std::memory_order_relaxed); }

std::function<bool()> interrupt_check() {
  return [] { return interrupt_requested(); };
}

}  // namespace cs::cli
