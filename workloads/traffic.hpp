#pragma once
// Raw traffic as data: which rank sends how many bytes to which rank, and when.
#include <array>
#include <cstdint>
#include <vector>

#include "common/enum_table.hpp"

namespace cs::work {

enum class TrafficPattern : uint8_t { permutation, incast, all_to_all, flows };
// workload.pattern.
inline constexpr auto kTrafficPatternNames = std::to_array<EnumName<TrafficPattern>>({
    {"permutation", TrafficPattern::permutation, "rank i sends to rank (i + shift) mod N"},
    {"incast", TrafficPattern::incast, "every other rank sends to rank dst"},
    {"all_to_all", TrafficPattern::all_to_all, "every rank sends to every other"},
    {"flows", TrafficPattern::flows, "the flows the file lists"},
});
static_assert(names_every_value<kTrafficPatternNames>());

struct FlowSpec {
  int src = 0, dst = 0;     // ranks
  double bytes = 0;         // > 0
  double start_s = 0;       // >= 0
};

struct TrafficSpec {
  TrafficPattern pattern = TrafficPattern::permutation;
  double bytes = 1 << 20;      // per flow, for the generated patterns
  int shift = 1;               // permutation: rank i -> (i + shift) mod N
  int incast_dst = 0;          // incast: every other rank -> this one
  std::vector<FlowSpec> flows; // pattern == flows
};

// The flows of a pattern over `ranks` ranks. Self-flows (src == dst) are left out.
std::vector<FlowSpec> expand_traffic(const TrafficSpec& spec, int ranks);

}  // namespace cs::work
