#pragma once
// Internal helpers shared by the loader's sources (not part of the public interface).
#include <nlohmann/json.hpp>

namespace cs::scenario::detail {

// A copy of `doc` where every float with an integral value of magnitude <= 2^53 is an
// integer, so 8.0 passes as an integer and 8.5 does not. Depth is bounded by the caller.
nlohmann::json normalize_numbers(const nlohmann::json& doc);

}  // namespace cs::scenario::detail

namespace cs::scenario::detail {

// validate_schema() on a document already passed through normalize_numbers().
void validate_normalized(const nlohmann::json& doc);

// The parsed schema (scenarios/schema.json), built once, immutable.
const nlohmann::json& schema_json();

}  // namespace cs::scenario::detail
