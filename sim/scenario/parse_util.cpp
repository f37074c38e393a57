#include "sim/scenario/parse_util.hpp"

#include <cmath>
#include <cstdio>

#include "sim/scenario/quantity_range.hpp"
#include "sim/scenario/suggest.hpp"

namespace cs::scenario::detail {

std::string join_path(std::string_view at, std::string_view key) {
  return at.empty() ? std::string(key) : std::string(at) + "." + std::string(key);
}
std::string join_path(std::string_view at, std::size_t index) {
  return join_path(at, std::to_string(index));
}

const json* member(const json& obj, std::string_view key) {
  if (!obj.is_object()) return nullptr;
  auto it = obj.find(key);
  return it == obj.end() || it->is_null() ? nullptr : &*it;
}

const json& object_or_empty(const json& obj, std::string_view key, std::string_view at) {
  static const json empty = json::object();  // immutable
  const json* v = member(obj, key);
  if (!v) return empty;
  if (!v->is_object()) throw InputError(join_path(at, key), "expected an object; got " + describe_value(*v));
  return *v;
}

namespace {
std::string range_words(int64_t min, int64_t max) {
  if (max == INT64_MAX) return ">= " + std::to_string(min);
  return "from " + std::to_string(min) + " to " + std::to_string(max);
}
}  // namespace

int64_t int_value(const json& v, const std::string& path, int64_t min, int64_t max) {
  const std::string expected = "expected an integer " + range_words(min, max) + "; got " + describe_value(v);
  if (v.is_number_unsigned()) {
    const uint64_t u = v.get<uint64_t>();
    if (u > static_cast<uint64_t>(max)) throw InputError(path, expected);
    return static_cast<int64_t>(u);
  }
  if (v.is_number_integer()) {
    const int64_t i = v.get<int64_t>();
    if (i < min || i > max) throw InputError(path, expected);
    return i;
  }
  if (v.is_number_float()) {
    const double d = v.get<double>();
    // Integral floats within +-2^53 are exact; anything else is not an integer we accept.
    if (!std::isfinite(d) || std::floor(d) != d || std::fabs(d) > 0x1p53)
      throw InputError(path, expected, std::isfinite(d) && std::fabs(d) <= 0x1p53 ? "this must be a whole number" : "");
    const auto i = static_cast<int64_t>(d);
    if (i < min || i > max) throw InputError(path, expected);
    return i;
  }
  throw InputError(path, expected, v.is_string() ? "write numbers without quotes" : "");
}

int64_t get_int(const json& obj, std::string_view key, std::string_view at, int64_t def,
                int64_t min, int64_t max) {
  const json* v = member(obj, key);
  return v ? int_value(*v, join_path(at, key), min, max) : def;
}

double quantity_value(const json& v, QuantityKind kind, Sign sign, const std::string& path) {
  const double x = parse_quantity(v, kind, path);
  const std::string what(quantity_kind_name(kind));
  if (sign == Sign::positive && !(x > 0))
    throw InputError(path, "expected " + what + " > 0; got " + describe_value(v));
  if (sign == Sign::non_negative && !(x >= 0))
    throw InputError(path, "expected " + what + " >= 0; got " + describe_value(v));
  // Sizes: whole bytes up to 1 ZB (quantity_range.hpp says why).
  if (kind == QuantityKind::bytes && x != 0) check_range(x, v, "bytes", path);
  // Sanity limits far above any real system, so sums and products stay finite.
  double limit = 1e30;
  switch (kind) {
    case QuantityKind::time: limit = 1e12; break;        // ~31700 years
    case QuantityKind::bytes: limit = 1e21; break;       // 1 ZB
    case QuantityKind::bandwidth: limit = 1e18; break;   // 1 EB/s
    case QuantityKind::flops: limit = 1e21; break;       // 1 ZFLOP/s
    default: break;
  }
  if (std::fabs(x) > limit)
    throw InputError(path, "expected " + what + " of at most " + describe_value(json(limit)) +
                               " in SI units; got " + describe_value(v));
  return x;
}

double get_quantity(const json& obj, std::string_view key, std::string_view at, QuantityKind kind,
                    Sign sign, double def) {
  const json* v = member(obj, key);
  return v ? quantity_value(*v, kind, sign, join_path(at, key)) : def;
}

double number_value(const json& v, const std::string& path, double min, double max) {
  if (!v.is_number() || !(v.get<double>() >= min) || !(v.get<double>() <= max))
    throw InputError(path, "expected a number from " + describe_value(json(min)) + " to " +
                               describe_value(json(max)) + "; got " + describe_value(v));
  return v.get<double>();
}

double get_number(const json& obj, std::string_view key, std::string_view at, double def,
                  double min, double max) {
  const json* v = member(obj, key);
  return v ? number_value(*v, join_path(at, key), min, max) : def;
}

std::string rounded_count(double n) {
  char buf[32];
  std::snprintf(buf, sizeof buf, n < 1e6 ? "%.0f" : "%.3g", n);
  return buf;
}

void check_period(double period_s, double horizon_s, const std::string& path) {
  if (!(period_s > 0) || !std::isfinite(horizon_s) || horizon_s / period_s <= kMaxPeriodicEvents) return;
  throw InputError(path, "expected a period of at least " + format_quantity(horizon_s / kMaxPeriodicEvents, QuantityKind::time) +
                             ": every " + format_quantity(period_s, QuantityKind::time) + " over " +
                             format_quantity(horizon_s, QuantityKind::time) + " is about " +
                             rounded_count(horizon_s / period_s) + " events; at most 1e7",
                   "a longer period, or a shorter run.until");
}

bool get_bool(const json& obj, std::string_view key, std::string_view at, bool def) {
  const json* v = member(obj, key);
  if (!v) return def;
  if (!v->is_boolean())
    throw InputError(join_path(at, key), "expected true or false; got " + describe_value(*v));
  return v->get<bool>();
}

std::string get_string(const json& obj, std::string_view key, std::string_view at, std::string def) {
  const json* v = member(obj, key);
  if (!v) return def;
  if (!v->is_string())
    throw InputError(join_path(at, key), "expected a string; got " + describe_value(*v));
  return v->get<std::string>();
}

void throw_choice_error(const std::string& path, const std::string& given,
                        const std::vector<std::string>& available,
                        const std::vector<std::string>& planned) {
  std::string list;
  for (const auto& a : available) list += (list.empty() ? "" : ", ") + a;
  for (const auto& p : planned)
    if (p == given) throw InputError(path, "'" + given + "' is not implemented yet; available: " + list);
  std::vector<std::string> all = available;
  all.insert(all.end(), planned.begin(), planned.end());
  throw InputError(path, "expected one of " + quoted_list(available) + "; got \"" + given + "\"",
                   did_you_mean(given, all));
}

}  // namespace cs::scenario::detail
