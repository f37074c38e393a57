#include "workloads/training_enumerate.hpp"

namespace cs::work {
namespace {

std::vector<int> divisors(int n) {
  std::vector<int> d;
  for (int i = 1; i <= n; ++i)
    if (n % i == 0) d.push_back(i);
  return d;
}

}  // namespace

std::vector<PlanCandidate> enumerate_plans(const TransformerSpec& model, int global_batch, const ClusterShape& cluster,
                                           double gpu_memory_bytes, const PlanSpace& space,
                                           const MemoryOptions& memory) {
  std::vector<PlanCandidate> out;
  auto consider = [&](TrainingWorkload w) {
    try {
      validate(w, cluster);
    } catch (const TrainingError&) {
      return;
    }
    MemoryReport m = memory_per_gpu(w, gpu_memory_bytes, memory);
    if (space.only_fitting && !m.fits) return;
    out.push_back({std::move(w), std::move(m)});
  };
  const int tp_limit = cluster.allow_tp_across_nodes ? cluster.gpus : cluster.gpus_per_node;
  for (int tp : divisors(tp_limit)) {
    if (cluster.gpus % tp != 0) continue;
    for (int pp : divisors(model.layers)) {
      if (cluster.gpus % (tp * pp) != 0) continue;
      for (int cp = 1; cp <= space.max_cp; cp *= 2) {
        if (cluster.gpus % (tp * pp * cp) != 0) continue;
        const int dp = cluster.gpus / (tp * pp * cp);
        for (int ep : model.moe.enabled() ? divisors(dp) : std::vector<int>{1}) {
          if (model.moe.enabled() && model.moe.experts % ep != 0) continue;
          for (int micro : space.micro_batches) {
            if (global_batch % (micro * dp) != 0) continue;
            for (int zero : space.zero_stages)
              for (Schedule schedule : space.schedules) {
                if (pp == 1 && schedule != Schedule::one_f_one_b) continue;
                const std::vector<int> vs = schedule == Schedule::interleaved ? space.virtual_stages : std::vector<int>{1};
                for (int v : vs)
                  for (Recompute r : space.recompute)
                    for (bool sp : {true, false}) {
                      if (!sp && tp > 1 && !space.both_sequence_parallel) continue;
                      if (sp && tp == 1) continue;
                      TrainingWorkload w;
                      w.model = model;
                      w.parallel = {tp, pp, dp, cp, ep, zero, sp, schedule, v,
                                    "tp-cp-ep-dp-pp", {}, Offload::none};
                      w.batch = {global_batch, micro};
                      w.precision = space.precision;
                      w.recompute = r;
                      consider(std::move(w));
                    }
              }
          }
        }
      }
    }
  }
  return out;
}

}  // namespace cs::work
