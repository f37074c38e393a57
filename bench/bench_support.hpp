#pragma once
// Shared by the benchmarks: what they measure themselves with (this thread's CPU time, on a
// shared machine steadier than wall time, and the process's peak resident set) and their
// command line, [--quick] [GPUs...].
#include <sys/resource.h>
#include <time.h>

#include <cstdlib>
#include <cstring>
#include <vector>

namespace cs::bench {

inline double thread_cpu_s() {
  timespec ts{};
  clock_gettime(CLOCK_THREAD_CPUTIME_ID, &ts);
  return static_cast<double>(ts.tv_sec) + 1e-9 * static_cast<double>(ts.tv_nsec);
}

inline double peak_rss_mb() {
  rusage u{};
  getrusage(RUSAGE_SELF, &u);
  return static_cast<double>(u.ru_maxrss) / 1024.0;
}

struct BenchArgs {
  bool quick = false;
  std::vector<int> sizes;  // GPU counts given; empty: the benchmark's own
};

inline BenchArgs parse_bench_args(int argc, char** argv) {
  BenchArgs a;
  for (int i = 1; i < argc; ++i) {
    if (std::strcmp(argv[i], "--quick") == 0)
      a.quick = true;
    else
      a.sizes.push_back(std::atoi(argv[i]));
  }
  return a;
}

}  // namespace cs::bench
