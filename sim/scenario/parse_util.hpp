#pragma once
// Internal: typed accessors for parse_config. Each reads `key` of the object `obj` found at
// dot path `at` (the object's own path; "" for the top level), applies the default when the
// key is absent or null, converts quantities to SI units and checks ranges; every failure is
// an InputError naming "<at>.<key>".
#include <array>
#include <cstdint>
#include <optional>
#include <span>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include <nlohmann/json.hpp>

#include "common/enum_table.hpp"
#include "sim/scenario/input_error.hpp"
#include "sim/scenario/quantity.hpp"

namespace cs::scenario::detail {

using json = nlohmann::json;

std::string join_path(std::string_view at, std::string_view key);
std::string join_path(std::string_view at, std::size_t index);

// The member, or nullptr when absent, null or `obj` is not an object.
const json* member(const json& obj, std::string_view key);
// The member when it is an object; an empty object when absent.
const json& object_or_empty(const json& obj, std::string_view key, std::string_view at);

// Integer in [min, max]. Accepts integral floats (8.0); rejects 8.5 and huge values.
int64_t int_value(const json& v, const std::string& path, int64_t min, int64_t max);
int64_t get_int(const json& obj, std::string_view key, std::string_view at, int64_t def,
                int64_t min, int64_t max);

enum class Sign { any, non_negative, positive };
// A quantity of `kind`, in SI units, with the sign rule and a sanity maximum per kind
// (so that later arithmetic stays finite).
double quantity_value(const json& v, QuantityKind kind, Sign sign, const std::string& path);
double get_quantity(const json& obj, std::string_view key, std::string_view at, QuantityKind kind,
                    Sign sign, double def);

// A plain number in [min, max].
double number_value(const json& v, const std::string& path, double min, double max);
double get_number(const json& obj, std::string_view key, std::string_view at, double def,
                  double min, double max);
bool get_bool(const json& obj, std::string_view key, std::string_view at, bool def);

// A count for a message: whole below a million, else 3 significant digits ("8.64e+13").
std::string rounded_count(double n);

// The lowest share of a GPU's peak (FLOP/s or HBM bandwidth) a kernel may be given: no kernel
// runs a thousand times below its roofline, and a 1e-300 share would time ops at infinity.
inline constexpr double kMinEfficiency = 1e-3;

// The most times a periodic event (an autoscaler's evaluation, a sample of the time series)
// may fire in one run: the run's event budget for a loop, about a second of events on one core.
inline constexpr double kMaxPeriodicEvents = 1e7;
// Throws InputError at `path` when an event every `period_s` over `horizon_s` (run.until, or the
// run's expected length) fires more than kMaxPeriodicEvents times: a 1 ns period is a hang.
void check_period(double period_s, double horizon_s, const std::string& path);
std::string get_string(const json& obj, std::string_view key, std::string_view at,
                       std::string def);

// One accepted name of an enumeration; `value` empty = named by the contract, not yet built.
template <class E>
struct Choice {
  std::string_view name;
  std::optional<E> value;
};

// The choices of a key that takes an enumeration: the scenario names of its table
// (NameUse::scenario) in the table's order, then `planned` names (refused as not implemented).
template <class E, std::size_t N>
std::vector<Choice<E>> choices_of(const std::array<EnumName<E>, N>& table,
                                  std::span<const std::string_view> planned = {}) {
  std::vector<Choice<E>> choices;
  for (const EnumName<E>& e : table)
    if (e.use == NameUse::scenario) choices.push_back({e.name, e.value});
  for (const std::string_view name : planned) choices.push_back({name, std::nullopt});
  return choices;
}

// The choices of a key that takes part of an enumeration: the scenario names of `table` whose
// value keep(value) accepts, in the table's order.
template <class E, std::size_t N, class Keep>
std::vector<Choice<E>> choices_where(const std::array<EnumName<E>, N>& table, Keep keep) {
  std::vector<Choice<E>> choices;
  for (const Choice<E>& c : choices_of(table))
    if (keep(*c.value)) choices.push_back(c);
  return choices;
}

[[noreturn]] void throw_choice_error(const std::string& path, const std::string& given,
                                     const std::vector<std::string>& available,
                                     const std::vector<std::string>& planned);

// "\"a\", \"b\"": the choices that are available.
template <class E>
std::string choice_names(const std::vector<Choice<E>>& choices) {
  std::string s;
  for (const auto& c : choices)
    if (c.value) s += (s.empty() ? "\"" : ", \"") + std::string(c.name) + "\"";
  return s;
}

template <class E>
E choice_value(const json& v, const std::string& path, const std::vector<Choice<E>>& choices) {
  std::vector<std::string> available, planned;
  for (const auto& c : choices) (c.value ? available : planned).emplace_back(c.name);
  if (!v.is_string()) throw InputError(path, "expected one of " + choice_names(choices) + "; got " + describe_value(v));
  const auto& given = v.get_ref<const std::string&>();
  for (const auto& c : choices)
    if (c.name == given && c.value) return *c.value;
  throw_choice_error(path, given, available, planned);
}

template <class E>
E get_choice(const json& obj, std::string_view key, std::string_view at,
             const std::vector<Choice<E>>& choices, E def) {
  const json* v = member(obj, key);
  return v ? choice_value(*v, join_path(at, key), choices) : def;
}

// A choice the file must make: no default.
template <class E>
E required_choice(const json& obj, std::string_view key, std::string_view at, const std::vector<Choice<E>>& choices) {
  const json* v = member(obj, key);
  if (!v) throw InputError(join_path(at, key), "required: one of " + choice_names(choices));
  return choice_value(*v, join_path(at, key), choices);
}

// The same over every scenario name of an enumeration's table (choices_of(table)).
template <class E, std::size_t N>
E choice_value(const json& v, const std::string& path, const std::array<EnumName<E>, N>& table) {
  return choice_value(v, path, choices_of(table));
}

template <class E, std::size_t N>
E get_choice(const json& obj, std::string_view key, std::string_view at, const std::array<EnumName<E>, N>& table,
             E def) {
  return get_choice(obj, key, at, choices_of(table), def);
}

template <class E, std::size_t N>
E required_choice(const json& obj, std::string_view key, std::string_view at,
                  const std::array<EnumName<E>, N>& table) {
  return required_choice(obj, key, at, choices_of(table));
}

}  // namespace cs::scenario::detail
