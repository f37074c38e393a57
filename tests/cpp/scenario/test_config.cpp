// parse_config: defaults, conversions, cross-field rules, example scenarios.
#include <catch2/catch.hpp>

#include <filesystem>

#include "parse_helpers.hpp"
#include "sim/scenario/load.hpp"
#include "sim/world/run.hpp"

using namespace cs::scenario;
using json = nlohmann::json;

using cs::scenario::test::config_error;
using cs::scenario::test::parse;

TEST_CASE("an empty scenario takes every default", "[config]") {
  const Config c = parse("{}");
  CHECK(c.name.empty());
  CHECK(c.seed == 1);
  CHECK(c.gpu.name == "H100-SXM");
  CHECK(c.gpu.peak_flops == 989e12);
  CHECK(c.topology.kind == cs::topo::TopologyKind::fat_tree);
  CHECK(c.topology.nodes == 1);
  CHECK(c.topology.node.gpus == 8);
  CHECK(c.topology.node.nics == 8);
  CHECK(c.topology.node.nic_bandwidth_Bps == 50e9);
  CHECK(c.topology.node.gpu_bandwidth_Bps == Approx(18 * 20.6e9));  // H100: NCCL's 18 NVLinks x 20.6 GB/s
  CHECK(c.topology.node.fabric == cs::topo::NodeFabric::nvswitch);
  CHECK(c.in_network.nvls);
  CHECK(c.topology.node.gpu_latency_s == Approx(0.3e-6));
  CHECK(c.topology.node.pcie_bandwidth_Bps == 64e9);
  CHECK(c.topology.link_bandwidth_Bps == 50e9);
  CHECK(c.topology.switch_radix == 64);
  CHECK(c.network.routing == cs::topo::RoutingKind::dmodk);
  CHECK(c.workload == WorkloadKind::collective);
  CHECK(c.collective.sizes_bytes == std::vector<double>{1 << 20});
  CHECK(c.collective.ranks == 0);
  CHECK(c.run.replications == 1);
  CHECK(c.run.trace_path.empty());
}

