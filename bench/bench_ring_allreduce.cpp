// Ring all-reduce of 1 GiB over N GPUs (one GPU per node, one 400 Gb/s NIC each) on a 2-tier
// non-blocking fat-tree with D-mod-K routing, full max-min flow model. Reports the median wall
// time over repetitions, events, flows, peak memory, and the simulated time against the
// uncontended closed form 2(N-1)(alpha + S/(N B)).
#include <sys/resource.h>
#include <time.h>

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <numeric>
#include <vector>

#include "bench/bench_util.hpp"
#include "sim/engine/simulator.hpp"
#include "sim/network/network.hpp"
#include "sim/network/ring_collective.hpp"
#include "topology/topology.hpp"

namespace {

struct Sample {
  double wall_s, cpu_s, sim_s, build_s;
  uint64_t events, flows, recomputations;
};

// CPU time of this thread: on a shared machine it is steadier than wall time.
double thread_cpu_s() {
  timespec ts{};
  clock_gettime(CLOCK_THREAD_CPUTIME_ID, &ts);
  return static_cast<double>(ts.tv_sec) + 1e-9 * static_cast<double>(ts.tv_nsec);
}

Sample run_once(int nodes, double bytes) {
  using clock = std::chrono::steady_clock;
  const auto t0 = clock::now();
  const double cpu0 = thread_cpu_s();
  cs::topo::TopologyParams p;
  p.kind = cs::topo::TopologyKind::fat_tree;
  p.nodes = nodes;
  p.node.gpus = 1;
  p.node.nics = 1;
  p.switch_radix = 128;
  const cs::topo::Topology topology = cs::topo::build_topology(p);
  cs::engine::Simulator sim(1);
  cs::net::Network network(sim, topology, cs::topo::RoutingKind::dmodk);
  std::vector<int> ranks(nodes);
  std::iota(ranks.begin(), ranks.end(), 0);
  cs::net::RingAllReduce ring(network, ranks, bytes, nullptr);
  const auto t1 = clock::now();
  ring.start();
  sim.run();
  const auto t2 = clock::now();
  if (!ring.done()) std::fprintf(stderr, "ring did not finish\n");
  return {std::chrono::duration<double>(t2 - t0).count(), thread_cpu_s() - cpu0, sim.now(),
          std::chrono::duration<double>(t1 - t0).count(), sim.events_processed(),
          network.flows().stats().flows_started, network.flows().stats().recomputations};
}

double peak_rss_mb() {
  rusage u{};
  getrusage(RUSAGE_SELF, &u);
  return static_cast<double>(u.ru_maxrss) / 1024.0;
}

}  // namespace

int main(int argc, char** argv) {
  const bool quick = argc > 1 && std::strcmp(argv[1], "--quick") == 0;
  std::vector<int> sizes{1024, 4096};
  if (argc > 2) sizes = {std::atoi(argv[2])};
  const double bytes = 1024.0 * 1024 * 1024;
  std::printf("ring all-reduce, 1 GiB, 1 GPU/node, 2-tier non-blocking fat-tree (radix 128), "
              "D-mod-K, flow model\n");
  std::printf("%6s %5s %13s %12s %10s %10s %10s %12s %14s %8s\n", "GPUs", "reps",
              "median_wall_s", "median_cpu_s", "build_s", "events", "flows", "sim_time_s",
              "closed_form_s", "rss_MB");
  for (int n : sizes) {
    const int reps = quick ? 1 : (n <= 1024 ? 5 : 3);
    std::vector<Sample> samples;
    for (int r = 0; r < reps; ++r) samples.push_back(run_once(n, bytes));
    std::sort(samples.begin(), samples.end(),
              [](const Sample& a, const Sample& b) { return a.wall_s < b.wall_s; });
    const Sample& med = samples[samples.size() / 2];
    // alpha: the slowest ring hop crosses the spine: GPU-NIC PCIe (0.5us) x2 + 4 fabric links
    // (0.5us); B: the 400 Gb/s NIC.
    const double alpha = 2 * 0.5e-6 + 4 * 0.5e-6, B = 50e9;
    const double closed = 2.0 * (n - 1) * (alpha + bytes / n / B);
    std::vector<double> cpu;
    for (const Sample& s : samples) cpu.push_back(s.cpu_s);
    std::sort(cpu.begin(), cpu.end());
    std::printf("%6d %5d %13.3f %12.3f %10.3f %10llu %10llu %12.6f %14.6f %8.0f\n", n, reps,
                med.wall_s, cpu[cpu.size() / 2], med.build_s,
                static_cast<unsigned long long>(med.events),
                static_cast<unsigned long long>(med.flows), med.sim_s, closed, peak_rss_mb());
    char name[64];
    std::snprintf(name, sizeof name, "ring_allreduce/gpus_%d/cpu", n);
    cs::bench::figure(name, cpu[cpu.size() / 2], "s", cs::bench::Better::lower);
  }
  return 0;
}
