#pragma once
// Internal to the KV transfers (kv_transfer.cpp, kv_transfer_comm.cpp): slots of pending work
// indexed by a uint32_t that travels as an event tag, reused through a free list so that the
// vector stops growing at the most work pending at once.
#include <cstdint>
#include <vector>

namespace cs::serving::detail {

// A free slot of `slots` (a reused one, or a new default-constructed one at the end).
template <class Slot>
uint32_t take_slot(std::vector<Slot>& slots, std::vector<uint32_t>& free_slots) {
  if (!free_slots.empty()) {
    const uint32_t slot = free_slots.back();
    free_slots.pop_back();
    return slot;
  }
  slots.emplace_back();
  return static_cast<uint32_t>(slots.size() - 1);
}

}  // namespace cs::serving::detail
