#pragma once
// Internal to run.cpp: a training_run on its fleet (cs::fleet), without a network, and its
// summary block.
#include <functional>
#include <nlohmann/json.hpp>

#include "sim/engine/simulator.hpp"
#include "sim/fleet/training_run_config.hpp"
#include "sim/scenario/config.hpp"

namespace cs::world::detail {

// Runs config.training_run on `sim` until the job is done or run.until; returns the summary's
// "training_run" block. With `record`, the job's time series (state, nodes per market, cost,
// committed work) go to sim's Recorder.
nlohmann::json run_training_run(const scenario::Config& config, engine::Simulator& sim, bool record);

// docs/scenarios.md's keys (wall_time_s, goodput, interruptions, failures, checkpoints,
// lost_work_s, restore_time_s, cost_usd), then the breakdowns nested under their groups
// ("job", "checkpoint", "fleet", "time_in_state_s", "cost_usd_by_market",
// "node_hours_by_market"): TrainingRunResult::summary_numbers() with "group.name" nested.
nlohmann::json training_run_block(const fleet::TrainingRunResult& result);

// A training_run with workload.training (config.training_run_simulates_step): simulates the
// training step once on the scenario's topology and network (as a "training" scenario would),
// sets training_run.step_time_s to it, then checks the run's budget
// (check_training_run_budget, InputError at its key). Returns the step's summary block: the
// "training" block of that step, plus "model_checkpoint_bytes" (work::checkpoint_bytes: the
// checkpoint's size when fleet.checkpoint gives neither size nor write_time).
nlohmann::json resolve_training_run_step(scenario::Config& config, const std::function<bool()>& interrupted = {});

}  // namespace cs::world::detail
