#pragma once
// What benchmarks share: CPU time (the machine may be shared: time spent descheduled says
// nothing about the code; cache pollution by neighbours still shows), medians, and the
// `--quick` flag.
#include <algorithm>
#include <cstdio>
#include <cstring>
#include <ctime>
#include <optional>
#include <vector>

namespace cs::bench {

// CPU seconds of the whole process (CLOCK_PROCESS_CPUTIME_ID) or of the calling thread.
inline double process_cpu_seconds() {
  timespec ts{};
  clock_gettime(CLOCK_PROCESS_CPUTIME_ID, &ts);
  return static_cast<double>(ts.tv_sec) + 1e-9 * static_cast<double>(ts.tv_nsec);
}
inline double thread_cpu_seconds() {
  timespec ts{};
  clock_gettime(CLOCK_THREAD_CPUTIME_ID, &ts);
  return static_cast<double>(ts.tv_sec) + 1e-9 * static_cast<double>(ts.tv_nsec);
}

// The upper median of a non-empty sample.
inline double median(std::vector<double> v) {
  std::sort(v.begin(), v.end());
  return v[v.size() / 2];
}

// True with --quick, false with no argument; nullopt (after printing the usage) otherwise.
inline std::optional<bool> parse_quick(int argc, char** argv) {
  bool quick = false;
  for (int i = 1; i < argc; ++i) {
    if (std::strcmp(argv[i], "--quick") == 0) {
      quick = true;
    } else {
      std::fprintf(stderr, "usage: %s [--quick]\n", argv[0]);
      return std::nullopt;
    }
  }
  return quick;
}

}  // namespace cs::bench
