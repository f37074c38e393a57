#pragma once
// Generates a serving workload's requests one at a time, as the simulation runs: the next
// arrival time from the arrival process and the request's demand (service time or token
// counts) from the request distributions or the trace. Nothing is pre-generated: a trace is
// read record by record.
//
// Processes (work::ArrivalSpec): Poisson by exponential gaps; diurnal by thinning (Lewis and
// Shedler 1979) against a piecewise-constant majorant: in each 1/96 of the period,
// candidates at the segment's highest rate, each kept with probability rate(t) / that rate
// (about 98% are kept; a candidate past the segment's end restarts from it, the gaps being
// memoryless; a candidate whose uniform falls under a proven floor of the segment's rates is
// kept without computing rate(t): the same decision);
// bursty (MMPP-2) by racing the state's exponential gap against the state's remaining
// sojourn (memoryless, so a gap that crosses a switch is redrawn from the switch).
//
// Random streams: "<name>/arrivals" for times, "<name>/requests" for demands, so changing
// the request distribution does not move the arrival times.
#include <cstdint>
#include <fstream>
#include <memory>
#include <optional>
#include <string>

#include "sim/engine/random.hpp"
#include "sim/engine/simulator.hpp"
#include "sim/sources/distribution.hpp"
#include "workloads/arrivals.hpp"
#include "workloads/request_load.hpp"

namespace cs::sources {

// Which demand a request carries: a service time (plain server) or token counts (LLM).
enum class DemandKind : uint8_t { service_time, tokens };

struct Arrival {
  double time_s = 0;
  double service_s = 0;       // plain server demand
  int32_t prompt_tokens = 1;  // LLM demand
  int32_t output_tokens = 1;
  uint32_t prefix_id = 0;      // LLM: 0, or the shared prefix its prompt starts with
  int32_t prefix_tokens = 0;   // that prefix's length, <= prompt_tokens
};

class ArrivalSource {
 public:
  // Throws std::invalid_argument on an invalid spec or an unreadable trace file.
  ArrivalSource(engine::Simulator& sim, const work::ArrivalSpec& arrivals,
                const work::RequestSpec& requests, DemandKind demand,
                const std::string& name = "serving");
  // The same, drawing from streams the caller owns (they must outlive the source): a source
  // that touches no Simulator can draw on another thread (sim/jobs/job_feed.hpp).
  ArrivalSource(engine::RandomStream& times, engine::RandomStream& demands, const work::ArrivalSpec& arrivals,
                const work::RequestSpec& requests, DemandKind demand);

  // The next arrival after the previous one (the first after t = 0); nullopt when a trace
  // is exhausted. Times never decrease.
  std::optional<Arrival> next();

  uint64_t generated() const { return generated_; }

 private:
  double next_time();
  void fill_demand(Arrival& a, const work::TraceRecord* record);

  work::ArrivalSpec spec_;
  work::RequestSpec requests_;
  DemandKind demand_;
  engine::RandomStream& time_rng_;
  engine::RandomStream& demand_rng_;
  sources::DistributionSampler service_time_, prompt_tokens_, output_tokens_;
  double t_ = 0;
  // diurnal: the current thinning segment, its highest rate, and a floor under every rate
  // expected_rate_at computes in it (a candidate drawn under the floor is kept without its cos)
  double segment_end_s_ = -1;
  double segment_rate_ = 0;
  double segment_floor_ = 0;
  // bursty
  bool in_burst_ = false;
  double state_end_s_ = 0;
  // trace
  std::unique_ptr<std::ifstream> trace_file_;
  std::unique_ptr<work::TraceReader> trace_;
  uint64_t generated_ = 0;
};

}  // namespace cs::sources
