#include "sim/scenario/quantity.hpp"

#include <array>
#include <cctype>
#include <charconv>
#include <cmath>
#include <span>

#include "sim/scenario/input_error.hpp"

namespace cs::scenario {
namespace {

struct Unit {
  std::string_view name;
  double factor;  // to SI base units
};

// Units are case-sensitive: "Gbps" is bits, "GBps" is bytes.
constexpr Unit kTimeUnits[] = {
    {"ns", 1e-9}, {"us", 1e-6}, {"\xC2\xB5s", 1e-6} /* U+00B5 micro sign */,
    {"\xCE\xBCs", 1e-6} /* U+03BC mu */, {"ms", 1e-3}, {"s", 1}, {"min", 60}, {"h", 3600},
    {"d", 86400}};
constexpr Unit kByteUnits[] = {
    {"B", 1},      {"KB", 1e3},       {"kB", 1e3},       {"MB", 1e6},       {"GB", 1e9},
    {"TB", 1e12},  {"PB", 1e15},      {"KiB", 0x1p10},   {"MiB", 0x1p20},   {"GiB", 0x1p30},
    {"TiB", 0x1p40}, {"PiB", 0x1p50}};
constexpr Unit kBitUnits[] = {{"b", 1.0 / 8},  {"Kb", 1e3 / 8}, {"kb", 1e3 / 8}, {"Mb", 1e6 / 8},
                              {"Gb", 1e9 / 8}, {"Tb", 1e12 / 8}, {"Pb", 1e15 / 8}};
constexpr Unit kFlopsUnits[] = {{"FLOPS", 1},      {"KFLOPS", 1e3},  {"MFLOPS", 1e6},
                                {"GFLOPS", 1e9},   {"TFLOPS", 1e12}, {"PFLOPS", 1e15},
                                {"EFLOPS", 1e18}};
constexpr Unit kPerTimeUnits[] = {{"/s", 1},           {"/min", 1.0 / 60}, {"/h", 1.0 / 3600},
                                  {"/d", 1.0 / 86400}};

struct KindInfo {
  std::string_view name;      // "a time"
  std::string_view accepted;  // for messages
  std::string_view units;     // the list, for hints
  std::string_view key;       // schema definition name
  std::string_view noun;      // "time"
};

constexpr std::array<KindInfo, 7> kKinds{{
    {"a time", "seconds as a number, or a string such as \"1.5us\" or \"5min\"",
     "ns, us (or \xC2\xB5s), ms, s, min, h, d", "time", "time"},
    {"a size in bytes", "bytes as a number, or a string such as \"80GB\" or \"80GiB\"",
     "B, KB, MB, GB, TB, PB (decimal), KiB, MiB, GiB, TiB, PiB (binary)", "bytes", "bytes"},
    {"a bandwidth", "bytes/s as a number, or a string such as \"400Gbps\" or \"50GB/s\"",
     "bps, Kbps, Mbps, Gbps, Tbps (bits/s); B/s, KB/s, MB/s, GB/s, TB/s, KiB/s, MiB/s, GiB/s, "
     "TiB/s (bytes/s, also written GBps)",
     "bandwidth", "bandwidth"},
    {"a compute rate", "FLOP/s as a number, or a string such as \"989TFLOPS\"",
     "FLOPS, KFLOPS, MFLOPS, GFLOPS, TFLOPS, PFLOPS, EFLOPS (also TFLOP/s)", "flops", "compute rate"},
    {"a rate", "events per second as a number, or a string such as \"100/s\" or \"6/h\"",
     "/s, /min, /h, /d", "rate", "rate"},
    {"an amount of money", "USD as a number, or a string such as \"$12.5\" or \"12.5USD\"",
     "$ prefix or USD suffix", "money", "money"},
    {"a price rate", "USD per second as a number, or a string such as \"$2.49/h\"",
     "$<amount>/s, /min, /h, /d (or <amount>USD/h)", "money_rate", "price rate"},
}};

const KindInfo& info(QuantityKind kind) { return kKinds[static_cast<std::size_t>(kind)]; }

std::string units_hint(QuantityKind kind) {
  return "units of " + std::string(info(kind).noun) + ": " + std::string(info(kind).units);
}

std::string_view trim(std::string_view s) {
  while (!s.empty() && (s.front() == ' ' || s.front() == '\t')) s.remove_prefix(1);
  while (!s.empty() && (s.back() == ' ' || s.back() == '\t')) s.remove_suffix(1);
  return s;
}

std::optional<double> find_unit(std::span<const Unit> units, std::string_view name) {
  for (const Unit& u : units)
    if (u.name == name) return u.factor;
  return std::nullopt;
}

// Bandwidth: "<bits>ps", "<bits>/s", "<bytes>ps", "<bytes>/s".
std::optional<double> bandwidth_unit(std::string_view unit) {
  std::string_view base;
  if (unit.ends_with("/s")) base = unit.substr(0, unit.size() - 2);
  else if (unit.ends_with("ps")) base = unit.substr(0, unit.size() - 2);
  else return std::nullopt;
  if (auto f = find_unit(kByteUnits, base)) return f;
  return find_unit(kBitUnits, base);
}

std::optional<double> flops_unit(std::string_view unit) {
  if (auto f = find_unit(kFlopsUnits, unit)) return f;
  if (unit.ends_with("FLOP/s")) {  // "TFLOP/s"
    std::string s(unit.substr(0, unit.size() - 2));
    s += "S";
    return find_unit(kFlopsUnits, s);
  }
  return std::nullopt;
}

std::optional<double> money_unit(std::string_view unit, bool dollar) {
  if (dollar) return unit.empty() ? std::optional<double>(1.0) : std::nullopt;
  return unit == "USD" ? std::optional<double>(1.0) : std::nullopt;
}

std::optional<double> unit_factor(QuantityKind kind, std::string_view unit, bool dollar) {
  if (dollar && kind != QuantityKind::money && kind != QuantityKind::money_rate) return std::nullopt;
  switch (kind) {
    case QuantityKind::time: return find_unit(kTimeUnits, unit);
    case QuantityKind::bytes: return find_unit(kByteUnits, unit);
    case QuantityKind::bandwidth: return bandwidth_unit(unit);
    case QuantityKind::flops: return flops_unit(unit);
    case QuantityKind::rate: return find_unit(kPerTimeUnits, unit);
    case QuantityKind::money: return money_unit(unit, dollar);
    case QuantityKind::money_rate: {
      auto slash = unit.find('/');
      if (slash == std::string_view::npos) return std::nullopt;
      auto per = find_unit(kPerTimeUnits, unit.substr(slash));
      auto money = money_unit(trim(unit.substr(0, slash)), dollar);
      if (!per || !money) return std::nullopt;
      return *per * *money;
    }
  }
  return std::nullopt;
}

struct Split {
  double number = 0;
  std::string_view unit;
  bool dollar = false;
  bool ok = false;
};

// "<number><ws><unit>" or "$<number><unit>".
Split split_text(std::string_view text) {
  Split out;
  text = trim(text);
  if (text.starts_with('$')) {
    out.dollar = true;
    text = trim(text.substr(1));
  }
  const char* first = text.data();
  const char* last = first + text.size();
  if (first != last && *first == '+') ++first;
  // from_chars accepts "inf" and "nan": only digits, '.', '-' may start a number here.
  if (first == last || !(std::isdigit(static_cast<unsigned char>(*first)) || *first == '.' ||
                         *first == '-'))
    return out;
  auto [ptr, ec] = std::from_chars(first, last, out.number);
  if (ec != std::errc() || !std::isfinite(out.number)) return out;
  out.unit = trim(std::string_view(ptr, static_cast<std::size_t>(last - ptr)));
  out.ok = true;
  return out;
}

std::string hint_for(std::string_view text, QuantityKind kind) {
  const std::string units = units_hint(kind);
  Split s = split_text(text);
  if (!s.ok) return units;
  if (s.unit.empty() && !s.dollar)
    return "a string needs a unit (give a plain number without quotes for SI units); " + units;
  for (std::size_t k = 0; k < kKinds.size(); ++k) {
    auto other = static_cast<QuantityKind>(k);
    if (other != kind && unit_factor(other, s.unit, s.dollar))
      return "\"" + std::string(s.unit.empty() ? "$" : s.unit) + "\" is a unit of " +
             std::string(kKinds[k].noun) + ", not of " + std::string(info(kind).noun) + "; " + units;
  }
  return units;
}

}  // namespace

std::string_view quantity_kind_name(QuantityKind kind) { return info(kind).name; }
std::string_view quantity_accepted(QuantityKind kind) { return info(kind).accepted; }

std::optional<QuantityKind> quantity_kind_from_name(std::string_view name) {
  for (std::size_t k = 0; k < kKinds.size(); ++k)
    if (kKinds[k].key == name) return static_cast<QuantityKind>(k);
  return std::nullopt;
}

std::optional<double> parse_quantity_text(std::string_view text, QuantityKind kind) {
  Split s = split_text(text);
  if (!s.ok || (s.unit.empty() && !s.dollar)) return std::nullopt;
  auto factor = unit_factor(kind, s.unit, s.dollar);
  if (!factor) return std::nullopt;
  const double v = s.number * *factor;
  if (!std::isfinite(v)) return std::nullopt;
  return v;
}

double parse_quantity(const nlohmann::json& value, QuantityKind kind, std::string_view path) {
  const std::string expected = "expected " + std::string(info(kind).name) + ": " +
                               std::string(info(kind).accepted) + "; got " + describe_value(value);
  if (value.is_number()) {
    const double v = value.get<double>();
    if (!std::isfinite(v)) throw InputError(std::string(path), expected);
    return v;
  }
  if (!value.is_string())
    throw InputError(std::string(path), expected, units_hint(kind));
  const auto& text = value.get_ref<const std::string&>();
  if (auto v = parse_quantity_text(text, kind)) return *v;
  throw InputError(std::string(path), expected, hint_for(text, kind));
}

std::string describe_value(const nlohmann::json& value) {
  std::string s;
  try {
    s = value.dump(-1, ' ', false, nlohmann::json::error_handler_t::replace);
  } catch (const nlohmann::json::exception&) {
    s = "<value>";
  }
  constexpr std::size_t kMax = 60;
  if (s.size() > kMax) {
    std::size_t cut = kMax;
    while (cut > 0 && (static_cast<unsigned char>(s[cut]) & 0xC0) == 0x80) --cut;  // UTF-8 boundary
    s = s.substr(0, cut) + "...";
  }
  return s;
}

}  // namespace cs::scenario
