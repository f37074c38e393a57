#include "workloads/traffic.hpp"

namespace cs::work {

std::vector<FlowSpec> expand_traffic(const TrafficSpec& spec, int ranks) {
  std::vector<FlowSpec> out;
  switch (spec.pattern) {
    case TrafficPattern::permutation: {
      const int shift = ((spec.shift % ranks) + ranks) % ranks;
      if (shift == 0) break;
      out.reserve(ranks);
      for (int i = 0; i < ranks; ++i) out.push_back({i, (i + shift) % ranks, spec.bytes, 0.0});
      break;
    }
    case TrafficPattern::incast:
      out.reserve(ranks);
      for (int i = 0; i < ranks; ++i)
        if (i != spec.incast_dst) out.push_back({i, spec.incast_dst, spec.bytes, 0.0});
      break;
    case TrafficPattern::all_to_all:
      out.reserve(static_cast<std::size_t>(ranks) * (ranks - 1));
      // Each rank sends to every other rank, all at once (the worst case for the fabric).
      for (int i = 0; i < ranks; ++i)
        for (int k = 1; k < ranks; ++k) out.push_back({i, (i + k) % ranks, spec.bytes, 0.0});
      break;
    case TrafficPattern::flows:
      for (const auto& f : spec.flows)
        if (f.src != f.dst) out.push_back(f);
      break;
  }
  return out;
}

}  // namespace cs::work
