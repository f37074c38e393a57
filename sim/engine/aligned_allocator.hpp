#pragma once
// Storage for the event queue's arrays: aligned to cache lines, and for large arrays to 2 MiB
// and advised to use transparent huge pages (the heap is walked at random, and TLB misses cost
// more than cache misses there).
#include <cstddef>
#include <new>

namespace cs::engine {

namespace detail {
inline constexpr std::size_t kHugePageBytes = std::size_t{2} << 20;
// Storage of at least 2 MiB, aligned to 2 MiB and, on Linux, advised to use transparent huge
// pages: the heap is walked at random, and TLB misses cost more than cache misses there.
void* allocate_huge(std::size_t bytes);

// Minimal allocator returning storage aligned to `Align` bytes (cache lines for the heap).
template <class T, std::size_t Align>
struct AlignedAllocator {
  using value_type = T;
  template <class U>
  struct rebind {
    using other = AlignedAllocator<U, Align>;
  };
  AlignedAllocator() noexcept = default;
  template <class U>
  AlignedAllocator(const AlignedAllocator<U, Align>&) noexcept {}
  T* allocate(std::size_t n) {
    const std::size_t bytes = n * sizeof(T);
    if (bytes >= kHugePageBytes) return static_cast<T*>(allocate_huge(bytes));
    return static_cast<T*>(::operator new(bytes, std::align_val_t{Align}));
  }
  void deallocate(T* p, std::size_t n) noexcept {
    if (n * sizeof(T) >= kHugePageBytes) {
      ::operator delete(p, std::align_val_t{kHugePageBytes});
    } else {
      ::operator delete(p, std::align_val_t{Align});
    }
  }
  template <class U>
  bool operator==(const AlignedAllocator<U, Align>&) const noexcept {
    return true;
  }
};
}  // namespace detail

}  // namespace cs::engine