TEST_CASE("the GPU sets the node fabric's defaults", "[config]") {
  SECTION("A100: 12 NVLinks at NCCL's 20 GB/s, an NVSwitch that does not reduce") {
    const Config c = parse(R"({"hardware": {"gpu": "A100-80GB"}})");
    CHECK(c.topology.node.fabric == cs::topo::NodeFabric::nvswitch);
    CHECK(c.topology.node.gpu_bandwidth_Bps == Approx(240e9));
    CHECK_FALSE(c.in_network.nvls);
    const InputError e = config_error(R"({"hardware": {"gpu": "A100-80GB", "node": {"nvls": true}}})");
    CHECK(e.path() == "hardware.node.nvls");
    CHECK_THAT(e.expected(), Catch::Contains("needs Hopper or later"));
  }
  SECTION("B200 and MI300X") {
    CHECK(parse(R"({"hardware": {"gpu": "B200"}})").topology.node.gpu_bandwidth_Bps == Approx(18 * 40.1e9));
    const Config mi = parse(R"({"hardware": {"gpu": "MI300X"}})");
    CHECK(mi.topology.node.fabric == cs::topo::NodeFabric::nvlink_mesh);
    CHECK(mi.topology.node.gpu_bandwidth_Bps == Approx(448e9));
    CHECK_FALSE(mi.in_network.nvls);
  }
  SECTION("Trainium, Inferentia and TPU: the vendor's server, its chips on NeuronLink or ICI") {
    const Config trn = parse(R"({"hardware": {"gpu": "Trainium2"}})");
    CHECK(trn.topology.node.gpus == 16);
    CHECK(trn.topology.node.fabric == cs::topo::NodeFabric::nvlink_mesh);
    CHECK(trn.topology.node.mesh == cs::topo::NodeMesh::torus_4x4);
    CHECK(trn.topology.node.gpu_bandwidth_Bps == Approx(640e9));
    CHECK_FALSE(trn.in_network.nvls);
    const Config inf = parse(R"({"hardware": {"gpu": "Inferentia2"}})");
    CHECK(inf.topology.node.gpus == 12);
    CHECK(inf.topology.node.mesh == cs::topo::NodeMesh::ring);
    // Another count than the server's: a full mesh, unless the file names one.
    CHECK(parse(R"({"hardware": {"gpu": "Trainium1", "node": {"gpus": 8}}})").topology.node.mesh ==
          cs::topo::NodeMesh::full);
    const Config v5e = parse(R"({"hardware": {"gpu": "TPU-v5e"}})");
    CHECK(v5e.topology.node.gpus == 8);
    CHECK(v5e.gpu.peak_flops == 197e12);
    CHECK(parse(R"({"hardware": {"gpu": "TPU-v5p"}})").topology.node.gpus == 4);
    const InputError e =
        config_error(R"({"hardware": {"gpu": "Trainium1", "node": {"gpus": 8, "mesh": "torus_4x4"}}})");
    CHECK(e.path() == "hardware.node.mesh");
    CHECK_THAT(e.expected(), Catch::Contains("16-chip trn1/trn2 server"));
  }
  SECTION("L4: PCIe servers; an NVSwitch node of them needs its bandwidth stated") {
    CHECK(parse(R"({"hardware": {"gpu": "L4"}})").topology.node.fabric == cs::topo::NodeFabric::pcie);
    const InputError e = config_error(R"({"hardware": {"gpu": "L4", "node": {"fabric": "nvswitch"}}})");
    CHECK(e.path() == "hardware.node.gpu_bandwidth");
    CHECK_THAT(e.expected(), Catch::Contains("L4 has no NVLink figure"));
    CHECK(parse(R"({"hardware": {"gpu": "L4", "node": {"fabric": "nvswitch", "gpu_bandwidth": "100GB/s"}}})")
              .topology.node.gpu_bandwidth_Bps == 100e9);
  }
  SECTION("PCIe peer-to-peer: on by default; only a pcie node may go without it") {
    CHECK(parse(R"({"hardware": {"gpu": "L4"}})").topology.node.gpu_p2p);
    CHECK_FALSE(parse(R"({"hardware": {"gpu": "L4", "node": {"p2p": false}}})").topology.node.gpu_p2p);
    const InputError e = config_error(R"({"hardware": {"gpu": "H100-SXM", "node": {"p2p": false}}})");
    CHECK(e.path() == "hardware.node.p2p");
    CHECK_THAT(e.expected(), Catch::Contains("needs a \"pcie\" node"));
  }
  SECTION("a GPU object may give its NVLink bandwidth; an explicit gpu_bandwidth wins") {
    CHECK(parse(R"({"hardware": {"gpu": {"name": "H100-SXM", "nvlink_bandwidth": "450GB/s"}}})")
              .topology.node.gpu_bandwidth_Bps == 450e9);
    CHECK(parse(R"({"hardware": {"node": {"gpu_bandwidth": "450GB/s"}}})").topology.node.gpu_bandwidth_Bps == 450e9);
    const Config none = parse(R"({"hardware": {"gpu": {"name": "H100-SXM", "nvlink_bandwidth": 0}}})");
    CHECK(none.topology.node.fabric == cs::topo::NodeFabric::pcie);
  }
}

TEST_CASE("values convert to SI units", "[config]") {
  const Config c = parse(R"({
    "name": "x", "seed": 42.0,
    "hardware": {"gpu": {"name": "mine", "peak_flops": "100TFLOPS", "hbm_bandwidth": "1TB/s", "memory": "16GiB"},
                 "node": {"gpus": 4, "nics": 2, "nic_bandwidth": "200Gbps", "fabric": "pcie"}},
    "topology": {"kind": "custom", "nodes": 2, "switches": ["s"],
                 "links": [{"a": "n0.0", "b": "s"}, {"a": "n0.1", "b": "s"},
                           {"a": "n1.0", "b": "s", "bandwidth": "100Gbps", "latency": "1us"}, {"a": "n1.1", "b": "s"}]},
    "workload": {"kind": "traffic", "pattern": "flows",
                 "flows": [{"src": 0, "dst": 7, "bytes": "1MB", "start": "2ms"}]},
    "run": {"until": "1h", "replications": 3, "trace": "t.json", "timeseries_interval": "1ms"}
  })");
  CHECK(c.name == "x");
  CHECK(c.seed == 42);
  CHECK(c.gpu.name == "mine");
  CHECK(c.gpu.memory_bytes == 16.0 * (1 << 30));
  CHECK(c.topology.node.fabric == cs::topo::NodeFabric::pcie);
  CHECK(c.topology.node.nic_bandwidth_Bps == 25e9);
  REQUIRE(c.topology.links.size() == 4);
  CHECK(c.topology.links[0].bandwidth_Bps == 50e9);  // topology.link_bandwidth default
  CHECK(c.topology.links[2].bandwidth_Bps == 12.5e9);
  CHECK(c.topology.links[2].latency_s == Approx(1e-6));
  CHECK(c.network.routing == cs::topo::RoutingKind::shortest);
  REQUIRE(c.traffic.flows.size() == 1);
  CHECK(c.traffic.flows[0].dst == 7);
  CHECK(c.traffic.flows[0].start_s == Approx(2e-3));
  CHECK(c.run.until_s == 3600);
  CHECK(c.run.trace_path == "t.json");
}

