#pragma once
// Internal to run.cpp: the collective workload's summary block, the background work beside
// it, and the communication layer's errors as input errors at their JSON paths.
#include <string>

#include <nlohmann/json.hpp>

#include "sim/engine/simulator.hpp"
#include "sim/network/background_load.hpp"
#include "sim/network/comm.hpp"
#include "sim/scenario/config.hpp"
#include "sim/scenario/input_error.hpp"

namespace cs::world::detail {

// A CommError as an InputError at the path of its field: network.<field> for the network's
// keys (granularity, protocol, model), else <workload_at>.<field>.
scenario::InputError input_error(const net::CommError& e, const std::string& workload_at);

// config.background's work, prepared on `load` (errors at workload.background.<i>).
void add_background(const scenario::Config& config, net::Comm& comm, net::BackgroundLoad& load);
// The summary's list of background work: what ran and how often.
nlohmann::json background_summary(const net::BackgroundLoad& load);

// Runs config.collective (every algorithm and size in turn) beside config.background on
// `comm`; returns the summary's "collective" block. A size that run.until cuts is left out,
// and so are the ones after it ("sizes_not_run" counts them).
nlohmann::json run_collective(const scenario::Config& config, engine::Simulator& sim, net::Comm& comm);

// What validate checks of the collectives without running: each algorithm has a plan on
// each group (for groups of at most kMaxCheckedPlanRanks; larger ones at run time).
inline constexpr std::size_t kMaxCheckedPlanRanks = 512;
void check_collectives(const scenario::Config& config, net::Comm& comm);

}  // namespace cs::world::detail
