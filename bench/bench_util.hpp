#pragma once
// What every benchmark needs: CPU time of this thread (steadier than wall time on a shared
// machine), peak RSS, medians, a case in a child process (so its peak RSS is its own), the
// DGX-like fat-tree the network benchmarks measure on, and `figure`: one headline number in a
// line that scripts/bench_compare.py reads (make bench compares it with bench/baseline.json).
#include <sys/resource.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include <algorithm>
#include <cctype>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <exception>
#include <functional>
#include <optional>
#include <string>
#include <vector>

#include "topology/params.hpp"

namespace cs::bench {

inline double thread_cpu_s() {
  timespec ts{};
  clock_gettime(CLOCK_THREAD_CPUTIME_ID, &ts);
  return static_cast<double>(ts.tv_sec) + 1e-9 * static_cast<double>(ts.tv_nsec);
}

// CPU seconds of the whole process (all its threads: a TBB benchmark).
inline double process_cpu_s() {
  timespec ts{};
  clock_gettime(CLOCK_PROCESS_CPUTIME_ID, &ts);
  return static_cast<double>(ts.tv_sec) + 1e-9 * static_cast<double>(ts.tv_nsec);
}

// Wall seconds (a parallel stage: what the user waits).
inline double wall_s() {
  timespec ts{};
  clock_gettime(CLOCK_MONOTONIC, &ts);
  return static_cast<double>(ts.tv_sec) + 1e-9 * static_cast<double>(ts.tv_nsec);
}

inline double peak_rss_mb() {
  rusage u{};
  getrusage(RUSAGE_SELF, &u);
  return static_cast<double>(u.ru_maxrss) / 1024.0;
}

// Which way a figure improves.
enum class Better { lower, higher };

// Prints "figure: <name> = <value> <unit> (<lower|higher> is better)". The baseline is keyed
// by the name: characters other than letters, digits and "_/.-" become '_' (runs of them one).
inline void figure(const std::string& name, double value, const char* unit, Better better) {
  std::string key;
  for (char c : name) {
    const bool keep = std::isalnum(static_cast<unsigned char>(c)) || c == '_' || c == '/' || c == '.' || c == '-';
    if (keep)
      key += c;
    else if (!key.empty() && key.back() != '_')
      key += '_';
  }
  while (!key.empty() && key.back() == '_') key.pop_back();
  std::printf("figure: %s = %.6g %s (%s is better)\n", key.c_str(), value, unit,
              better == Better::lower ? "lower" : "higher");
}

inline double median(std::vector<double> v) {
  std::sort(v.begin(), v.end());
  return v.empty() ? 0.0 : v[v.size() / 2];
}

// Runs `body` in a child process (its own peak RSS); reports a crash or an exception.
// Returns false when the child failed.
inline bool in_child(const std::function<void()>& body) {
  std::fflush(stdout);
  const pid_t pid = fork();
  if (pid == 0) {
    int code = 0;
    try {
      body();
    } catch (const std::exception& e) {
      std::printf("  error: %s\n", e.what());
      code = 1;
    }
    std::fflush(stdout);
    _exit(code);
  }
  int status = 0;
  waitpid(pid, &status, 0);
  if (!WIFEXITED(status)) std::printf("  child process died (status %d)\n", status);
  return WIFEXITED(status) && WEXITSTATUS(status) == 0;
}

// DGX H100-like nodes (8 GPUs on a 370.8 GB/s NVSwitch, 8 x 400 Gb/s NICs) on a
// rail-optimized non-blocking fat-tree (radix 64, 400 Gb/s, 0.5 us links; 3 tiers where 2
// are not enough). Spelled out rather than left to the defaults, so the benchmarks keep
// measuring the same cluster (scenarios/fat_tree_allreduce.json at scale) if defaults change.
inline topo::TopologyParams dgx_fat_tree(int gpus) {
  constexpr int kGpusPerNode = 8;
  topo::TopologyParams p;
  p.kind = topo::TopologyKind::fat_tree;
  p.nodes = gpus / kGpusPerNode;
  p.node.gpus = kGpusPerNode;
  p.node.fabric = topo::NodeFabric::nvswitch;
  p.node.gpu_bandwidth_Bps = 18 * 20.6e9;  // the catalog's H100 (NCCL's NVLink rate)
  p.node.gpu_latency_s = 0.3e-6;
  p.node.nics = 8;
  p.node.nic_bandwidth_Bps = 50e9;
  p.link_bandwidth_Bps = 50e9;
  p.link_latency_s = 0.5e-6;
  p.tiers = 3;
  p.switch_radix = 64;
  p.oversubscription = 1.0;
  p.rail_optimized = true;
  return p;
}

// True with --quick, false with no argument; nullopt (after printing the usage) otherwise: for
// benchmarks that take no sizes.
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

// The benchmarks' command line: [--quick] [GPUs...].
struct BenchArgs {
  bool quick = false;
  std::vector<int> sizes;  // GPU counts given; empty: the benchmark's own
};

// nullopt (after printing the usage line) when an argument is neither --quick nor a GPU count
// >= 1: `bench_training --help` used to run a case of 0 GPUs.
inline std::optional<BenchArgs> parse_bench_args(int argc, char** argv) {
  BenchArgs a;
  for (int i = 1; i < argc; ++i) {
    if (std::strcmp(argv[i], "--quick") == 0) {
      a.quick = true;
      continue;
    }
    char* end = nullptr;
    const long gpus = std::strtol(argv[i], &end, 10);
    if (end == argv[i] || *end != '\0' || gpus < 1 || gpus > 1L << 30) {
      std::fprintf(stderr, "usage: %s [--quick] [GPUs...]\n", argv[0]);
      return std::nullopt;
    }
    a.sizes.push_back(static_cast<int>(gpus));
  }
  return a;
}

}  // namespace cs::bench
