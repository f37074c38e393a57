#pragma once
// Internal helpers shared by the loader's sources (not part of the public interface).
#include <cstddef>
#include <iosfwd>
#include <string>

#include <nlohmann/json.hpp>

namespace cs::scenario::detail {

// At most max_bytes + 1 bytes of `in` (one more than allowed, so the caller can tell an input
// that is too long), read in chunks: memory grows with what the input holds, not with the
// limit. Throws std::ios_base::failure only if the stream does.
std::string read_at_most(std::istream& in, std::size_t max_bytes);

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
