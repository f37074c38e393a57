#pragma once
// Slots of a vector reused through a free list: the vector stops growing at the most items held
// at once, and an item's index (a handle, an event tag) stays its own while it is held.
#include <vector>

namespace cs {

// The index of a slot of `slots` to fill: the last one freed (taken off the end of
// `free_slots`, so that a slot freed just before is reused while its memory is warm), else a
// new default-constructed one at the end. A reused slot keeps what it held: the caller sets
// every field it reads.
template <class Slot, class Index>
Index take_slot(std::vector<Slot>& slots, std::vector<Index>& free_slots) {
  if (!free_slots.empty()) {
    const Index slot = free_slots.back();
    free_slots.pop_back();
    return slot;
  }
  slots.emplace_back();
  return static_cast<Index>(slots.size() - 1);
}

}  // namespace cs
