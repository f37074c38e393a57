// The architect's topology keys (parallel_links as auto / number / list, nodes_per_rack,
// dragonfly rails and bundles, torus bundles, router switch_radix) and the topology report's
// JSON fields for them.
#include <catch2/catch.hpp>

#include <string>

#include "parse_helpers.hpp"
#include "sim/world/topology_report.hpp"

using namespace cs::scenario;
using cs::scenario::test::config_error;
using cs::scenario::test::parse;

namespace {

nlohmann::json report(const char* text) {
  return cs::world::report_json(cs::world::topology_report(nlohmann::json::parse(text)));
}

}  // namespace

TEST_CASE("parallel_links: auto by default, a number for every boundary, or a list", "[config]") {
  CHECK(parse(R"({"topology": {"tiers": 3}})").topology.parallel_links.empty());
  CHECK(parse(R"({"topology": {"parallel_links": "auto"}})").topology.parallel_links.empty());
  CHECK(parse(R"({"hardware": {"node": {"gpus": 1, "nics": 1}}, "topology": {"tiers": 3,
                   "nodes": 32, "switch_radix": 8, "parallel_links": 2}})")
            .topology.parallel_links == std::vector<int>{2, 2});
  CHECK(parse(R"({"hardware": {"node": {"gpus": 1, "nics": 1}}, "topology": {"tiers": 3,
                   "nodes": 40, "switch_radix": 8, "parallel_links": [1, "auto"]}})")
            .topology.parallel_links == std::vector<int>{1, 0});
  CHECK(parse(R"({"topology": {"kind": "dragonfly", "parallel_links": 3, "rail_optimized": true,
                               "switch_radix": 64}})")
            .topology.local_parallel_links == 3);
  const Config df = parse(R"({"topology": {"kind": "dragonfly", "rail_optimized": true,
                                           "switch_radix": 64}})");
  CHECK(df.topology.rail_optimized);
  CHECK(df.topology.router_radix == 64);
  CHECK(parse(R"({"topology": {"kind": "torus", "dims": [4, 4, 2], "parallel_links": [2, 1, 3]}})")
            .topology.dim_parallel_links == std::vector<int>{2, 1, 3});
  CHECK(parse(R"({"topology": {"nodes_per_rack": 2}})").topology.nodes_per_rack == 2);
  CHECK(parse("{}").topology.nodes_per_rack == 4);
}

TEST_CASE("architect keys: errors name their path", "[config]") {
  struct Case {
    const char* doc;
    const char* path;
    const char* contains;
  };
  const Case cases[] = {
      {R"({"topology": {"tiers": 3, "parallel_links": [1]}})", "topology.parallel_links",
       "expected 2 entries for 3 tiers"},
      {R"({"topology": {"parallel_links": "all"}})", "topology.parallel_links", ""},
      {R"({"hardware": {"node": {"gpus": 1, "nics": 1}}, "topology": {"tiers": 3, "nodes": 40,
           "switch_radix": 8, "parallel_links": [1, 3]}})",
       "topology.parallel_links.1", "lower parallel_links"},
      {R"({"topology": {"kind": "dragonfly", "parallel_links": [2]}})", "topology.parallel_links",
       "one number"},
      {R"({"topology": {"kind": "dragonfly", "parallel_links": "auto"}})",
       "topology.parallel_links", ""},
      {R"({"topology": {"kind": "dragonfly", "switch_radix": 8}})", "topology.switch_radix",
       "switch_radix must be that or more"},
      {R"({"topology": {"kind": "torus", "dims": [4, 4], "parallel_links": [1, 2, 3]}})",
       "topology.parallel_links", "one per dimension"},
      {R"({"topology": {"kind": "torus", "dims": [4, 4], "switch_radix": 4}})",
       "topology.switch_radix", "NICs + its torus bundles = 12"},
      {R"({"topology": {"nodes_per_rack": 0}})", "topology.nodes_per_rack", ""},
  };
  for (const Case& c : cases) {
    INFO(c.doc);
    const InputError e = config_error(c.doc);
    CHECK(e.path() == c.path);
    CHECK_THAT(std::string(e.what()), Catch::Contains(c.contains));
  }
}

TEST_CASE("topology report JSON: tiers, ratios, notes, network figures, pricing basis", "[report]") {
  // 128 DGX-like nodes, rails, 2:1, tiers 3 asked: 2 tiers of 32 leaves and 8 spines.
  const nlohmann::json r = report(R"({"hardware": {"gpu": "H100-SXM", "node": {"gpus": 8,
      "nics": 8, "nic_bandwidth": "400Gbps"}}, "topology": {"kind": "fat_tree", "nodes": 128,
      "tiers": 3, "switch_radix": 64, "rail_optimized": true, "oversubscription": 2}})");
  CHECK(r["switches_by_tier"]["leaf"] == 32);
  CHECK(r["switches_by_tier"]["spine"] == 8);
  CHECK(r["tiers"] == 2);
  CHECK(r["tiers_requested"] == 3);
  REQUIRE(r["oversubscription_by_tier"].size() == 1);
  const nlohmann::json& leaf = r["oversubscription_by_tier"][0];
  CHECK(leaf["tier"] == "leaf");
  CHECK(leaf["down_ports"] == 32);
  CHECK(leaf["up_ports"] == 16);
  CHECK(leaf["parallel_links"] == 2);
  CHECK(leaf["ratio"].get<double>() == Approx(2.0));
  REQUIRE(r["notes"].size() == 1);
  CHECK_THAT(r["notes"][0].get<std::string>(), Catch::Contains("tiers: 3 asked, 2 built"));
  CHECK(r["bisection_method"] == "tree_cut");
  CHECK(r["bisection_bandwidth_Bps"].get<double>() == Approx(12800e9));
  double network = 0;
  for (const auto& line : r["bill"])
    if (line["network"].get<bool>()) network += line["usd"].get<double>();
  CHECK(r["network_cost_usd"].get<double>() == Approx(network));
  CHECK(r["network_cost_per_gpu_usd"].get<double>() == Approx(network / 1024));
  CHECK(r["network_usd_per_bisection_GBps"].get<double>() == Approx(network / 12800));
  CHECK(r["cables"]["copper"] == 0);  // rail leaves serve 32 racks
  CHECK(r["switch_ports"] == 40 * 64);  // bought whole; each leaf leaves 16 ports empty
  CHECK(r["switch_ports_used"] == 32 * (32 + 16) + 8 * 64);
  CHECK(r["racks"] == 32);
  CHECK_THAT(r["pricing_basis"].get<std::string>(), Catch::Contains("switches bought whole"));
  const std::string text =
      cs::world::report_text(cs::world::topology_report(nlohmann::json::parse(R"({"topology": {"nodes": 8, "tiers": 3}})")));
  for (const char* word : {"network cost (USD)", "network USD per GPU", "pricing:", "note:",
                           "leaf down:up"})
    CHECK_THAT(text, Catch::Contains(word));
}
