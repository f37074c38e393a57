// common/free_slots.hpp: a slot is a new one at the end while none is free, then the last one
// freed, and a reused slot keeps what it held.
#include <catch2/catch.hpp>

#include <cstdint>
#include <type_traits>
#include <vector>

#include "common/free_slots.hpp"

TEST_CASE("take_slot appends while no slot is free, then reuses the last one freed") {
  std::vector<int> slots;
  std::vector<uint32_t> free_slots;
  CHECK(cs::take_slot(slots, free_slots) == 0u);
  CHECK(cs::take_slot(slots, free_slots) == 1u);
  CHECK(cs::take_slot(slots, free_slots) == 2u);
  CHECK(slots == std::vector<int>{0, 0, 0});  // new slots are default-constructed
  slots[0] = 7;
  slots[2] = 9;
  free_slots = {2, 0};
  CHECK(cs::take_slot(slots, free_slots) == 0u);  // the last one freed first
  CHECK(slots[0] == 7);                           // reused as it was left
  CHECK(cs::take_slot(slots, free_slots) == 2u);
  CHECK(free_slots.empty());
  CHECK(cs::take_slot(slots, free_slots) == 3u);
  CHECK(slots.size() == 4);
}

TEST_CASE("take_slot returns the free list's index type") {
  std::vector<double> slots;
  std::vector<std::size_t> free_slots;
  const auto slot = cs::take_slot(slots, free_slots);
  STATIC_REQUIRE(std::is_same_v<decltype(slot), const std::size_t>);
  CHECK(slot == 0);
}
