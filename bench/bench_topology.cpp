// Build, route and report on ~16K-GPU fabrics: a 3-tier rail-optimized fat-tree (2,048 nodes
// x 8 GPUs, 8 NICs, radix 64), a dragonfly of 2,048 such nodes (a=16, p=8, h=8, g=16) and a
// 16x16x16 torus (4,096 nodes x 4 GPUs). Each case runs in its own process so its peak RSS is
// its own; times are medians over repetitions: build, 10,000 routes between random ranks
// (the family's default routing), the `topo` report (bisection by the family's one method).
#include <sys/resource.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <random>
#include <vector>

#include "bench/bench_util.hpp"
#include "sim/scenario/prices.hpp"
#include "topology/report.hpp"
#include "topology/routing.hpp"

namespace {

using namespace cs::topo;
using clock_type = std::chrono::steady_clock;

struct Case {
  const char* name;
  TopologyParams params;
  RoutingKind routing;
};

std::vector<Case> cases() {
  std::vector<Case> out;
  TopologyParams f;
  f.kind = TopologyKind::fat_tree;
  f.nodes = 2048;
  f.tiers = 3;
  f.switch_radix = 64;
  f.rail_optimized = true;
  out.push_back({"fat_tree 3-tier rail-optimized 2048x8", f, RoutingKind::dmodk});

  TopologyParams d;
  d.kind = TopologyKind::dragonfly;
  d.routers_per_group = 16;
  d.nodes_per_router = 8;
  d.global_links_per_router = 8;
  d.groups = 16;
  d.nodes = 16 * 8 * 16;
  out.push_back({"dragonfly a16 p8 h8 g16 2048x8", d, RoutingKind::minimal});

  TopologyParams t;
  t.kind = TopologyKind::torus;
  t.dims = {16, 16, 16};
  t.nodes = 4096;
  t.node.gpus = 4;
  t.node.nics = 4;
  out.push_back({"torus 16x16x16 4096x4", t, RoutingKind::dor});
  return out;
}

double seconds(clock_type::time_point a, clock_type::time_point b) {
  return std::chrono::duration<double>(b - a).count();
}

double median(std::vector<double> v) {
  std::sort(v.begin(), v.end());
  return v[v.size() / 2];
}

void run_case(const Case& c, int reps) {
  const PriceTable prices = cs::scenario::load_prices(nlohmann::json::object());
  std::vector<double> build_s, route_s, report_s, total_s;
  TopologyReport last;
  for (int rep = 0; rep < reps; ++rep) {
    const auto t0 = clock_type::now();
    const Topology topology = build_topology(c.params);
    const auto t1 = clock_type::now();
    auto router = make_router(topology, c.routing, 1);
    std::mt19937_64 rng(7);
    std::uniform_int_distribution<int> rank(0, topology.ranks() - 1);
    std::size_t hops = 0;
    for (int i = 0; i < 10000; ++i) hops += router->route(rank(rng), rank(rng), 0).links.size();
    const auto t2 = clock_type::now();
    last = make_report(topology, c.params, prices);
    const auto t3 = clock_type::now();
    if (hops == 0) std::fprintf(stderr, "no hops?\n");
    build_s.push_back(seconds(t0, t1));
    route_s.push_back(seconds(t1, t2));
    report_s.push_back(seconds(t2, t3));
    total_s.push_back(seconds(t0, t3));
  }
  rusage usage{};
  getrusage(RUSAGE_SELF, &usage);
  std::printf("%-40s gpus %lld switches %lld links %lld | build %.3f s, 10k routes %.3f s, "
              "report %.3f s, total %.3f s (median of %d) | peak RSS %.0f MiB | diameter %d (%s), "
              "bisection %.4g TB/s (%s)\n",
              c.name, static_cast<long long>(last.gpus), static_cast<long long>(last.switches),
              static_cast<long long>(last.links), median(build_s), median(route_s),
              median(report_s), median(total_s), reps,
              static_cast<double>(usage.ru_maxrss) / 1024.0, last.diameter_hops,
              last.diameter_method.c_str(), last.bisection_Bps / 1e12,
              last.bisection_method.c_str());
  cs::bench::figure(std::string("topology/") + c.name + "/total", median(total_s), "s", cs::bench::Better::lower);
  std::fflush(stdout);
}

}  // namespace

int main(int argc, char** argv) {
  const int reps = argc > 1 ? std::max(1, std::atoi(argv[1])) : 5;
  int status_all = 0;
  for (const Case& c : cases()) {
    const pid_t pid = fork();
    if (pid == 0) {
      run_case(c, reps);
      std::_Exit(0);
    }
    int status = 0;
    waitpid(pid, &status, 0);
    if (!WIFEXITED(status) || WEXITSTATUS(status) != 0) status_all = 1;
  }
  return status_all;
}
