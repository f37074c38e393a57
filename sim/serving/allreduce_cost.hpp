#pragma once
// The cost of one tensor-parallel collective of an LLM replica (llm_timing.hpp), as plain
// numbers that whoever knows the fabric fills in (sim/world, from the communication layer's
// model of the chip's collectives library). Units: seconds, bytes.
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
};

}  // namespace cs::serving
