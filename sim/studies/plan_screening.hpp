#pragma once
// The first two passes of plan search (plan_search.hpp) for the plans of one placement of ranks
// on GPUs: each plan's bound (compute/step_bound.hpp: compute at its roofline time, every
// transfer at its time alone on the idle fabric, no simulation) and its contention-free
// screening (one replica on compute::AloneTimeComm, long steps from their steady state:
// compute/step_extrapolation.hpp), as plan search's rows (tokens/s and the contract's training
// numbers). The bound's step is never longer than the screening's (step_bound.hpp says why;
// tests/cpp/studies/test_plan_screening.cpp checks every plan of a small space).
//
// One fabric per placement: its simulator never runs, so the plans share it and its caches
// (groups, plans, routed plans, picks, estimates: pure functions of the fabric and the request,
// so sharing changes no number). Not thread-safe: one per thread.
#include <functional>
#include <memory>

#include <nlohmann/json.hpp>

#include "sim/compute/training_step.hpp"
#include "sim/scenario/config.hpp"

namespace cs::topo {
class Topology;
}

namespace cs::studies {

// The step options screening and the bound use: one replica, nothing mirrored (nothing
// contends: the others' traffic changes nothing).
compute::TrainingStepOptions screening_options(const scenario::Config& config);

// A row of plan search: the step's numbers, the plan's keys and "simulation" ("bound",
// "screening" or "network").
nlohmann::json plan_row(const work::TrainingWorkload& w, const compute::TrainingResult& r, const char* simulation);

class PlanScreening {
 public:
  // The fabric of `placed`'s placement on `topology` (both must outlive this), with `config`'s
  // network.
  PlanScreening(const scenario::Config& config, const topo::Topology& topology, const work::TrainingWorkload& placed);
  ~PlanScreening();
  PlanScreening(const PlanScreening&) = delete;
  PlanScreening& operator=(const PlanScreening&) = delete;

  // `w` (with the placement given) bounded: "simulation" "bound", "screening_tokens_per_s" null.
  nlohmann::json bound(const work::TrainingWorkload& w);
  // `w` screened: "simulation" "screening". `interrupted` is polled by its simulators (true
  // stops with engine::Interrupted). InputError at "workload" when the layer refuses a transfer.
  nlohmann::json screen(const work::TrainingWorkload& w, const std::function<bool()>& interrupted = {});

 private:
  struct Fabric;
  const scenario::Config& config_;
  std::unique_ptr<Fabric> fabric_;
};

}  // namespace cs::studies
