#include "sim/scenario/quantity_range.hpp"

#include <cmath>
#include <cstdio>
#include <map>
#include <stdexcept>

#include "sim/scenario/document_util.hpp"
#include "sim/scenario/input_error.hpp"
#include "sim/scenario/parse_util.hpp"

namespace cs::scenario {
namespace {

// Every definition with a quantity kind and bounds, read once from the compiled-in schema.
const std::map<std::string, QuantityRange, std::less<>>& ranges() {
  static const auto table = [] {
    std::map<std::string, QuantityRange, std::less<>> out;
    for (const auto& [name, def] : detail::schema_json().at("definitions").items()) {
      const std::string kind_name = def.value("x-quantity", name);
      const auto kind = quantity_kind_from_name(kind_name);
      if (!kind || !def.contains("minimum") || !def.contains("maximum")) continue;
      out.emplace(name, QuantityRange{*kind, def["minimum"].get<double>(), def["maximum"].get<double>()});
    }
    return out;
  }();
  return table;
}

std::string number(double v) {
  char buf[32];
  std::snprintf(buf, sizeof buf, "%.4g", v);
  return buf;
}

}  // namespace

const QuantityRange& quantity_range(std::string_view definition) {
  const auto& table = ranges();
  const auto it = table.find(definition);
  if (it == table.end())
    throw std::logic_error("quantity_range: the schema has no ranged definition '" + std::string(definition) + "'");
  return it->second;
}

std::string format_quantity(double si, QuantityKind kind) {
  struct Unit {
    double factor;
    const char* name;
  };
  static const Unit time[] = {{1e-9, "ns"}, {1e-6, "us"}, {1e-3, "ms"}, {1, "s"}, {60, "min"}, {3600, "h"}, {86400, "d"}, {86400, "d"}};
  static const Unit bytes[] = {{1, "B"}, {1e3, "kB"}, {1e6, "MB"}, {1e9, "GB"}, {1e12, "TB"}, {1e15, "PB"}, {1e18, "EB"}, {1e21, "ZB"}};
  static const Unit rate[] = {{1, "B/s"}, {1e3, "kB/s"}, {1e6, "MB/s"}, {1e9, "GB/s"}, {1e12, "TB/s"}, {1e15, "PB/s"}, {1e18, "EB/s"}, {1e21, "ZB/s"}};
  static const Unit flops[] = {{1, "FLOP/s"},   {1e3, "kFLOP/s"},  {1e6, "MFLOP/s"}, {1e9, "GFLOP/s"},
                               {1e12, "TFLOP/s"}, {1e15, "PFLOP/s"}, {1e18, "EFLOP/s"}, {1e21, "ZFLOP/s"}};
  const Unit* units = nullptr;
  switch (kind) {
    case QuantityKind::time: units = time; break;
    case QuantityKind::bytes: units = bytes; break;
    case QuantityKind::bandwidth: units = rate; break;
    case QuantityKind::flops: units = flops; break;
    default: return number(si);
  }
  if (si == 0) return std::string("0 ") + units[kind == QuantityKind::time ? 3 : 0].name;
  // The largest unit the value reaches (days only up to a year: beyond, seconds read better).
  const Unit* best = &units[0];
  for (int i = 0; i < 8; ++i)
    if (std::fabs(si) >= units[i].factor) best = &units[i];
  if (kind == QuantityKind::time && std::fabs(si) >= 3.2e7) return number(si) + " s";
  return number(si / best->factor) + " " + best->name;
}

void check_range(double si, const nlohmann::json& given, std::string_view definition, const std::string& path) {
  const QuantityRange& r = quantity_range(definition);
  if (si >= r.min && si <= r.max) return;
  throw InputError(path, "expected " + std::string(quantity_kind_name(r.kind)) + " from " +
                             format_quantity(r.min, r.kind) + " to " + format_quantity(r.max, r.kind) + "; got " +
                             describe_value(given) +
                             (given.is_string() ? " (" + format_quantity(si, r.kind) + ")" : std::string()));
}

double ranged_quantity(const nlohmann::json& value, std::string_view definition, const std::string& path) {
  const double si = parse_quantity(value, quantity_range(definition).kind, path);
  check_range(si, value, definition, path);
  return si;
}

namespace detail {

double get_ranged(const nlohmann::json& obj, std::string_view key, std::string_view at, std::string_view definition,
                  double def, bool zero_means_none) {
  const nlohmann::json* v = member(obj, key);
  if (!v) return def;
  const std::string path = join_path(at, key);
  const double si = parse_quantity(*v, quantity_range(definition).kind, path);
  if (zero_means_none && si == 0) return 0;
  check_range(si, *v, definition, path);
  return si;
}

}  // namespace detail
}  // namespace cs::scenario
