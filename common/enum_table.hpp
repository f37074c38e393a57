#pragma once
// One table per enumeration: each value's name, its spelling in scenario files, summaries,
// reports and messages, with a one-line description. A table is declared beside its
// enumeration, in the enumeration's header:
//
//   inline constexpr auto kMarketNames = std::to_array<EnumName<Market>>({
//       {"on_demand", Market::on_demand, "pay per second of use, never reclaimed"}, ...});
//   static_assert(names_every_value<kMarketNames>());
//
// to_string(value) is name_of(table, value); the scenario parser reads the names through the
// same table (sim/scenario/parse_util.hpp), and a test checks the scenario schema's "enum"
// lists against the tables (tests/cpp/scenario/test_enum_tables.cpp).
//
// A table's order is the order messages list the names in ("expected one of ..."). Two entries
// may share a value (an alias): the first is the value's name. Header-only, the standard
// library alone.
#include <array>
#include <cstddef>
#include <optional>
#include <string_view>

namespace cs {

// Who may write a name: a scenario file (the parser accepts it), or only the program (a
// summary or a message prints it; no scenario key takes it).
enum class NameUse : unsigned char { scenario, output_only };

template <class E>
struct EnumName {
  std::string_view name;
  E value;
  std::string_view description;  // one line: what the value means
  NameUse use = NameUse::scenario;
};

// The name of `value`: the first entry that holds it; "?" when none does (a table that
// passes names_every_value holds every enumerator).
template <class E, std::size_t N>
constexpr std::string_view name_of(const std::array<EnumName<E>, N>& table, E value) {
  for (const EnumName<E>& e : table)
    if (e.value == value) return e.name;
  return "?";
}

// The value an entry of any use names `name`; nullopt when none does.
template <class E, std::size_t N>
constexpr std::optional<E> value_of(const std::array<EnumName<E>, N>& table, std::string_view name) {
  for (const EnumName<E>& e : table)
    if (e.name == name) return e.value;
  return std::nullopt;
}

// The entries' values, in the table's order.
template <class E, std::size_t N>
constexpr std::array<E, N> values_of(const std::array<EnumName<E>, N>& table) {
  std::array<E, N> out{};
  for (std::size_t i = 0; i < N; ++i) out[i] = table[i].value;
  return out;
}

namespace enum_table_detail {

// Whether V is one of its enumeration's enumerators, not merely a value of its underlying
// type. GCC and Clang spell a template argument that names an enumerator by its qualified
// name ("[with auto V = cs::fleet::Market::spot]", "[V = cs::fleet::Market::spot]", with
// "{anonymous}::" or "(anonymous namespace)::" inside an unnamed namespace) and any other value
// as a number, cast or not ("(cs::fleet::Market)3").
template <auto V>
consteval bool is_enumerator() {
  constexpr std::string_view signature = __PRETTY_FUNCTION__;
  constexpr std::size_t begin = signature.rfind("V = "), end = signature.rfind(']');
  static_assert(begin != std::string_view::npos && end != std::string_view::npos && begin < end,
                "unexpected __PRETTY_FUNCTION__ format");
  constexpr std::string_view argument = signature.substr(begin + 4, end - begin - 4);
  constexpr std::size_t cast = argument.rfind(')');
  constexpr std::string_view tail = cast == std::string_view::npos ? argument : argument.substr(cast + 1);
  return tail.empty() || tail.find_first_not_of("-0123456789") != std::string_view::npos;
}

// How many different values the table holds (an alias repeats one).
template <class E, std::size_t N>
constexpr std::size_t distinct_values(const std::array<EnumName<E>, N>& table) {
  std::size_t n = 0;
  for (std::size_t i = 0; i < N; ++i) {
    bool first = true;
    for (std::size_t j = 0; j < i; ++j) first = first && table[j].value != table[i].value;
    n += first ? 1 : 0;
  }
  return n;
}

}  // namespace enum_table_detail

// True when `table` names every enumerator of its enumeration, whose enumerators take the
// default values 0, 1, 2, ...: the table's k distinct values are all below k (so they are
// 0 .. k-1) and k is no enumerator. Asserted beside each table, it does what -Wswitch did for
// the switch statements the tables replace: an enumerator added without a name fails the build.
template <const auto& table>
consteval bool names_every_value() {
  using E = decltype(table.front().value);
  constexpr std::size_t k = enum_table_detail::distinct_values(table);
  for (const auto& e : table)
    if (static_cast<std::size_t>(e.value) >= k) return false;
  return !enum_table_detail::is_enumerator<static_cast<E>(k)>();
}

}  // namespace cs
