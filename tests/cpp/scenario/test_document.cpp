// Reading scenario text and files; --set paths.
#include <catch2/catch.hpp>

#include <filesystem>
#include <fstream>
#include <sstream>
#include <string>

#include "sim/scenario/document_util.hpp"
#include "sim/scenario/load.hpp"

using namespace cs::scenario;
using json = nlohmann::json;

namespace {

std::string error_path(const auto& fn) {
  try {
    fn();
  } catch (const InputError& e) {
    return e.path();
  }
  return "<no error>";
}

std::string error_text(const auto& fn) {
  try {
    fn();
  } catch (const InputError& e) {
    return e.what();
  }
  return "<no error>";
}

}  // namespace

TEST_CASE("scenario text: syntax, UTF-8, nesting, top level", "[document]") {
  CHECK(parse_scenario_text(R"({"a": 1})")["a"] == 1);
  CHECK(parse_scenario_text("\xEF\xBB\xBF{\"a\": 1}")["a"] == 1);  // a BOM is accepted
  CHECK_THAT(error_text([] { parse_scenario_text("{\n  \"a\": 1,\n}", "f.json"); }),
             Catch::Contains("f.json:3:1"));
  CHECK_THAT(error_text([] { parse_scenario_text("", "f.json"); }), Catch::Contains("empty"));
  CHECK_THAT(error_text([] { parse_scenario_text("[1]"); }), Catch::Contains("must be an object"));
  CHECK_THAT(error_text([] { parse_scenario_text("{\"a\": \"\xC3\x28\"}"); }),
             Catch::Contains("invalid UTF-8 at byte offset 7"));
  CHECK_THAT(error_text([] { parse_scenario_text("{\"a\": \"\xED\xA0\x80\"}"); }),  // surrogate
             Catch::Contains("invalid UTF-8"));
  CHECK_THAT(error_text([] { parse_scenario_text("{\"a\": \"\xC0\xAF\"}"); }),  // overlong
             Catch::Contains("invalid UTF-8"));
  CHECK_THAT(error_text([] { parse_scenario_text("{} x"); }), Catch::Contains("invalid JSON"));
  CHECK_THAT(error_text([] { parse_scenario_text("{\"a\": 1e999}"); }), Catch::Contains("invalid JSON"));
  CHECK(error_path([] { parse_scenario_text("{\"a\": [1, 2}"); }) == "");
}

TEST_CASE("deep nesting is refused before parsing", "[document]") {
  std::string deep(10'000'000, '[');
  CHECK_THAT(error_text([&] { parse_scenario_text(deep); }), Catch::Contains("nesting deeper than 64"));
  std::string ok = "{\"a\":" + std::string(62, '[') + std::string(62, ']') + "}";
  CHECK_NOTHROW(parse_scenario_text(ok));
  std::string too = "{\"a\":" + std::string(64, '[') + std::string(64, ']') + "}";
  CHECK_THROWS_AS(parse_scenario_text(too), InputError);
  // Brackets inside strings do not count.
  std::string in_string = "{\"a\": \"" + std::string(1000, '[') + "\\\"" + "\"}";
  CHECK_NOTHROW(parse_scenario_text(in_string));
}

TEST_CASE("scenario files: directories, missing files, size limit", "[document]") {
  CHECK_THAT(error_text([] { read_scenario_file(CS_SOURCE_DIR "/scenarios"); }),
             Catch::Contains("directory"));
  CHECK(error_path([] { read_scenario_file(CS_SOURCE_DIR "/scenarios"); }) == "");
  CHECK_THAT(error_text([] { read_scenario_file("/nonexistent/x.json"); }), Catch::Contains("no such file"));
  const auto tmp = std::filesystem::temp_directory_path() / "cs_scenario_big.json";
  {
    std::ofstream out(tmp, std::ios::binary);
    out << "{\"a\": \"";
    std::string chunk(1 << 20, 'x');
    for (std::size_t i = 0; i <= kMaxScenarioBytes >> 20; ++i) out << chunk;
    out << "\"}";
  }
  CHECK_THAT(error_text([&] { read_scenario_file(tmp.string()); }), Catch::Contains("at most"));
  std::filesystem::remove(tmp);
}

