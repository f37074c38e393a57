// Scale through the scenario layer: staggered flows through one bottleneck (the
// flow model's processor-sharing classes: one completion event per class, not per flow),
// traffic all-to-all on a fat-tree and on a dragonfly, the flow model's direct all-to-all
// collective over 4,096 and 16,384 GPUs (one bulk exchange: flow_exchange.hpp; the latter a
// headline figure), and the analytical model's up to 16,384 GPUs (its pairs streamed on every
// core: wall seconds beside CPU seconds), and its load-aware routings' all-to-all (adaptive at
// 4,096 and 16,384 GPUs, UGAL at 16,384: headline figures). Each case runs in a child process: CPU
// seconds, peak RSS, events. Prints figures only; never fails.
#include <cstdio>
#include <string>
#include <utility>
#include <vector>

#include <nlohmann/json.hpp>

#include "bench_util.hpp"
#include "sim/scenario/load.hpp"
#include "sim/world/run.hpp"

using nlohmann::json;

namespace {

// Runs `doc` and prints its CPU and wall seconds, peak RSS and events; with `figure`, its CPU
// seconds as that headline figure.
void report(const char* what, const json& doc, const char* figure = nullptr) {
  cs::bench::in_child([&] {
    const auto config = cs::scenario::parse_config(doc);
    const double t0 = cs::bench::process_cpu_s(), w0 = cs::bench::wall_s();
    cs::world::RunOptions options;
    options.threads = 1;
    const auto out = cs::world::run_scenario(config, options);
    const double cpu = cs::bench::process_cpu_s() - t0, wall = cs::bench::wall_s() - w0;
    std::printf("%-60s %8.2f s CPU %8.2f s wall %7.0f MB peak RSS %11.0f events\n", what, cpu, wall,
                cs::bench::peak_rss_mb(), out.summary["events"].get<double>());
    if (figure != nullptr) cs::bench::figure(figure, cpu, "s", cs::bench::Better::lower);
  });
}

// n flows of 100 MB from rank 0 to rank 1 of two single-GPU nodes on one switch (50 GB/s), one
// every 10 ns: all n share the one link at once, each starting while the others run.
json staggered(int n) {
  json flows = json::array();
  for (int i = 0; i < n; ++i) flows.push_back({{"src", 0}, {"dst", 1}, {"bytes", 1e8}, {"start", i * 1e-8}});
  return {{"hardware", {{"node", {{"gpus", 1}, {"nics", 1}, {"nic_bandwidth", "50GB/s"}}}}},
          {"topology", {{"kind", "fat_tree"}, {"nodes", 2}, {"switch_radix", 8}}},
          {"workload", {{"kind", "traffic"}, {"pattern", "flows"}, {"flows", flows}}}};
}

json all_to_all(int nodes, const char* routing) {
  return {{"hardware", {{"node", {{"gpus", 1}, {"nics", 1}, {"nic_bandwidth", "50GB/s"}}}}},
          {"topology", {{"kind", "fat_tree"}, {"nodes", nodes}, {"switch_radix", 64}}},
          {"network", {{"routing", routing}}},
          {"workload", {{"kind", "traffic"}, {"pattern", "all_to_all"}, {"bytes", "1MiB"}}}};
}

// A traffic all-to-all of 1 MiB per pair over a dragonfly of single-GPU nodes (a=8 routers of
// p=4 nodes per group, h=4 global links each: one cable per group pair at 32 groups), minimal
// routing: its flows end at nearly as many instants as there are flows, each solve moving the
// rates of every flow on the links the finished one leaves.
json dragonfly_all_to_all(int groups) {
  return {{"hardware", {{"node", {{"gpus", 1}, {"nics", 1}, {"nic_bandwidth", "50GB/s"}}}}},
          {"topology", {{"kind", "dragonfly"}, {"routers_per_group", 8}, {"nodes_per_router", 4},
                        {"global_links_per_router", 4}, {"groups", groups}}},
          {"network", {{"routing", "minimal"}}},
          {"workload", {{"kind", "traffic"}, {"pattern", "all_to_all"}, {"bytes", "1MiB"}}}};
}

// A direct all-to-all collective of 1 GiB per rank over 8-GPU nodes (8 NICs, rails), in either
// model: a 3-tier radix-64 fat-tree, or a dragonfly of 64-port routers (8 per group, 4 nodes
// each, 16 global cables each) with as many groups as the nodes need.
json direct_all_to_all(const char* model, int gpus, const char* kind, const char* routing) {
  const int nodes = gpus / 8;
  json topology = std::string(kind) == "fat_tree"
                      ? json{{"kind", "fat_tree"}, {"tiers", 3}, {"nodes", nodes}, {"switch_radix", 64}, {"rail_optimized", true}}
                      : json{{"kind", "dragonfly"}, {"routers_per_group", 8}, {"nodes_per_router", 4},
                             {"global_links_per_router", 16}, {"groups", (nodes + 31) / 32}, {"nodes", nodes},
                             {"rail_optimized", true}, {"switch_radix", 64}};
  return {{"hardware", {{"node", {{"gpus", 8}, {"nics", 8}, {"nic_bandwidth", "400Gbps"}}}}},
          {"topology", topology},
          {"network", {{"model", model}, {"routing", routing}}},
          {"workload", {{"kind", "collective"}, {"op", "all_to_all"}, {"sizes", {"1GiB"}}}}};
}

// The load-aware routings' direct all-to-all in the analytical model: adaptive on
// the 3-tier fat-tree above, UGAL on a dragonfly of one 8-GPU node per router (a=16, p=1,
// h=8: one global cable per group pair at 128 groups).
json load_aware_all_to_all(int gpus, const char* routing) {
  if (std::string(routing) == "adaptive") return direct_all_to_all("analytical", gpus, "fat_tree", routing);
  json doc = direct_all_to_all("analytical", gpus, "dragonfly", routing);
  doc["topology"] = {{"kind", "dragonfly"}, {"routers_per_group", 16}, {"nodes_per_router", 1},
                     {"global_links_per_router", 8}, {"groups", gpus / 128}};
  return doc;
}

}  // namespace

