// Loading the price table: the compiled-in defaults, then the scenario's overrides.
#include "sim/scenario/prices.hpp"

#include <string>

#include "sim/scenario/parse_util.hpp"

namespace cs::scenario {
namespace {

using json = nlohmann::json;
using detail::join_path;

constexpr std::string_view kOverride = "scenario override (topology.prices)";
constexpr const char* kClassKeys[] = {"switch_port", "nic", "transceiver", "twin_port_transceiver", "aoc"};
// Classes a bill cannot do without (an empty twin_port_transceiver or aoc table means none used).
constexpr const char* kRequiredClassKeys[] = {"switch_port", "nic", "transceiver"};
constexpr const char* kItemKeys[] = {"copper_cable", "optical_cable", "gpu_node"};

topo::PriceItem item(const json& v, const std::string& path) {
  if (!v.is_object()) throw InputError(path, "an object { \"usd\", \"watts\", \"source\" }");
  topo::PriceItem p;
  p.usd = detail::get_number(v, "usd", path, 0.0, 0.0, 1e12);
  p.watts = detail::get_number(v, "watts", path, 0.0, 0.0, 1e9);
  p.source = detail::get_string(v, "source", path, std::string(kOverride));
  return p;
}

topo::PriceClasses classes(const json& v, const std::string& path) {
  if (!v.is_object()) throw InputError(path, "an object of speed classes such as \"400Gbps\"");
  topo::PriceClasses c;
  for (const auto& [speed, entry] : v.items()) {
    const std::string at = join_path(path, speed);
    const auto Bps = parse_quantity_text(speed, QuantityKind::bandwidth);
    if (!Bps || !(*Bps > 0))
      throw InputError(at, "a speed class key: a bandwidth such as \"400Gbps\"");
    c.by_gbps[*Bps * 8 / 1e9] = item(entry, at);
  }
  return c;
}

// Overridden items without a source of their own are marked as overrides.
void mark_overrides(json& merged, const json& over) {
  auto mark = [](json& m, const json& o) {
    if (o.is_object() && !o.contains("source") && m.is_object()) m["source"] = kOverride;
  };
  for (const char* k : kItemKeys)
    if (over.contains(k)) mark(merged[k], over[k]);
  for (const char* k : kClassKeys)
    if (over.contains(k) && over[k].is_object())
      for (const auto& [speed, o] : over[k].items()) mark(merged[k][speed], o);
}

}  // namespace

topo::PriceTable load_prices(const json& doc) {
  static const json defaults = json::parse(prices_text());
  json merged = defaults;
  merged.erase("description");
  constexpr std::string_view at = "topology.prices";
  const json* topology = detail::member(doc, "topology");
  const json* over = topology ? detail::member(*topology, "prices") : nullptr;
  if (over) {
    if (!over->is_object()) throw InputError(std::string(at), "an object with price table keys");
    for (const auto& [k, v] : over->items()) {
      const std::string path = join_path(at, k);
      if (!merged.contains(k))
        throw InputError(path, "a price table key: switch_port, nic, transceiver, twin_port_transceiver, aoc, "
                               "copper_cable, optical_cable or gpu_node");
      const bool removable = k == "twin_port_transceiver" || k == "aoc";
      if (!v.is_object() && !(removable && v.is_null()))
        throw InputError(path, removable ? "an object, or null for none" : "an object");
    }
    merged.merge_patch(*over);
    mark_overrides(merged, *over);
  }
  topo::PriceTable t;
  t.switch_port = classes(merged.at("switch_port"), join_path(at, "switch_port"));
  t.nic = classes(merged.at("nic"), join_path(at, "nic"));
  t.transceiver = classes(merged.at("transceiver"), join_path(at, "transceiver"));
  // null (merge-patch's removal) takes a table out: fiber for row reach, single-port ends.
  const auto optional_classes = [&](const char* k) {
    return merged.contains(k) ? classes(merged.at(k), join_path(at, k)) : topo::PriceClasses{};
  };
  t.twin_port_transceiver = optional_classes("twin_port_transceiver");
  t.aoc = optional_classes("aoc");
  t.copper_cable = item(merged.at("copper_cable"), join_path(at, "copper_cable"));
  t.optical_cable = item(merged.at("optical_cable"), join_path(at, "optical_cable"));
  t.gpu_node = item(merged.at("gpu_node"), join_path(at, "gpu_node"));
  for (const char* k : kRequiredClassKeys)
    if (!merged.contains(k) || merged.at(k).empty())
      throw InputError(join_path(at, k), "at least one speed class");
  return t;
}

}  // namespace cs::scenario
