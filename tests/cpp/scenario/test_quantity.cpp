// Quantities: every unit, decimal vs binary, bits vs bytes, and the errors.
#include <catch2/catch.hpp>

#include <cmath>

#include "sim/scenario/input_error.hpp"
#include "sim/scenario/quantity.hpp"

using cs::scenario::InputError;
using cs::scenario::parse_quantity;
using cs::scenario::parse_quantity_text;
using cs::scenario::QuantityKind;
using json = nlohmann::json;

namespace {

struct Row {
  const char* text;
  QuantityKind kind;
  double si;
};

const Row kRows[] = {
    // time
    {"1ns", QuantityKind::time, 1e-9},
    {"1.5us", QuantityKind::time, 1.5e-6},
    {"1.5\xC2\xB5s", QuantityKind::time, 1.5e-6},
    {"1.5\xCE\xBCs", QuantityKind::time, 1.5e-6},
    {"2ms", QuantityKind::time, 2e-3},
    {"3s", QuantityKind::time, 3},
    {"5min", QuantityKind::time, 300},
    {"12h", QuantityKind::time, 43200},
    {"7d", QuantityKind::time, 604800},
    {"2 ms", QuantityKind::time, 2e-3},
    {" 1e-3 s ", QuantityKind::time, 1e-3},
    {".5s", QuantityKind::time, 0.5},
    {"-1s", QuantityKind::time, -1},  // the sign is the caller's to check
    // bytes
    {"1B", QuantityKind::bytes, 1},
    {"1KB", QuantityKind::bytes, 1e3},
    {"1kB", QuantityKind::bytes, 1e3},
    {"1MB", QuantityKind::bytes, 1e6},
    {"80GB", QuantityKind::bytes, 80e9},
    {"1TB", QuantityKind::bytes, 1e12},
    {"1PB", QuantityKind::bytes, 1e15},
    {"1KiB", QuantityKind::bytes, 1024},
    {"1MiB", QuantityKind::bytes, 1048576},
    {"80GiB", QuantityKind::bytes, 80.0 * 1073741824},
    {"1TiB", QuantityKind::bytes, 1099511627776.0},
    {"1PiB", QuantityKind::bytes, 1125899906842624.0},
    {"64 MiB", QuantityKind::bytes, 64.0 * 1048576},
    // bandwidth: bits
    {"8bps", QuantityKind::bandwidth, 1},
    {"8Kbps", QuantityKind::bandwidth, 1e3},
    {"8Mbps", QuantityKind::bandwidth, 1e6},
    {"400Gbps", QuantityKind::bandwidth, 50e9},
    {"400Gb/s", QuantityKind::bandwidth, 50e9},
    {"1.6Tbps", QuantityKind::bandwidth, 200e9},
    // bandwidth: bytes
    {"50GB/s", QuantityKind::bandwidth, 50e9},
    {"50GBps", QuantityKind::bandwidth, 50e9},
    {"1B/s", QuantityKind::bandwidth, 1},
    {"1Bps", QuantityKind::bandwidth, 1},
    {"1KB/s", QuantityKind::bandwidth, 1e3},
    {"1MB/s", QuantityKind::bandwidth, 1e6},
    {"1TB/s", QuantityKind::bandwidth, 1e12},
    {"1GiB/s", QuantityKind::bandwidth, 1073741824.0},
    {"1GiBps", QuantityKind::bandwidth, 1073741824.0},
    {"1MiB/s", QuantityKind::bandwidth, 1048576.0},
    {"450 GB/s", QuantityKind::bandwidth, 450e9},
    // flops
    {"1FLOPS", QuantityKind::flops, 1},
    {"1GFLOPS", QuantityKind::flops, 1e9},
    {"989TFLOPS", QuantityKind::flops, 989e12},
    {"2.25PFLOPS", QuantityKind::flops, 2.25e15},
    {"989TFLOP/s", QuantityKind::flops, 989e12},
    // rate
    {"100/s", QuantityKind::rate, 100},
    {"6/min", QuantityKind::rate, 0.1},
    {"36/h", QuantityKind::rate, 0.01},
    // money
    {"$12.5", QuantityKind::money, 12.5},
    {"12.5USD", QuantityKind::money, 12.5},
    {"12.5 USD", QuantityKind::money, 12.5},
    // money rate
    {"$3.6/h", QuantityKind::money_rate, 0.001},
    {"$60/min", QuantityKind::money_rate, 1},
    {"3.6USD/h", QuantityKind::money_rate, 0.001},
};

}  // namespace

