#pragma once
// Shared by the scenario tests: parse a scenario from JSON text, or get the InputError it
// raises (failing the test when there is none). A text whose workload names no kind gets
// "collective": scenario files must name their workload's kind (tested on its own with
// parse_config), and these tests are about the other keys.
#include <catch2/catch.hpp>

#include "sim/scenario/load.hpp"

namespace cs::scenario::test {

inline Config parse(const char* text) {
  nlohmann::json doc = nlohmann::json::parse(text);
  if (doc.is_object() && !doc.contains("workload")) doc["workload"] = nlohmann::json::object();
  if (doc.is_object() && doc["workload"].is_object() && !doc["workload"].contains("kind"))
    doc["workload"]["kind"] = "collective";
  return parse_config(doc);
}

inline InputError config_error(const char* text) {
  try {
    parse(text);
  } catch (const InputError& e) {
    return e;
  }
  FAIL("no error for " << text);
  throw;  // unreachable
}

}  // namespace cs::scenario::test
