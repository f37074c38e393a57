#pragma once
// Independent scenario runs in parallel (sweep points, compared fabrics).
#include <cstddef>
#include <exception>
#include <vector>

#include <tbb/parallel_for.h>
#include <tbb/task_arena.h>

namespace cs::studies {

// body(i) for i in [0, n) on at most `jobs` threads (0: TBB's default). Every index's
// exception is kept; afterwards the one with the lowest index is rethrown, so which error is
// reported does not depend on `jobs`.
template <class Body>
void for_each_index(std::size_t n, int jobs, Body body) {
  std::vector<std::exception_ptr> errors(n);
  tbb::task_arena arena(jobs > 0 ? jobs : tbb::task_arena::automatic);
  arena.execute([&] {
    tbb::parallel_for(std::size_t{0}, n, [&](std::size_t i) {
      try {
        body(i);
      } catch (...) {
        errors[i] = std::current_exception();
      }
    });
  });
  for (const auto& e : errors)
    if (e) std::rethrow_exception(e);
}

}  // namespace cs::studies