TEST_CASE("a GPU object based on a catalog name keeps the rest of its specs", "[config]") {
  const Config c = parse(R"({"hardware": {"gpu": {"name": "A100-80GB", "memory": "40GB"}}})");
  CHECK(c.gpu.peak_flops == 312e12);
  CHECK(c.gpu.memory_bytes == 40e9);
  CHECK(config_error(R"({"hardware": {"gpu": {"name": "X1", "memory": "40GB"}}})").path() ==
        "hardware.gpu.peak_flops");
}

TEST_CASE("3-tier fat-trees, per-tier oversubscription, adaptive routing, NVLink meshes", "[config]") {
  const Config c = parse(R"({
    "hardware": {"node": {"gpus": 8, "fabric": "nvlink_mesh", "mesh": "hybrid_cube"}},
    "topology": {"nodes": 64, "tiers": 3, "switch_radix": 16, "oversubscription": [3, 1.5],
                 "rail_optimized": true},
    "network": {"routing": "adaptive"}})");
  CHECK(c.topology.tiers == 3);
  CHECK(c.topology.oversubscription == 3.0);
  CHECK(c.topology.upper_oversubscription == std::vector<double>{1.5});
  CHECK(c.topology.rail_optimized);
  CHECK(c.topology.node.fabric == cs::topo::NodeFabric::nvlink_mesh);
  CHECK(c.topology.node.mesh == cs::topo::NodeMesh::hybrid_cube);
  CHECK(c.network.routing == cs::topo::RoutingKind::adaptive);
  // The number form still means the leaves' ratio alone; a mesh defaults to full.
  const Config d = parse(R"({"hardware": {"node": {"fabric": "nvlink_mesh"}},
                             "topology": {"tiers": 3, "oversubscription": 2}})");
  CHECK(d.topology.oversubscription == 2.0);
  CHECK(d.topology.upper_oversubscription.empty());
  CHECK(d.topology.node.mesh == cs::topo::NodeMesh::full);
  CHECK(d.network.routing == cs::topo::RoutingKind::dmodk);
}