TEST_CASE("set_path creates objects, indexes lists, appends", "[document]") {
  json doc = json::object();
  set_path(doc, "topology.nodes", 64);
  CHECK(doc["topology"]["nodes"] == 64);
  set_path(doc, "topology.links.0.a", "n0");
  CHECK(doc["topology"]["links"][0]["a"] == "n0");
  set_path(doc, "topology.links.1", json{{"a", "n1"}});
  CHECK(doc["topology"]["links"].size() == 2);
  set_path(doc, "topology.links.0.bandwidth", "100Gbps");
  CHECK(doc["topology"]["links"][0]["bandwidth"] == "100Gbps");
  CHECK(error_path([&] { set_path(doc, "topology.links.5.a", 1); }) == "topology.links.5.a");
  CHECK_THAT(error_text([&] { set_path(doc, "topology.links.5.a", 1); }), Catch::Contains("beyond the end"));
  CHECK_THAT(error_text([&] { set_path(doc, "topology.nodes.x", 1); }),
             Catch::Contains("topology.nodes, which is a number"));
  CHECK_THAT(error_text([&] { set_path(doc, "topology.links.x", 1); }), Catch::Contains("list index"));
  CHECK_THROWS_AS(set_path(doc, "a..b", 1), InputError);
  CHECK_THROWS_AS(set_path(doc, "", 1), InputError);
}

TEST_CASE("apply_override parses JSON or takes a bare string", "[document]") {
  json doc = json::object();
  apply_override(doc, "topology.kind=dragonfly");
  CHECK(doc["topology"]["kind"] == "dragonfly");
  apply_override(doc, "workload.sizes=[1e6,1e9]");
  CHECK(doc["workload"]["sizes"] == json::array({1e6, 1e9}));
  apply_override(doc, "topology.nodes=64");
  CHECK(doc["topology"]["nodes"] == 64);
  apply_override(doc, "run.trace=false");
  CHECK(doc["run"]["trace"] == false);
  apply_override(doc, "name=a=b");
  CHECK(doc["name"] == "a=b");
  apply_override(doc, "topology.link_bandwidth=400Gbps");
  CHECK(doc["topology"]["link_bandwidth"] == "400Gbps");
  CHECK_THAT(error_text([&] { apply_override(doc, "topology.nodes"); }), Catch::Contains("no '='"));
  CHECK_THAT(error_text([&] { apply_override(doc, "=5"); }), Catch::Contains("empty path"));
  CHECK_THROWS_AS(apply_override(doc, "a=" + std::string(100, '[')), InputError);
}

TEST_CASE("a file is read up to one byte past the limit, whatever its size, in chunks", "[document]") {
  // Around the 64 KiB chunk and the limit: what is read is the input, cut at limit + 1.
  constexpr std::size_t kLimit = 100000;
  for (const std::size_t size : {std::size_t{0}, std::size_t{1}, std::size_t{65535}, std::size_t{65536},
                                 std::size_t{65537}, kLimit - 1, kLimit, kLimit + 1, kLimit + 2, 3 * kLimit}) {
    std::string input(size, '\0');
    for (std::size_t i = 0; i < size; ++i) input[i] = static_cast<char>('a' + i % 26);
    std::istringstream in(input);
    const std::string text = detail::read_at_most(in, kLimit);
    INFO("input of " << size << " bytes");
    CHECK(text.size() == std::min(size, kLimit + 1));
    CHECK(input.compare(0, text.size(), text) == 0);
  }
}

TEST_CASE("A file's input paths are relative to its folder; input_files lists them", "[scenario][document]") {
  namespace fs = std::filesystem;
  const fs::path dir = fs::temp_directory_path() / "clustersim_input_paths_test" / "project";
  fs::create_directories(dir);
  const fs::path file = dir / "scenario.json";
  std::ofstream(file) << R"({"workload": {"arrivals": {"trace": "traces/a.csv"}, "trace": "/abs/jobs.csv"},
    "fleet": {"interruptions": {"trace": "../r.csv"}, "failures": {"trace": [{"time": 1, "instances": 1}]}},
    "run": {"trace": "out.json"}})";
  const json doc = read_scenario_file(file.string());
  CHECK(doc["workload"]["arrivals"]["trace"] == (dir / "traces/a.csv").lexically_normal().string());
  CHECK(doc["workload"]["trace"] == "/abs/jobs.csv");  // absolute: kept
  CHECK(doc["fleet"]["interruptions"]["trace"] == (dir.parent_path() / "r.csv").lexically_normal().string());
  CHECK(doc["run"]["trace"] == "out.json");  // an output, relative to the working directory
  // The files it reads: the three named ones (a list of events is no file), never run.trace.
  const auto files = input_files(doc);
  REQUIRE(files.size() == 3);
  CHECK(files[0] == "/abs/jobs.csv");
  // Text given otherwise keeps its paths.
  const json text = parse_scenario_text(R"({"workload": {"trace": "traces/jobs.csv"}})");
  CHECK(text["workload"]["trace"] == "traces/jobs.csv");
  CHECK(input_files(text) == std::vector<std::string>{"traces/jobs.csv"});
  fs::remove_all(dir.parent_path());
}
