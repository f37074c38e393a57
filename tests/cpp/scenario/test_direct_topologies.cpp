// Dragonfly and torus scenarios: defaults, routing per family, errors at their paths.
#include <catch2/catch.hpp>

#include "parse_helpers.hpp"

using namespace cs::scenario;
using cs::topo::GlobalArrangement;
using cs::topo::RoutingKind;
using cs::topo::TopologyKind;

using cs::scenario::test::config_error;
using cs::scenario::test::parse;

TEST_CASE("dragonfly defaults: full size, minimal routing", "[config]") {
  const Config c = parse(R"({"topology": {"kind": "dragonfly"}})");
  CHECK(c.topology.kind == TopologyKind::dragonfly);
  CHECK(c.topology.routers_per_group == 8);
  CHECK(c.topology.nodes_per_router == 4);
  CHECK(c.topology.global_links_per_router == 4);
  CHECK(c.topology.groups == 33);  // a*h+1
  CHECK(c.topology.nodes == 8 * 4 * 33);
  CHECK(c.topology.global_arrangement == GlobalArrangement::absolute);
  CHECK_FALSE(c.topology.global_bandwidth_Bps);
  CHECK(c.network.routing == RoutingKind::minimal);
}

TEST_CASE("dragonfly keys; groups from nodes; nodes from groups", "[config]") {
  const Config c = parse(R"({"topology": {"kind": "dragonfly", "nodes": 60, "routers_per_group": 4,
      "nodes_per_router": 2, "global_links_per_router": 2, "global_bandwidth": "200Gbps",
      "global_latency": "2us", "global_arrangement": "circulant"},
      "network": {"routing": "ugal"}})");
  CHECK(c.topology.groups == 8);  // the fewest groups of a*p = 8 nodes holding 60
  CHECK(c.topology.global_bandwidth_Bps == 25e9);
  CHECK(c.topology.global_latency_s == Approx(2e-6));
  CHECK(c.topology.global_arrangement == GlobalArrangement::circulant);
  CHECK(c.network.routing == RoutingKind::ugal);
  const Config d = parse(R"({"topology": {"kind": "dragonfly", "groups": 3, "routers_per_group": 2,
      "nodes_per_router": 2, "global_links_per_router": 1}, "network": {"routing": "valiant"}})");
  CHECK(d.topology.nodes == 12);
  CHECK(d.network.routing == RoutingKind::valiant);
}

TEST_CASE("torus: nodes from dims, dor routing", "[config]") {
  const Config c = parse(R"({"topology": {"kind": "torus", "dims": [4, 4, 2]}})");
  CHECK(c.topology.kind == TopologyKind::torus);
  CHECK(c.topology.dims == std::vector<int>{4, 4, 2});
  CHECK(c.topology.nodes == 32);
  CHECK(c.network.routing == RoutingKind::dor);
  CHECK(parse(R"({"topology": {"kind": "torus", "dims": [3, 1], "nodes": 3},
                  "network": {"routing": "shortest"}})").network.routing == RoutingKind::shortest);
}

TEST_CASE("dragonfly and torus errors name their path", "[config]") {
  struct Case {
    const char* doc;
    const char* path;
    const char* contains;
  };
  const Case cases[] = {
      {R"({"topology": {"kind": "dragonfly", "routers_per_group": 2, "global_links_per_router": 1,
           "groups": 4}})", "topology.groups", "a*h+1"},
      {R"({"topology": {"kind": "dragonfly", "routers_per_group": 2, "nodes_per_router": 1,
           "global_links_per_router": 1, "nodes": 7}})", "topology.nodes", "at most a*p*(a*h+1) = 6"},
      {R"({"topology": {"kind": "dragonfly", "groups": 2, "nodes": 100}})", "topology.nodes",
       "hold at most 64 nodes"},
      {R"({"topology": {"kind": "dragonfly", "routers_per_group": 0}})", "topology.routers_per_group", ""},
      {R"({"topology": {"kind": "dragonfly", "global_arrangement": "random"}})",
       "topology.global_arrangement", ""},
      {R"({"topology": {"kind": "torus"}})", "topology.dims", "2 or 3"},
      {R"({"topology": {"kind": "torus", "dims": [16]}})", "topology.dims", ""},
      {R"({"topology": {"kind": "torus", "dims": [2, 2, 2, 2]}})", "topology.dims", ""},
      {R"({"topology": {"kind": "torus", "dims": [4, 0]}})", "topology.dims.1", ""},
      {R"({"topology": {"kind": "torus", "dims": [4, 4], "nodes": 15}})", "topology.nodes",
       "4x4 torus holds one node per position, 16 nodes"},
      {R"({"topology": {"kind": "torus", "dims": [4, 4]}, "network": {"routing": "minimal"}})",
       "network.routing", "needs a dragonfly topology; available here: dor, shortest"},
      {R"({"topology": {"kind": "dragonfly"}, "network": {"routing": "dor"}})", "network.routing",
       "needs a torus topology; available here: minimal, valiant, ugal, valiant_packet, ugal_packet, shortest"},
      {R"({"topology": {"kind": "dragonfly"}, "network": {"routing": "dmodk"}})", "network.routing",
       "needs a fat_tree topology"},
  };
  for (const Case& c : cases) {
    INFO(c.doc);
    const InputError e = config_error(c.doc);
    CHECK(e.path() == c.path);
    CHECK_THAT(std::string(e.what()), Catch::Contains(c.contains));
  }
}
