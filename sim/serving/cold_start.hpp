#pragma once
// How long a new replica takes from "launch" to "ready": node boot, container image pull,
// model load (weights over the storage tier's bandwidth, and/or a given load time) and engine
// warm-up, each drawn per replica (in this order, from the pool's "<name>/cold_start" stream):
//   time = boot + pull + model_bytes / storage_bandwidth + model_load + warmup.
// Scenario form (fleet.cold_start): boot, image_pull, model_load, warmup (times or
// distributions), model_bytes (bytes; default the model's weights), storage_bandwidth
// (bytes/s, a number or a distribution).
//
// Defaults are estimates for a GPU node in a public cloud: boot 60 s (a GPU VM's launch to
// kubelet Ready is typically one to a few minutes), image pull 30 s (a ~10 GB serving image),
// 16 GB of weights (Llama-3-8B, BF16) at 1 GB/s (a network file system or object store read),
// 10 s of warm-up (CUDA graph capture, KV-cache allocation).
#include "sim/engine/random.hpp"
#include "workloads/distribution.hpp"

namespace cs::serving {

struct ColdStartSpec {
  work::Distribution node_boot = work::Distribution::constant(60);        // s
  work::Distribution image_pull = work::Distribution::constant(30);       // s
  double model_bytes = 16e9;                                              // bytes
  work::Distribution storage_bandwidth = work::Distribution::constant(1e9);  // bytes/s, > 0
  work::Distribution model_load = work::Distribution::constant(0);        // s, besides the bytes
  work::Distribution warmup = work::Distribution::constant(10);           // s

  static ColdStartSpec none() {
    ColdStartSpec s;
    s.node_boot = s.image_pull = s.warmup = work::Distribution::constant(0);
    s.model_bytes = 0;
    return s;
  }
};

// Throws std::invalid_argument naming the field.
void validate_cold_start(const ColdStartSpec& spec);
// Seconds from launch to ready for one replica.
double draw_cold_start(const ColdStartSpec& spec, engine::RandomStream& rng);
// Mean of the same (bandwidth's mean used for the model load: exact for a constant bandwidth).
double mean_cold_start(const ColdStartSpec& spec);

}  // namespace cs::serving
