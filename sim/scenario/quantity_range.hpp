#pragma once
// Physically meaningful ranges of the quantities the network runs on. The numbers live in the
// scenario schema (scenarios/schema.json, definitions "link_bandwidth", "latency", "interval",
// "bytes": "minimum" and "maximum" in SI units, so a JSON Schema validator enforces them on
// numbers), and are read from there here, so the schema, the parser, its messages and the
// generated reference cannot disagree. Strings with units are checked here, after conversion.
//
// Why these bounds (the schema's descriptions repeat them):
//   link_bandwidth 1 B/s .. 100 TB/s, per link and direction: the fastest links built (NVLink
//     5: 0.9 TB/s each way per GPU) with a hundredfold margin; rates of bytes per second are
//     kept for hand-worked cases (the SimGrid cross-check's 100 B/s cable). Bytes <= 1e21 over
//     >= 1 B/s keep every transfer time <= 1e21 s, finite, so no time computation overflows.
//   latency 0 .. 1 h, one way: a link slower than an hour to answer is down, not slow.
//   interval >= 1 ns (or 0: none): nothing in the model happens faster.
//   bytes >= 1 B: a transfer moves whole bytes; below one byte times underflow to 0.
#include <string>
#include <string_view>

#include <nlohmann/json.hpp>

#include "sim/scenario/quantity.hpp"

namespace cs::scenario {

struct QuantityRange {
  QuantityKind kind;
  double min, max;  // SI units, inclusive
};

// The range of schema definition `definition`; std::logic_error when the schema has none.
const QuantityRange& quantity_range(std::string_view definition);

// "1 kB/s", "100 TB/s", "1 ns", "1 h": an SI value with a readable unit of its kind.
std::string format_quantity(double si, QuantityKind kind);

// The value at `path` as a quantity of the definition's kind within its range; InputError
// "expected <kind> from <min> to <max>; got ..." (units in the message) otherwise.
double ranged_quantity(const nlohmann::json& value, std::string_view definition, const std::string& path);
// The same check of an SI value already parsed (schema validation reports through it).
void check_range(double si, const nlohmann::json& given, std::string_view definition, const std::string& path);

namespace detail {
// obj[key] (at path `at`) within the definition's range; `def` when absent. With
// zero_means_none, 0 is accepted as "none" besides the range.
double get_ranged(const nlohmann::json& obj, std::string_view key, std::string_view at, std::string_view definition,
                  double def, bool zero_means_none = false);
}  // namespace detail

}  // namespace cs::scenario
