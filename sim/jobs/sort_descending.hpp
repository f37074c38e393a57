#pragma once
// Sorting the few indices a scheduler orders (queues, placement domains) by a key, highest
// first, ties kept in their order: an insertion sort, in place. std::stable_sort allocates a
// merge buffer on every call, which cost a placement across domains more than the sort.
#include <cstddef>
#include <vector>

namespace cs::jobs {

// Sorts `v` by key(v[i]) descending, stably. O(n^2): for tens of elements.
template <class Key>
void sort_descending_stable(std::vector<int>& v, Key key) {
  for (std::size_t i = 1; i < v.size(); ++i) {
    const int x = v[i];
    const auto k = key(x);
    std::size_t j = i;
    for (; j > 0 && k > key(v[j - 1]); --j) v[j] = v[j - 1];
    v[j] = x;
  }
}

}  // namespace cs::jobs