TEST_CASE("cross-field rules name their path", "[config]") {
  struct Case {
    const char* doc;
    const char* path;
    const char* contains;
  };
  const Case cases[] = {
      {R"({"topology": {"kind": "single_node", "nodes": 2}})", "topology.nodes", "exactly 1 node"},
      {R"({"topology": {"nodes": 3000000}})", "topology.nodes", "at most 16777216 GPUs"},
      {R"({"topology": {"kind": "dragonfly", "routers_per_group": 2, "global_links_per_router": 1, "groups": 4}})",
       "topology.groups", "at most a*h+1 = 3 groups"},
      {R"({"topology": {"switch_radix": 7}})", "topology.switch_radix", "even"},
      {R"({"hardware": {"node": {"gpus": 1}}, "topology": {"tiers": 3, "nodes": 129, "switch_radix": 8}})",
       "topology.switch_radix", "3-tier fat-tree of 129 NICs: at most 128 NICs"},
      {R"({"topology": {"nodes": 600, "tiers": 3, "switch_radix": 8}})", "topology.nodes", "3-tier fat-tree"},
      {R"({"topology": {"tiers": 3, "oversubscription": [2]}})", "topology.oversubscription",
       "expected 2 ratios for 3 tiers"},
      {R"({"topology": {"tiers": 3, "oversubscription": [2, 64]}})", "topology.oversubscription.1",
       "expected a number from 1.0 to 63.0"},
      {R"({"topology": {"nodes": 100, "switch_radix": 8}})", "topology.nodes", "2-tier fat-tree"},
      {R"({"hardware": {"node": {"gpus": 2, "nics": 4}}})", "hardware.node.nics", "at most one NIC per GPU"},
      {R"({"hardware": {"node": {"mesh": "full"}}})", "hardware.node.mesh", "only to fabric \"nvlink_mesh\""},
      {R"({"hardware": {"node": {"gpus": 4, "fabric": "nvlink_mesh", "mesh": "hybrid_cube"}}})",
       "hardware.node.mesh", "8-GPU DGX-1 mesh"},
      {R"({"hardware": {"node": {"fabric": "nvlink_mesh", "mesh": "cube"}}})", "hardware.node.mesh",
       "expected one of"},
      {R"({"hardware": {"node": {"nic_bandwidth": "0Gbps"}}})", "hardware.node.nic_bandwidth", "from 1 B/s to 100 TB/s"},
      {R"({"network": {"routing": "ugal"}})", "network.routing",
       "needs a dragonfly topology; available here: dmodk, ecmp"},
      {R"({"topology": {"kind": "single_node"}, "network": {"routing": "ecmp"}})", "network.routing", "fat_tree"},
      {R"({"workload": {"kind": "training"}})", "workload.model", "required: a preset"},
      {R"({"workload": {"op": "gather"}})", "workload.op", "expected one of"},
      {R"({"workload": {"groups": {"size": 3}}})", "workload.groups", "multiple of 3"},
      {R"({"workload": {"ranks": 9}})", "workload.ranks", "from 2 to 8"},
      {R"({"workload": {"sizes": ["1MiB", "-1MiB"]}})", "workload.sizes.1", "> 0"},
      {R"({"workload": {"kind": "traffic", "pattern": "flows"}})", "workload.flows", "required"},
      {R"({"workload": {"kind": "traffic", "pattern": "flows", "flows": [{"src": 0, "dst": 8, "bytes": 1}]}})",
       "workload.flows.0.dst", "from 0 to 7"},
      {R"({"workload": {"kind": "traffic", "pattern": "incast", "dst": 8}})", "workload.dst", "from 0 to 7"},
      {R"({"workload": {"kind": "traffic", "shift": 8}})", "workload.shift", "to itself"},
      {R"({"topology": {"nodes": 1024, "switch_radix": 4096}, "workload": {"kind": "traffic", "pattern": "all_to_all"}})",
       "workload.pattern", "at most 4096 ranks"},
      {R"({"topology": {"kind": "custom", "nodes": 2, "switches": ["s", "s"]}})", "topology.switches.1", "duplicate"},
      {R"({"hardware": {"node": {"gpus": 1}}, "topology": {"kind": "custom", "nodes": 2, "switches": ["s"],
           "links": [{"a": "n0", "b": "s"}, {"a": "n2", "b": "s"}]}})", "topology.links.1.a", "2 nodes"},
      {R"({"hardware": {"node": {"gpus": 1}}, "topology": {"kind": "custom", "nodes": 2, "switches": ["spine"],
           "links": [{"a": "n0", "b": "spin"}]}})", "topology.links.0.b", "unknown link endpoint"},
      {R"({"hardware": {"node": {"gpus": 1}}, "topology": {"kind": "custom", "nodes": 2, "switches": ["s"],
           "links": [{"a": "n0", "b": "s"}]}})", "topology.links", "\"n1\" is not connected"},
      {R"({"fleet": {"nodes": 4}})", "fleet", "applies to training_run, serving and jobs workloads"},
      {R"({"run": {"until": "-1s"}})", "run.until", ">= 0"},
      {R"({"run": {"trace": true}})", "run.trace", "or false"},
      {R"({"seed": -1})", "seed", "expected an integer from 0"},
  };
  for (const Case& c : cases) {
    INFO(c.doc);
    const InputError e = config_error(c.doc);
    CHECK(e.path() == c.path);
    CHECK_THAT(std::string(e.what()), Catch::Contains(c.contains));
  }
  const auto e = config_error(R"({"hardware": {"node": {"gpus": 1}}, "topology": {"kind": "custom", "nodes": 2,
      "switches": ["spine"], "links": [{"a": "n0", "b": "spin"}]}})");
  CHECK(e.hint() == "did you mean \"spine\"?");
}