TEST_CASE("quantity strings convert to SI units", "[quantity]") {
  for (const Row& r : kRows) {
    INFO(r.text);
    auto v = parse_quantity_text(r.text, r.kind);
    REQUIRE(v.has_value());
    CHECK(*v == Approx(r.si).epsilon(1e-12));
    CHECK(parse_quantity(json(r.text), r.kind, "x") == Approx(r.si).epsilon(1e-12));
  }
}

TEST_CASE("quantity numbers are SI already", "[quantity]") {
  CHECK(parse_quantity(json(5e10), QuantityKind::bandwidth, "x") == 5e10);
  CHECK(parse_quantity(json(3), QuantityKind::time, "x") == 3);
  CHECK(parse_quantity(json(-2), QuantityKind::bytes, "x") == -2);
}

TEST_CASE("bits and bytes, decimal and binary differ", "[quantity]") {
  CHECK(*parse_quantity_text("8Gbps", QuantityKind::bandwidth) == Approx(1e9));
  CHECK(*parse_quantity_text("8GBps", QuantityKind::bandwidth) == Approx(8e9));
  CHECK(*parse_quantity_text("1GB", QuantityKind::bytes) == 1e9);
  CHECK(*parse_quantity_text("1GiB", QuantityKind::bytes) == 1073741824.0);
}

TEST_CASE("bad quantity text is rejected", "[quantity]") {
  const char* bad[] = {"", " ", "100", "GB", "1.5", "nan", "inf", "NaNs", "infs", "1e999GB",
                       "1..5GB", "1 G B", "5gb", "1.5 ", "$", "$x", "400gbps", "1 2GB", "0x10GB"};
  for (const char* text : bad) {
    INFO(text);
    CHECK_FALSE(parse_quantity_text(text, QuantityKind::bytes).has_value());
  }
  CHECK_FALSE(parse_quantity_text("5us", QuantityKind::bandwidth).has_value());
  CHECK_FALSE(parse_quantity_text("$5", QuantityKind::bytes).has_value());
  CHECK_FALSE(parse_quantity_text("5/s", QuantityKind::money_rate).has_value());
  CHECK_FALSE(parse_quantity_text("$5", QuantityKind::money_rate).has_value());
}

TEST_CASE("quantity errors name the path, the accepted units and a hint", "[quantity]") {
  try {
    parse_quantity(json("5us"), QuantityKind::bandwidth, "topology.link_bandwidth");
    FAIL("no error");
  } catch (const InputError& e) {
    CHECK(e.path() == "topology.link_bandwidth");
    CHECK(std::string(e.what()) ==
          "error: topology.link_bandwidth: expected a bandwidth: bytes/s as a number, or a string "
          "such as \"400Gbps\" or \"50GB/s\"; got \"5us\"\n  hint: \"us\" is a unit of time, not of "
          "bandwidth; units of bandwidth: bps, Kbps, Mbps, Gbps, Tbps (bits/s); B/s, KB/s, MB/s, "
          "GB/s, TB/s, KiB/s, MiB/s, GiB/s, TiB/s (bytes/s, also written GBps)");
  }
  try {
    parse_quantity(json("100"), QuantityKind::time, "run.until");
    FAIL("no error");
  } catch (const InputError& e) {
    CHECK(e.path() == "run.until");
    CHECK_THAT(e.hint(), Catch::Contains("needs a unit"));
  }
  CHECK_THROWS_AS(parse_quantity(json(true), QuantityKind::time, "x"), InputError);
  CHECK_THROWS_AS(parse_quantity(json(nullptr), QuantityKind::time, "x"), InputError);
  CHECK_THROWS_AS(parse_quantity(json::array(), QuantityKind::time, "x"), InputError);
  CHECK_THROWS_AS(parse_quantity(json(std::nan("")), QuantityKind::time, "x"), InputError);
  CHECK_THROWS_AS(parse_quantity(json(INFINITY), QuantityKind::time, "x"), InputError);
  CHECK_THROWS_WITH(parse_quantity(json("80GB"), QuantityKind::time, "x"),
                    Catch::Contains("is a unit of bytes"));
}

TEST_CASE("describe_value cuts long values", "[quantity]") {
  const std::string s = cs::scenario::describe_value(json(std::string(1000, 'a')));
  CHECK(s.size() < 80);
  CHECK(cs::scenario::describe_value(json("x")) == "\"x\"");
}
