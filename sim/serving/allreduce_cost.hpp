#pragma once
// The cost of one tensor-parallel collective of an LLM replica (llm_timing.hpp), as plain
// numbers that whoever knows the fabric fills in (sim/world, from the communication layer's
// model of the chip's collectives library). Units: seconds, bytes.
#include <cstddef>
#include <utility>
#include <vector>

namespace cs::serving {

// One collective (all-reduce, all-gather) of b bytes over the tensor-parallel GPUs: the lower
// envelope of affine costs fixed_s + b * per_byte_s, one per NCCL algorithm and protocol that
// can run it (NCCL's tuner runs the fastest for each size). No pieces: free.
struct AllReduceCost {
  struct Piece {
    double fixed_s = 0;     // latency: base + steps x per-step latency, >= 0
    double per_byte_s = 0;  // bandwidth term per byte of the buffer, >= 0
  };
  std::vector<Piece> pieces;
  double seconds(double bytes) const {
    double best = pieces.empty() ? 0 : pieces.front().fixed_s + bytes * pieces.front().per_byte_s;
    for (const Piece& p : pieces) {
      const double t = p.fixed_s + bytes * p.per_byte_s;
      best = t < best ? t : best;
    }
    return best;
  }
  // Drops every piece after the first that another is at most in both terms (the first of
  // equal ones kept): for bytes >= 0 its time is never below that one's, rounding included (a
  // product and a sum are monotone in each operand), so seconds() gives the same double from
  // fewer pieces. The first piece stays whatever it is: seconds() starts from its time, which
  // decides the result when it is NaN (an infinite per-byte term at 0 bytes, a NaN term).
  void drop_dominated() {
    std::vector<Piece> kept;
    for (std::size_t i = 0; i < pieces.size(); ++i) {
      bool dominated = false;
      for (std::size_t j = 0; i > 0 && j < pieces.size() && !dominated; ++j) {
        const Piece &a = pieces[i], &b = pieces[j];
        const bool at_most = b.fixed_s <= a.fixed_s && b.per_byte_s <= a.per_byte_s;
        const bool equal = b.fixed_s == a.fixed_s && b.per_byte_s == a.per_byte_s;
        dominated = j != i && at_most && (!equal || j < i);
      }
      if (!dominated) kept.push_back(pieces[i]);
    }
    pieces = std::move(kept);
  }
};

}  // namespace cs::serving
