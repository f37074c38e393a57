#pragma once
// Internal: the value forms of the fleet section (parse_fleet.cpp, parse_checkpoint.cpp), each
// read from the JSON value at `path` and reported there when wrong (InputError).
#include <optional>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "sim/fleet/event_trace.hpp"
#include "sim/scenario/parse_util.hpp"
#include "sim/sources/distribution.hpp"

namespace cs::scenario::detail {

// A distribution: a value (constant), or {"dist": "constant" | "exponential" | "lognormal" |
// "weibull" | "uniform" | "empirical", "mean", and "stddev" or "cv" (lognormal), "shape"
// (weibull), "low" and "high" (uniform), "values" and "weights" (empirical: a histogram; equal
// weights when not given)}: delays (times), a serving request's service_time, its token
// counts, a job's GPU count. `unit`: the quantity mean, stddev, low and high are (nullopt: plain numbers >= 0,
// such as token counts).
sources::Distribution distribution_value(const json& v, const std::string& path,
                                       std::optional<QuantityKind> unit = QuantityKind::time);
sources::Distribution get_distribution(const json& obj, std::string_view key, std::string_view at,
                                     sources::Distribution def,
                                     std::optional<QuantityKind> unit = QuantityKind::time);

// A replayed list of events that each take `instances` instances: a CSV file path (the header
// line, then "time_s,instances" rows; relative to the scenario file's folder: load.hpp) or
// the list itself, [{"time", "instances"}], times from the start of the run, non-decreasing.
fleet::EventTrace event_trace_value(const json& v, const std::string& path);

// A time (with `sign`), or one of `names`, each standing for a number of seconds ("auto",
// "none", a provider's notice...). An unknown name is an error listing the names.
using NamedTime = std::pair<std::string_view, double>;
double time_or_named(const json& v, const std::string& path, Sign sign,
                     const std::vector<NamedTime>& names);

// A quantity the contract states per node-hour (spot reclaims, prices) while a bare number
// is SI (per second). A bare number of at least `bare_limit_si` was surely meant per hour: it
// is refused, with a hint to write the unit (`example`, e.g. "0.0003/h"). Strings with a unit
// are taken as written.
double per_hour_quantity(const json& v, QuantityKind kind, const std::string& path,
                         double bare_limit_si, std::string_view example);

}  // namespace cs::scenario::detail