int main(int argc, char** argv) {
  const auto quick = cs::bench::parse_quick(argc, argv);
  if (!quick) return 2;
  const std::vector<int> flow_counts = *quick ? std::vector<int>{1000, 10000} : std::vector<int>{1000, 10000, 100000};
  for (int n : flow_counts)
    report(("staggered flows through one link: " + std::to_string(n)).c_str(), staggered(n));
  // ECMP's flows end at many instants (every solve re-fills the classes a change can move):
  // up to 192 GPUs; D-mod-K and spray, symmetric, to 1,024.
  const std::vector<int> node_counts = *quick ? std::vector<int>{64} : std::vector<int>{128, 192, 1024};
  for (int nodes : node_counts)
    for (const char* routing : {"dmodk", "ecmp", "spray"})
      if (nodes <= 192 || std::string(routing) != "ecmp")
        report(("traffic all_to_all, fat-tree " + std::string(routing) + ": " + std::to_string(nodes) + " GPUs").c_str(),
               all_to_all(nodes, routing));
  // The dragonfly's: 2 groups (64 nodes) quick; 4, 8 and 32 (128, 256 and 1,024 nodes) in the
  // full run, headline figures.
  const std::vector<int> dragonfly_groups = *quick ? std::vector<int>{2} : std::vector<int>{4, 8, 32};
  for (const int groups : dragonfly_groups) {
    const std::string nodes = std::to_string(32 * groups);
    const std::string figure = "scale/traffic_all_to_all_dragonfly_" + nodes + "_cpu";
    report(("traffic all_to_all, dragonfly minimal: " + nodes + " GPUs").c_str(), dragonfly_all_to_all(groups),
           *quick ? nullptr : figure.c_str());
  }
  for (const auto& [kind, routing] : {std::pair{"fat_tree", "dmodk"}, std::pair{"fat_tree", "ecmp"},
                                      std::pair{"dragonfly", "minimal"}}) {
    const int gpus = *quick ? 1024 : 4096;
    report(("flow direct all_to_all, " + std::string(kind) + " " + routing + ": " + std::to_string(gpus) + " GPUs").c_str(),
           direct_all_to_all("flow", gpus, kind, routing));
  }
  // 268 M pairs: the exchange's saturating links are the ranks' legs, whose pairs the
  // all-pairs counter lists without a pass; each pair's links from its tables and walk when
  // its flow is fixed (docs/benchmarks.md).
  if (!*quick)
    report("flow direct all_to_all, fat_tree dmodk: 16384 GPUs", direct_all_to_all("flow", 16384, "fat_tree", "dmodk"),
           "scale/flow_all_to_all_dmodk_16384_cpu");
  const std::vector<int> gpu_counts = *quick ? std::vector<int>{1024} : std::vector<int>{4096, 16384};
  for (int gpus : gpu_counts)
    for (const auto& [kind, routing] : {std::pair{"fat_tree", "dmodk"}, std::pair{"fat_tree", "ecmp"},
                                        std::pair{"fat_tree", "spray"}, std::pair{"dragonfly", "minimal"},
                                        std::pair{"dragonfly", "valiant"}})
      report(("analytical direct all_to_all, " + std::string(kind) + " " + routing + ": " + std::to_string(gpus) +
              " GPUs")
                 .c_str(),
             direct_all_to_all("analytical", gpus, kind, routing));
  // Adaptive at 16,384 GPUs too in the full run: 268 M pairs choosing one after another.
  std::vector<std::pair<const char*, int>> load_aware = {{"adaptive", *quick ? 1024 : 4096}, {"ugal", *quick ? 4096 : 16384}};
  if (!*quick) load_aware.emplace_back("adaptive", 16384);
  for (const auto& [routing, gpus] : load_aware)
    report(("analytical direct all_to_all, load-aware " + std::string(routing) + ": " + std::to_string(gpus) + " GPUs").c_str(),
           load_aware_all_to_all(gpus, routing),
           ("scale/analytical_all_to_all_" + std::string(routing) + "_" + std::to_string(gpus) + "_cpu").c_str());
  return 0;
}
