#include "workloads/training_schedule.hpp"

#include <algorithm>

namespace cs::work {
namespace {

std::vector<PipelinePass> gpipe(int m) {
  std::vector<PipelinePass> order;
  for (int i = 0; i < m; ++i) order.push_back({PassKind::forward, i, 0});
  // Backwards in reverse: the last micro-batch's activations are the freshest.
  for (int i = m - 1; i >= 0; --i) order.push_back({PassKind::backward, i, 0});
  return order;
}

std::vector<PipelinePass> one_f_one_b(int stage, int p, int m) {
  std::vector<PipelinePass> order;
  const int warmup = std::min(p - stage - 1, m);
  for (int i = 0; i < warmup; ++i) order.push_back({PassKind::forward, i, 0});
  for (int i = 0; i < m - warmup; ++i) {
    order.push_back({PassKind::forward, warmup + i, 0});
    order.push_back({PassKind::backward, i, 0});
  }
  for (int i = m - warmup; i < m; ++i) order.push_back({PassKind::backward, i, 0});
  return order;
}

// Megatron-Core's interleaved order: virtual micro-batch k runs micro-batch
// (k / (p v)) p + k % p on local chunk (k / p) % v (backward: the chunks in reverse).
std::vector<PipelinePass> interleaved(int stage, int p, int m, int v) {
  const int total = m * v;
  int warmup = total;
  if (m != p) warmup = std::min(total, (p - stage - 1) * 2 + (v - 1) * p);
  auto pass = [&](PassKind kind, int k) {
    int chunk = (k % (p * v)) / p;
    if (kind != PassKind::forward) chunk = v - 1 - chunk;
    return PipelinePass{kind, (k / (p * v)) * p + k % p, chunk};
  };
  std::vector<PipelinePass> order;
  for (int k = 0; k < warmup; ++k) order.push_back(pass(PassKind::forward, k));
  for (int k = 0; k < total - warmup; ++k) {
    order.push_back(pass(PassKind::forward, warmup + k));
    order.push_back(pass(PassKind::backward, k));
  }
  for (int k = total - warmup; k < total; ++k) order.push_back(pass(PassKind::backward, k));
  return order;
}

std::vector<PipelinePass> zb_h1(int stage, int p, int m) {
  std::vector<PipelinePass> order;
  int next_w = 0;  // oldest micro-batch whose weight gradient is still to run
  auto weight = [&] { order.push_back({PassKind::backward_weight, next_w++, 0}); };
  int done_b = 0;
  auto input = [&] {
    order.push_back({PassKind::backward_input, done_b++, 0});
    // Stage s may hold s weight passes back (p - s in flight under 1F1B, plus s = p).
    if (done_b - next_w > stage) weight();
  };
  const int warmup = std::min(p - stage - 1, m);
  for (int i = 0; i < warmup; ++i) order.push_back({PassKind::forward, i, 0});
  for (int i = 0; i < m - warmup; ++i) {
    order.push_back({PassKind::forward, warmup + i, 0});
    input();
  }
  // Cool-down: each input gradient is followed by a deferred weight pass, which fills the wait
  // for the next stage's gradient.
  while (done_b < m) {
    input();
    if (order.back().kind != PassKind::backward_weight && next_w < done_b) weight();
  }
  while (next_w < m) weight();
  return order;
}

}  // namespace

std::vector<PipelinePass> stage_schedule(Schedule schedule, int stage, int pp, int m, int v) {
  switch (schedule) {
    case Schedule::gpipe: return gpipe(m);
    case Schedule::one_f_one_b: return one_f_one_b(stage, pp, m);
    case Schedule::interleaved: return interleaved(stage, pp, m, v);
    case Schedule::zb_h1: return zb_h1(stage, pp, m);
  }
  return {};
}

}  // namespace cs::work
