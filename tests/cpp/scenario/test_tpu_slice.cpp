// topology.kind "tpu_slice": a TPU generation's slice as the ICI torus of its shape.
#include <catch2/catch.hpp>

#include "parse_helpers.hpp"

using namespace cs::scenario;
using cs::scenario::test::config_error;
using cs::scenario::test::parse;

TEST_CASE("tpu_slice: a v5p 4x4x4 cube is a 64-chip torus of the chip's ICI links", "[config][tpu]") {
  const Config c = parse(R"({"hardware": {"gpu": "TPU-v5p"}, "topology": {"kind": "tpu_slice", "shape": [4, 4, 4]}})");
  CHECK(c.topology.kind == cs::topo::TopologyKind::torus);
  CHECK(c.topology.dims == std::vector<int>{4, 4, 4});
  CHECK(c.topology.nodes == 64);
  CHECK(c.topology.node.gpus == 1);
  CHECK(c.topology.node.nics == 1);
  CHECK(c.topology.link_bandwidth_Bps == 100e9);          // one ICI link, one direction
  CHECK(c.topology.node.nic_bandwidth_Bps == 600e9);      // the chip's 6 links
  CHECK(c.topology.link_latency_s == Approx(0.5e-6));
  CHECK(c.warnings.empty());
  const Config e = parse(R"({"hardware": {"gpu": "TPU-v6e"}, "topology": {"kind": "tpu_slice", "shape": [16, 8]}})");
  CHECK(e.topology.nodes == 128);
  CHECK(e.topology.link_bandwidth_Bps == 100e9);
  CHECK(e.topology.node.nic_bandwidth_Bps == 400e9);
  // Sub-cube shapes the tables list, and whole cubes up to the largest slice.
  for (const char* shape : {"[2, 2, 1]", "[2, 4, 4]", "[8, 16, 16]", "[16, 16, 24]"}) {
    INFO(shape);
    const std::string doc = std::string(R"({"hardware": {"gpu": "TPU-v5p"}, "topology": {"kind": "tpu_slice", "shape": )") +
                            shape + "}}";
    CHECK_NOTHROW(parse(doc.c_str()));
  }
}

TEST_CASE("tpu_slice errors: a shape the generation does not offer names the nearest", "[config][tpu]") {
  struct Bad {
    const char* text;
    const char* path;
    const char* expected;
    const char* hint;
  };
  const Bad cases[] = {
      {R"({"hardware": {"gpu": "TPU-v5p"}, "topology": {"kind": "tpu_slice", "shape": [4, 4, 5]}})", "topology.shape",
       "multiple of 4, at most 6144 chips; got 4x4x5", "nearest TPU-v5p slice: 4x4x4"},
      {R"({"hardware": {"gpu": "TPU-v5p"}, "topology": {"kind": "tpu_slice", "shape": [16, 16, 32]}})",
       "topology.shape", "got 16x16x32", "nearest TPU-v5p slice: 12x16x32"},  // 6,144 chips, 4 steps away
      {R"({"hardware": {"gpu": "TPU-v5e"}, "topology": {"kind": "tpu_slice", "shape": [5, 16]}})", "topology.shape",
       "1x1, 2x2, 2x4, 4x4, 4x8, 8x8, 8x16, 16x16; got 5x16", "nearest TPU-v5e slice: 8x16"},
      {R"({"hardware": {"gpu": "TPU-v6e"}, "topology": {"kind": "tpu_slice", "shape": [4, 4, 4]}})", "topology.shape",
       "got 4x4x4", "nearest TPU-v6e slice: 4x4"},
      {R"({"hardware": {"gpu": "TPU-v4"}, "topology": {"kind": "tpu_slice"}})", "topology.shape",
       "needs its shape", "[4, 4, 4]"},
      {R"({"topology": {"kind": "tpu_slice", "shape": [4, 4, 4]}})", "hardware.gpu", "hardware.gpu is \"H100-SXM\"",
       "\"TPU-v5p\""},
      {R"({"hardware": {"gpu": "TPU-v5p", "node": {"gpus": 4}}, "topology": {"kind": "tpu_slice", "shape": [4, 4, 4]}})",
       "hardware.node.gpus", "one chip per torus position", "remove"},
      {R"({"hardware": {"gpu": "TPU-v5p"}, "topology": {"kind": "tpu_slice", "shape": [4, 4, 4], "dims": [4, 4, 4]}})",
       "topology.dims", "applies only", ""},
      {R"({"hardware": {"gpu": "TPU-v5p"}, "topology": {"kind": "tpu_slice", "shape": [4, 4, 4], "nodes": 16}})",
       "topology.nodes", "has 64 chips", "remove topology.nodes"},
  };
  for (const Bad& b : cases) {
    INFO(b.text);
    const InputError e = config_error(b.text);
    CHECK(e.path() == b.path);
    CHECK_THAT(e.expected(), Catch::Contains(b.expected));
    CHECK_THAT(e.hint(), Catch::Contains(b.hint));
  }
  // shape on another kind has no effect: a warning, as other kinds' keys give.
  const Config t = parse(R"({"topology": {"kind": "torus", "dims": [2, 2], "shape": [2, 2]}})");
  REQUIRE(t.warnings.size() == 1);
  CHECK_THAT(t.warnings[0], Catch::Contains("topology.shape: has no effect on a torus"));
}