TEST_CASE("a scenario must name its workload's kind", "[config]") {
  for (const char* text : {R"({})", R"({"workload": {"op": "all_reduce"}})"}) {
    try {
      parse_config(json::parse(text));
      FAIL("no error for " << text);
    } catch (const InputError& e) {
      CHECK(e.path() == "workload.kind");
      CHECK_THAT(e.expected(), Catch::Contains("required: one of \"traffic\", \"collective\""));
    }
  }
}

TEST_CASE("the communication layer checks plans and models when the world is assembled", "[config]") {
  struct Case {
    const char* doc;
    const char* path;
    const char* contains;
  };
  const Case cases[] = {
      {R"({"workload": {"kind": "collective", "op": "all_to_all", "algorithm": "tree"}})", "workload.algorithm",
       "tree"},
      {R"({"workload": {"kind": "collective", "background": [{"op": "all_gather", "algorithm": "halving_doubling",
           "ranks": 6}]}})",
       "workload.background.0.algorithm", "halving_doubling"},
      {R"({"network": {"model": "analytical", "granularity": "step"}, "workload": {"kind": "collective"}})",
       "network.granularity", "flow model"},
      {R"({"network": {"granularity": "step"}, "workload": {"kind": "collective", "algorithm": "tree"}})",
       "network.granularity", "ring all_reduce only"},
  };
  for (const Case& c : cases) {
    INFO(c.doc);
    const Config config = parse(c.doc);  // the file itself is well formed
    try {
      cs::world::check_buildable(config);
      FAIL("no error");
    } catch (const InputError& e) {
      CHECK(e.path() == c.path);
      CHECK_THAT(e.expected(), Catch::Contains(c.contains));
    }
  }
}

TEST_CASE("the analytical model runs traffic flow by flow, as the flow model does", "[config]") {
  const char* text = R"({"topology": {"kind": "fat_tree", "nodes": 4}, "hardware": {"node": {"gpus": 1}},
      "workload": {"kind": "traffic", "pattern": "incast", "bytes": "1GB"}})";
  Config flow = parse(text), analytical = parse(text);
  analytical.network.model = NetworkModel::analytical;
  const json a = cs::world::run_scenario(flow).summary["traffic"], b = cs::world::run_scenario(analytical).summary["traffic"];
  CHECK(b["completed"] == 3);
  CHECK(b["makespan_s"].get<double>() == Approx(a["makespan_s"].get<double>()).epsilon(1e-9));
  CHECK(b["mean_fct_s"].get<double>() == Approx(a["mean_fct_s"].get<double>()).epsilon(1e-9));
}

TEST_CASE("every example scenario parses", "[config]") {
  int count = 0;
  for (const auto& entry : std::filesystem::directory_iterator(CS_SOURCE_DIR "/scenarios")) {
    if (entry.path().extension() != ".json" || entry.path().filename() == "schema.json") continue;
    INFO(entry.path().string());
    CHECK_NOTHROW(parse_config(read_scenario_file(entry.path().string())));
    ++count;
  }
  CHECK(count > 0);
  for (const auto& entry : std::filesystem::directory_iterator(CS_SOURCE_DIR "/fuzz/corpus")) {
    INFO(entry.path().string());
    CHECK_NOTHROW(parse_config(read_scenario_file(entry.path().string())));
  }
}

TEST_CASE("overrides then parse", "[config]") {
  json doc = read_scenario_file(CS_SOURCE_DIR "/scenarios/fat_tree_allreduce.json");
  apply_override(doc, "topology.nodes=4");
  apply_override(doc, "workload.sizes=[1e6,1e9]");
  const Config c = parse_config(doc);
  CHECK(c.topology.nodes == 4);
  CHECK(c.collective.sizes_bytes == std::vector<double>{1e6, 1e9});
  apply_override(doc, "topology.kind=dragonfly");
  CHECK_THROWS_AS(parse_config(doc), InputError);
}
