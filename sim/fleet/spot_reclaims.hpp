#pragma once
// The spot reclaim process of a pool of spot instances: configuration and published defaults.
//
// Model (instance_pool.cpp runs it)
// - Independent reclaims: each exposed instance (held, not already under notice) is reclaimed
//   at `rate` (per instance-second, optionally shaped by an hour-of-day profile). The pool runs
//   this as one superposed Poisson process of intensity n * rate(t) over its n exposed
//   instances, redrawn whenever n changes, with the victim uniform among them: exact, because
//   the members are identical and the process is memoryless (hourly_rate.hpp).
// - Correlated reclaims: events at `correlated.events_per_s` per pool, each taking
//   ceil(pool_share * exposed) instances at once (at least 1), chosen uniformly.
// - A trace, when given, replays reclaims at fixed times instead of the rate.
// - Every reclaim first gives a notice; the instance goes `warning_s` later (AWS 2 min, GCP
//   and Azure 30 s). The owner may use the window (an emergency checkpoint).
// - Capacity may not come back at once: a replacement is granted after a `capacity_return`
//   delay; the pool's fallback policy may buy on-demand instead after a while
//   (instance_pool.hpp).
// Units: seconds, and rates per instance-second (a rate per node-hour r is r / 3600).
#include "sim/fleet/event_trace.hpp"
#include "sim/fleet/hourly_rate.hpp"
#include "sim/sources/distribution.hpp"

namespace cs::fleet {

// Notice before a spot instance is taken, by provider.
// AWS: "a warning that is issued two minutes before Amazon EC2 stops or terminates your Spot
//   Instance" (EC2 User Guide, "Spot Instance interruption notices").
// GCP: 30 s between ACPI G2 Soft Off and G3 Mechanical Off for Spot VMs (Compute Engine API,
//   Scheduling.skipGuestOsShutdown; "Create and use Spot VMs").
// Azure: Scheduled Events "Preempt" minimum notice 30 seconds (Azure docs, scheduled-events.md).
inline constexpr double kAwsSpotWarning_s = 120.0;
inline constexpr double kGcpSpotWarning_s = 30.0;
inline constexpr double kAzureSpotWarning_s = 30.0;

// Default reclaim rate: the AWS Spot Instance Advisor's top interruption bucket, ">20%" of
// instances reclaimed per month, which is where large GPU instances usually sit (the Advisor's
// "frequency of interruption represents the rate at which Spot has reclaimed capacity during the
// trailing month", in buckets <5%, 5-10%, 10-15%, 15-20%, >20%). Read as 20% per 30-day month:
// 0.2 / 720 h = 2.8e-4 per instance-hour. An estimate: the Advisor gives buckets, not rates,
// and per-type figures change month to month.
inline constexpr double kDefaultSpotReclaimsPerHour = 0.2 / 720.0;

struct CorrelatedReclaims {
  double events_per_s = 0.0;  // per pool
  double pool_share = 0.0;    // share of the exposed instances each event takes, in [0, 1]
};

struct SpotReclaimConfig {
  HourlyRate rate{kDefaultSpotReclaimsPerHour / 3600.0};
  EventTrace trace;  // when non-empty, replayed instead of `rate` and `correlated`
  CorrelatedReclaims correlated;
  double warning_s = kAwsSpotWarning_s;
  // Delay before a reclaimed instance's replacement is granted in the spot market. An estimate
  // (capacity for large GPU instances often returns within tens of minutes but sometimes not
  // for hours: exponential with a 30 min mean).
  sources::Distribution capacity_return = sources::Distribution::exponential(1800.0);

  void validate(const char* what) const;
};

}  // namespace cs::fleet
