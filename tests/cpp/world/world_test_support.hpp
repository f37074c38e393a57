#pragma once
// Shared by the world tests: a shipped scenario file, with --set overrides, as a Config.
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "sim/scenario/load.hpp"

namespace cs::world::test {

inline scenario::Config load(const std::string& file, const std::vector<std::string>& sets = {}) {
  nlohmann::json doc = scenario::read_scenario_file(file);
  for (const auto& s : sets) scenario::apply_override(doc, s);
  return scenario::parse_config(doc);
}

}  // namespace cs::world::test
