#include "sim/engine/aligned_allocator.hpp"

#if defined(__linux__)
#include <sys/mman.h>
#endif

namespace cs::engine {

void* detail::allocate_huge(std::size_t bytes) {
  void* p = ::operator new(bytes, std::align_val_t{kHugePageBytes});
#if defined(__linux__) && defined(MADV_HUGEPAGE)
  // Advice only: if the kernel declines, the memory still works with normal pages.
  (void)::madvise(p, bytes, MADV_HUGEPAGE);
#endif
  return p;
}

}  // namespace cs::engine
