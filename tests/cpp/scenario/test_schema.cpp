// The schema and the translation of its errors.
#include <catch2/catch.hpp>

#include <functional>

#include "sim/scenario/load.hpp"
#include "sim/scenario/suggest.hpp"

using namespace cs::scenario;
using json = nlohmann::json;

namespace {

InputError schema_error(const json& doc) {
  try {
    validate_schema(doc);
  } catch (const InputError& e) {
    return e;
  }
  FAIL("no schema error for " << doc.dump());
  throw;  // unreachable
}

// Every object in the schema forbids unknown keys and every property has a description.
void check_node(const json& node, const std::string& where) {
  if (!node.is_object()) return;
  if (node.contains("properties")) {
    INFO(where);
    CHECK(node.contains("additionalProperties"));
    CHECK(node.value("additionalProperties", true) == false);
    for (const auto& [k, v] : node["properties"].items()) {
      INFO(where + "." + k);
      CHECK(v.contains("description"));
      check_node(v, where + "." + k);
    }
  }
  for (const char* key : {"oneOf", "anyOf", "allOf"})
    if (node.contains(key))
      for (const auto& b : node[key]) check_node(b, where);
  if (node.contains("items")) check_node(node["items"], where + "[]");
}

}  // namespace

TEST_CASE("the schema is draft-07 and strict", "[schema]") {
  const json schema = json::parse(schema_text());
  CHECK(schema["$schema"] == "http://json-schema.org/draft-07/schema#");
  check_node(schema, "<root>");
  for (const char* def : {"time", "bytes", "bandwidth", "flops", "rate", "money", "money_rate"})
    CHECK(schema["definitions"].contains(def));
}

TEST_CASE("contract keys that are not built yet are still valid", "[schema]") {
  const json doc = json::parse(R"({
    "topology": {"kind": "dragonfly", "groups": 9, "routers_per_group": 4, "nodes_per_router": 2,
                 "global_links_per_router": 2, "global_bandwidth": "200Gbps", "dims": [4, 4]},
    "network": {"model": "analytical", "routing": "ugal"},
    "hardware": {"node": {"fabric": "nvlink_mesh"}},
    "workload": {"kind": "training", "model": {"layers": 32, "hidden": 4096, "heads": 32,
                 "seq_len": 4096, "vocab": 32000}, "parallel": {"tp": 8, "pp": 4, "dp": 2,
                 "zero": 1, "schedule": "interleaved", "virtual_stages": 2},
                 "batch": {"global": 1024, "micro": 1}, "precision": "bf16", "recompute": "selective"},
    "fleet": {"nodes": 64, "market": {"spot": 0.7}, "prices": {"spot": "$2.49/h"},
              "interruptions": {"rate": "0.05/h", "warning": "2min"},
              "checkpoint": {"interval": "auto", "mode": "async"},
              "autoscaler": {"policy": "hpa", "min": 1, "max": 8, "target": 0.6}}
  })");
  CHECK_NOTHROW(validate_schema(doc));
}

TEST_CASE("unknown keys get a did-you-mean", "[schema]") {
  auto e = schema_error(json::parse(R"({"topology": {"nodez": 4}})"));
  CHECK(e.path() == "topology.nodez");
  CHECK_THAT(e.expected(), Catch::Contains("unknown key \"nodez\""));
  CHECK(e.hint() == "did you mean \"nodes\"?");

  e = schema_error(json::parse(R"({"topolgy": {}})"));
  CHECK(e.path() == "topolgy");
  CHECK(e.hint() == "did you mean \"topology\"?");

  e = schema_error(json::parse(R"({"topology": {"kind": "custom", "links": [{"a": "n0", "b": "s", "bandwith": 1}]}})"));
  CHECK(e.path() == "topology.links.0.bandwith");
  CHECK(e.hint() == "did you mean \"bandwidth\"?");
}

TEST_CASE("bad enum values get a did-you-mean", "[schema]") {
  auto e = schema_error(json::parse(R"({"topology": {"kind": "fattree"}})"));
  CHECK(e.path() == "topology.kind");
  CHECK_THAT(e.expected(), Catch::Contains("\"fat_tree\""));
  CHECK_THAT(e.expected(), Catch::Contains("got \"fattree\""));
  CHECK(e.hint() == "did you mean \"fat_tree\"?");

  e = schema_error(json::parse(R"({"hardware": {"gpu": "H100"}})"));
  CHECK(e.path() == "hardware.gpu");
  CHECK(e.hint() == "did you mean \"H100-SXM\"?");
}

TEST_CASE("types and ranges are explained", "[schema]") {
  auto e = schema_error(json::parse(R"({"hardware": {"node": {"gpus": 0}}})"));
  CHECK(e.path() == "hardware.node.gpus");
  CHECK(e.expected() == "expected an integer from 1 to 1024; got 0");

  e = schema_error(json::parse(R"({"hardware": {"node": {"gpus": 8.5}}})"));
  CHECK(e.path() == "hardware.node.gpus");
  CHECK_THAT(e.expected(), Catch::Contains("expected an integer"));

  CHECK_NOTHROW(validate_schema(json::parse(R"({"hardware": {"node": {"gpus": 8.0}}})")));

  e = schema_error(json::parse(R"({"hardware": {"node": {"gpus": "8"}}})"));
  CHECK(e.hint() == "write numbers without quotes");

  e = schema_error(json::parse(R"({"topology": {"link_bandwidth": true}})"));
  CHECK(e.path() == "topology.link_bandwidth");
  CHECK_THAT(e.expected(), Catch::Contains("expected a bandwidth"));

  e = schema_error(json::parse(R"({"workload": {"ranks": 1}})"));
  CHECK(e.path() == "workload.ranks");
  CHECK(e.expected() == "expected an integer >= 2; got 1");

  e = schema_error(json::parse(R"({"hardware": {"gpu": 5}})"));
  CHECK(e.path() == "hardware.gpu");
  CHECK_THAT(e.expected(), Catch::Contains("or an object"));

  e = schema_error(json::parse(R"({"topology": {"kind": "custom", "links": [{"a": "n0"}]}})"));
  CHECK(e.path() == "topology.links.0");
  CHECK_THAT(e.expected(), Catch::Contains("missing required key \"b\""));

  e = schema_error(json::parse(R"({"run": {"replications": 1e308}})"));
  CHECK(e.path() == "run.replications");
}

TEST_CASE("did-you-mean", "[suggest]") {
  const std::vector<std::string> c{"nodes", "kind", "link_bandwidth", "switch_radix"};
  CHECK(edit_distance("abc", "abc") == 0);
  CHECK(edit_distance("abc", "acb") == 1);  // transposition
  CHECK(edit_distance("Nodes", "nodes") == 0);
  CHECK(edit_distance("", "abc") == 3);
  CHECK(nearest("node", c) == "nodes");
  CHECK(nearest("swtich_radix", c) == "switch_radix");
  CHECK(nearest("LINK_BANDWIDTH", c) == "link_bandwidth");
  CHECK_FALSE(nearest("zzzzzz", c).has_value());
  CHECK_FALSE(nearest("nodes", c).has_value());
  CHECK(nearest("link", c) == "link_bandwidth");  // unique prefix
  CHECK(did_you_mean("kinf", c) == "did you mean \"kind\"?");
  CHECK(did_you_mean(std::string(10000, 'a'), c).empty());
}
