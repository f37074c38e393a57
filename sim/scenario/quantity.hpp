#pragma once
// Quantities in scenario files: a JSON number in SI base units, or a string with a unit
// ("1.5us", "80GiB", "400Gbps", "50GB/s", "989TFLOPS", "100/s", "$12.5", "$2.49/h").
// Parsing converts to SI base units:
//   time -> seconds, bytes -> bytes, bandwidth -> bytes/s (bit units are divided by 8),
//   flops -> FLOP/s, rate -> 1/s, money -> USD, money_rate -> USD/s.
// The result is always finite. Sign and range checks are the caller's (parse_config's).
#include <optional>
#include <string>
#include <string_view>

#include <nlohmann/json.hpp>

namespace cs::scenario {

enum class QuantityKind { time, bytes, bandwidth, flops, rate, money, money_rate };

// "a time", "a bandwidth", ...
std::string_view quantity_kind_name(QuantityKind kind);
// What a value of this kind may look like, for messages:
//   'seconds as a number, or a string such as "1.5us" or "5min"'.
std::string_view quantity_accepted(QuantityKind kind);
// The kind whose schema definition is named `name` ("time", "bytes", "bandwidth", "flops",
// "rate", "money", "money_rate"); nullopt for any other name.
std::optional<QuantityKind> quantity_kind_from_name(std::string_view name);

// Parse a string such as "400Gbps" as a quantity of `kind`; nullopt when the text is not
// a finite number followed by one of the kind's units (optional whitespace between).
std::optional<double> parse_quantity_text(std::string_view text, QuantityKind kind);

// Parse the JSON value at `path` (dot path, for messages) as a quantity of `kind`.
// Throws InputError naming the path and the accepted units, with a hint when the unit
// belongs to another kind or the string lacks a unit.
double parse_quantity(const nlohmann::json& value, QuantityKind kind, std::string_view path);

// A short rendering of a JSON value for messages (strings quoted, long values cut).
std::string describe_value(const nlohmann::json& value);

}  // namespace cs::scenario
