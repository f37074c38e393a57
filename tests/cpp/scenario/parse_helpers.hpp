#pragma once
// Shared by the scenario tests: parse a scenario from JSON text, or get the InputError it
// raises (failing the test when there is none).
#include <catch2/catch.hpp>

#include "sim/scenario/load.hpp"

namespace cs::scenario::test {

inline Config parse(const char* text) { return parse_config(nlohmann::json::parse(text)); }

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
