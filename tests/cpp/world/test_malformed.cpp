// The malformed-scenario suite: every file in tests/malformed/ must fail with an InputError
// at the path, and with the text, that tests/malformed/expected.json gives for it, when it is
// parsed or else when its world is assembled (what `clustersim validate` does).
#include <catch2/catch.hpp>

#include <filesystem>
#include <fstream>
#include <set>

#include "sim/scenario/load.hpp"
#include "sim/world/run.hpp"

using namespace cs::scenario;
using json = nlohmann::json;

namespace fs = std::filesystem;

TEST_CASE("malformed scenarios are InputErrors with the expected path", "[malformed]") {
  const fs::path dir = fs::path(CS_SOURCE_DIR) / "tests" / "malformed";
  std::ifstream in(dir / "expected.json");
  REQUIRE(in);
  const json manifest = json::parse(in);

  std::set<std::string> files;
  for (const auto& entry : fs::directory_iterator(dir))
    if (entry.path().filename() != "expected.json") files.insert(entry.path().filename().string());
  std::set<std::string> listed;
  for (const auto& [name, want] : manifest.items()) listed.insert(name);
  CHECK(files == listed);
  CHECK(files.size() >= 35);

  for (const auto& [name, want] : manifest.items()) {
    INFO("file: " << name);
    const std::string path = want.at("path").get<std::string>();
    const std::string contains = want.at("contains").get<std::string>();
    bool threw = false;
    try {
      cs::world::check_buildable(parse_config(read_scenario_file((dir / name).string())));
    } catch (const InputError& e) {
      threw = true;
      INFO("message: " << e.what());
      CHECK(e.path() == path);
      CHECK_THAT(std::string(e.what()), Catch::Contains(contains));
      CHECK_THAT(std::string(e.what()), Catch::StartsWith("error: " + (path.empty() ? "<scenario>" : path) + ": "));
    } catch (const std::exception& e) {
      FAIL("not an InputError: " << e.what());
    }
    CHECK(threw);
  }
}
