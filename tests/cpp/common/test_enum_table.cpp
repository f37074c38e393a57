// common/enum_table.hpp: names both ways, aliases, values in order, and the compile-time check
// that a table names every enumerator.
#include <catch2/catch.hpp>

#include "common/enum_table.hpp"

namespace {

using cs::EnumName;
using cs::NameUse;

enum class Colour : unsigned char { red, green, blue };
// Not in enumerator order, with an alias and a name only the program writes.
inline constexpr auto kColourNames = std::to_array<EnumName<Colour>>({
    {"blue", Colour::blue, "the sky"},
    {"red", Colour::red, "a stop sign"},
    {"green", Colour::green, "grass", NameUse::output_only},
    {"crimson", Colour::red, "an alias of red"},
});
static_assert(cs::names_every_value<kColourNames>());

inline constexpr auto kTwoColours = std::to_array<EnumName<Colour>>({
    {"red", Colour::red, ""},
    {"green", Colour::green, ""},
});
static_assert(!cs::names_every_value<kTwoColours>(), "blue has no name");

inline constexpr auto kGappedColours = std::to_array<EnumName<Colour>>({
    {"red", Colour::red, ""},
    {"blue", Colour::blue, ""},
});
static_assert(!cs::names_every_value<kGappedColours>(), "green, below blue, has no name");

// Nested in a struct, an enumerator that ends in digits.
struct Holder {
  enum class Nested : unsigned char { first, rank0 };
};
inline constexpr auto kNestedNames = std::to_array<EnumName<Holder::Nested>>({
    {"first", Holder::Nested::first, ""},
    {"rank0", Holder::Nested::rank0, ""},
});
static_assert(cs::names_every_value<kNestedNames>());
inline constexpr auto kFirstNestedName = std::to_array<EnumName<Holder::Nested>>({{"first", Holder::Nested::first, ""}});
static_assert(!cs::names_every_value<kFirstNestedName>(), "rank0 has no name");

}  // namespace

TEST_CASE("name_of gives a value's first name; value_of reads any entry's name") {
  CHECK(cs::name_of(kColourNames, Colour::blue) == "blue");
  CHECK(cs::name_of(kColourNames, Colour::red) == "red");  // not the alias
  CHECK(cs::name_of(kColourNames, Colour::green) == "green");
  CHECK(cs::name_of(kTwoColours, Colour::blue) == "?");
  CHECK(cs::value_of(kColourNames, "crimson") == Colour::red);
  CHECK(cs::value_of(kColourNames, "green") == Colour::green);
  CHECK_FALSE(cs::value_of(kColourNames, "Red").has_value());
  CHECK_FALSE(cs::value_of(kColourNames, "").has_value());
}

TEST_CASE("values_of keeps the table's order") {
  constexpr auto values = cs::values_of(kColourNames);
  static_assert(values.size() == 4);
  CHECK(values[0] == Colour::blue);
  CHECK(values[1] == Colour::red);
  CHECK(values[2] == Colour::green);
  CHECK(values[3] == Colour::red);
}
