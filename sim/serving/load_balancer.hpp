#pragma once
// Picks the replica a request goes to, among the replicas taking requests.
//
//   round_robin          each replica in turn (the order of the candidate list, cycling).
//   least_outstanding    fewest requests in flight there (in service + queued), over every
//                        replica: NGINX's least_conn; ties to the lowest index.
//   join_shortest_queue  fewest requests waiting there (queued, not yet in service); ties by
//                        fewest outstanding, then lowest index. For an LLM server this is the
//                        scheduler's waiting queue (vLLM's num_requests_waiting).
//   power_of_two         two distinct replicas drawn uniformly at random, the one with fewer
//                        outstanding requests taken (Mitzenmacher 2001; Envoy's LEAST_REQUEST
//                        with its default choice_count of 2); ties to the first draw.
//   central_queue        not a pick: the pool holds requests in one FCFS queue and hands the
//                        head to a replica when it has a free slot (the M/M/c station; Knative's
//                        activator with a container-concurrency limit). pick() then returns the
//                        first candidate that can start a request now, or -1.
//
// Candidates are passed in a stable order (by replica id); pick() is O(candidates) for the
// least-* policies, O(1) otherwise. Random draws come from the balancer's own stream.
#include <array>
#include <cstdint>
#include <span>
#include <string_view>

#include "common/enum_table.hpp"
#include "sim/engine/random.hpp"
#include "sim/serving/replica.hpp"

namespace cs::serving {

enum class BalancePolicy : uint8_t {
  round_robin,
  least_outstanding,
  join_shortest_queue,
  power_of_two,
  central_queue
};
// fleet.balancer.
inline constexpr auto kBalancePolicyNames = std::to_array<EnumName<BalancePolicy>>({
    {"power_of_two", BalancePolicy::power_of_two, "the less loaded of two random replicas (Envoy's least request)"},
    {"round_robin", BalancePolicy::round_robin, "each replica in turn"},
    {"least_outstanding", BalancePolicy::least_outstanding, "fewest requests in flight (NGINX least_conn)"},
    {"join_shortest_queue", BalancePolicy::join_shortest_queue, "fewest requests waiting"},
    {"central_queue", BalancePolicy::central_queue, "one FCFS queue, a request to the first free slot (M/M/c)"},
});
static_assert(names_every_value<kBalancePolicyNames>());

std::string_view to_string(BalancePolicy policy);

class LoadBalancer {
 public:
  LoadBalancer(BalancePolicy policy, engine::RandomStream& rng) : policy_(policy), rng_(rng) {}
  BalancePolicy policy() const { return policy_; }
  // Index into `candidates` of the replica to use; -1 when there is none (empty list, or
  // central_queue with no free slot).
  int pick(std::span<Replica* const> candidates);

 private:
  BalancePolicy policy_;
  engine::RandomStream& rng_;
  uint64_t next_ = 0;  // round robin cursor
};

}  // namespace cs::serving
