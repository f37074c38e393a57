#include "sim/serving/load_balancer.hpp"

namespace cs::serving {

std::string_view to_string(BalancePolicy policy) { return name_of(kBalancePolicyNames, policy); }

int LoadBalancer::pick(std::span<Replica* const> candidates) {
  const auto n = static_cast<int>(candidates.size());
  if (n == 0) return -1;
  switch (policy_) {
    case BalancePolicy::round_robin:
      return static_cast<int>(next_++ % static_cast<uint64_t>(n));
    case BalancePolicy::least_outstanding: {
      int best = 0;
      for (int i = 1; i < n; ++i) {
        if (candidates[i]->outstanding() < candidates[best]->outstanding()) best = i;
      }
      return best;
    }
    case BalancePolicy::join_shortest_queue: {
      int best = 0;
      for (int i = 1; i < n; ++i) {
        const Replica& r = *candidates[i];
        const Replica& b = *candidates[best];
        if (r.queued() < b.queued() || (r.queued() == b.queued() && r.outstanding() < b.outstanding()))
          best = i;
      }
      return best;
    }
    case BalancePolicy::power_of_two: {
      if (n == 1) return 0;
      const auto first = static_cast<int>(rng_.uniform_int(static_cast<uint64_t>(n)));
      // The second draw is uniform over the others: skip over the first.
      auto second = static_cast<int>(rng_.uniform_int(static_cast<uint64_t>(n - 1)));
      if (second >= first) ++second;
      return candidates[second]->outstanding() < candidates[first]->outstanding() ? second : first;
    }
    case BalancePolicy::central_queue:
      for (int i = 0; i < n; ++i) {
        if (candidates[i]->can_start_now()) return i;
      }
      return -1;
  }
  return -1;
}

}  // namespace cs::serving
