// Whether a winner is significant: the best estimate against the runner-up by their 95%
// intervals.
#include <catch2/catch.hpp>

#include <cmath>

#include "sim/studies/significance.hpp"

using cs::studies::Estimate;
using cs::studies::not_significant;

TEST_CASE("A winner within the runner-up's interval is not significant; apart, it is", "[studies][significance]") {
  // 10 +- 1 against 11.5 +- 1: the intervals [9, 11] and [10.5, 12.5] overlap.
  const auto close = not_significant("time_s", {{"b", 11.5, 1.0}, {"a", 10.0, 1.0}, {"c", 30.0, 1.0}}, true);
  REQUIRE(close);
  CHECK(close->find("time_s: a (10 +- 1) against b (11.5 +- 1)") == 0);
  CHECK(close->find("not significant") != std::string::npos);
  // 10 +- 1 against 12.5 +- 1: apart by more than the two half-widths.
  CHECK_FALSE(not_significant("time_s", {{"a", 10.0, 1.0}, {"b", 12.5, 1.0}}, true));
  // Higher is better: the greatest wins, against the next greatest.
  const auto higher = not_significant("busbw", {{"a", 10.0, 1.0}, {"b", 11.5, 1.0}, {"c", 2.0, 0.1}}, false);
  REQUIRE(higher);
  CHECK(higher->find("busbw: b (11.5 +- 1) against a (10 +- 1)") == 0);
}

TEST_CASE("Nothing to judge: one estimate, no intervals, or numbers that are not finite", "[studies][significance]") {
  CHECK_FALSE(not_significant("x", {{"a", 1.0, 5.0}}, true));
  CHECK_FALSE(not_significant("x", {}, true));
  CHECK_FALSE(not_significant("x", {{"a", 1.0, 0.0}, {"b", 1.0, 0.0}}, true));  // one replication each
  CHECK_FALSE(not_significant("x", {{"a", 1.0, 1.0}, {"b", std::nan(""), 1.0}}, true));
  // Equal means with intervals: the seeds cannot tell them apart.
  CHECK(not_significant("x", {{"a", 1.0, 0.5}, {"b", 1.0, 0.5}}, true));
}