TEST_CASE("tpu_slice: slices join copies of the slice by the data-center network", "[config][tpu]") {
  const Config c = parse(
      R"({"hardware": {"gpu": "TPU-v5p"}, "topology": {"kind": "tpu_slice", "shape": [4, 4, 4], "slices": 2}})");
  CHECK(c.topology.slices == 2);
  CHECK(c.topology.nodes == 128);
  CHECK(c.topology.dcn_bandwidth_Bps == 50e9 / 8);  // v5p's 50 Gb/s per chip
  CHECK(c.topology.dcn_latency_s == c.topology.link_latency_s);
  CHECK(c.warnings.empty());
  const Config e = parse(
      R"({"hardware": {"gpu": "TPU-v5e"}, "topology": {"kind": "tpu_slice", "shape": [16, 16], "slices": 4, "dcn_latency": "5us"}})");
  CHECK(e.topology.nodes == 1024);
  CHECK(e.topology.dcn_bandwidth_Bps == 25e9 / 8);
  CHECK(e.topology.dcn_latency_s == Approx(5e-6));
  // A DCN key on one slice does nothing: a warning says so.
  const Config one = parse(
      R"({"hardware": {"gpu": "TPU-v6e"}, "topology": {"kind": "tpu_slice", "shape": [4, 4], "dcn_bandwidth": "100Gbps"}})");
  REQUIRE(one.warnings.size() == 1);
  CHECK_THAT(one.warnings[0], Catch::Contains("topology.dcn_bandwidth: has no effect on one slice"));
  // TPU-v4 has no built-in per-chip DCN figure: it must be given.
  const InputError v4 = config_error(
      R"({"hardware": {"gpu": "TPU-v4"}, "topology": {"kind": "tpu_slice", "shape": [4, 4, 4], "slices": 2}})");
  CHECK(v4.path() == "topology.dcn_bandwidth");
  CHECK_THAT(v4.expected(), Catch::Contains("needs the DCN bandwidth per chip"));
  CHECK_THAT(v4.hint(), Catch::Contains("50Gbps"));
  const Config given = parse(
      R"({"hardware": {"gpu": "TPU-v4"}, "topology": {"kind": "tpu_slice", "shape": [4, 4, 4], "slices": 2, "dcn_bandwidth": "100Gbps"}})");
  CHECK(given.topology.dcn_bandwidth_Bps == 12.5e9);
}
