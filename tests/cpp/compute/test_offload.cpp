// CPU offload (ZeRO-Offload): the optimizer's states in host memory, gradients copied to the host,
// the step on the host, weights back; closed forms on one GPU, and the accounting with ZeRO-2.
#include "sim/compute/roofline.hpp"
#include "sim/compute/training_step.hpp"
#include "training_support.hpp"
#include "workloads/training_memory.hpp"

namespace cs::compute::test {
namespace {

bool is_host_item(const work::ComputeItem& item) {
  for (const auto& op : item.ops)
    if (op.kind == work::OpKind::pcie || op.kind == work::OpKind::host_memory) return true;
  return false;
}

// Host items timed by the roofline's host model; every layer pass 1 s; the rest free.
std::vector<double> offload_times(const work::TaskGraph& g, const HostSpec& host) {
  const Roofline roofline(*find_gpu("H100-SXM"), work::Precision::bf16, {}, host);
  auto times = uniform_times(g, {1, 1, 1});
  for (std::size_t i = 0; i < g.compute_items.size(); ++i)
    if (is_host_item(g.compute_items[i])) times[i] = roofline.ops_seconds(g.compute_items[i].ops);
  return times;
}

TEST_CASE("offloaded optimizer states live in host memory", "[offload][memory]") {
  auto w = small_workload(1, 4, work::Schedule::one_f_one_b);
  w.parallel.dp = 4;
  w.batch = {16, 1};
  const double params = work::stage_params(w, 0).dense;
  for (int zero : {1, 2, 3}) {
    w.parallel.zero = zero;
    w.parallel.offload = work::Offload::none;
    const auto gpu = work::memory_per_gpu(w, 80e9).per_stage[0];
    w.parallel.offload = work::Offload::optimizer;
    work::MemoryOptions o;
    o.bucket_params = params / 8;
    const auto off = work::memory_per_gpu(w, 80e9, o);
    const auto& b = off.per_stage[0];
    INFO("ZeRO " << zero);
    CHECK(b.optimizer == 0);
    CHECK(b.parameters == gpu.parameters);
    if (zero == 1) {
      CHECK(b.gradients == gpu.gradients);      // kept on the GPU, reduced at the end
      CHECK(b.host == Approx(12 * params / 4));  // K = 12 bytes of the rank's shard
    } else {
      CHECK(b.host == Approx((12 + 2) * params / 4));  // and the gradients it accumulates
      CHECK(b.gradients == (zero == 2 ? Approx(2 * params / 8) : Approx(0)));  // one bucket
    }
    CHECK(off.max_host_bytes == b.host);
    CHECK(b.total() == Approx(gpu.total() - gpu.optimizer - gpu.gradients + b.gradients));
  }
}

TEST_CASE("one GPU with offload: backward, copy out, host step, copy back", "[offload][step]") {
  // ZeRO-1 on one GPU: the gradients are copied once, after the last micro-batch.
  auto w = small_workload(1, 3, work::Schedule::one_f_one_b, 1, 2);
  w.parallel.zero = 1;
  w.parallel.offload = work::Offload::optimizer;
  HostSpec host;
  host.pcie_bandwidth_Bps = 1e6;  // slow enough to be seen next to 1 s passes
  host.pcie_latency_s = 0.25;
  host.memory_bandwidth_Bps = 4e6;
  host.memory_efficiency = 0.5;
  work::GraphOptions go;
  go.bucket_params = 1e15;  // one bucket
  const auto g = work::build_training_graph(w, go);
  const auto times = offload_times(g, host);
  auto run = run_step(w, times, {}, {}, go);
  const double params = work::stage_params(w, 0).dense;
  double compute = 0;  // every pass, back to back on the compute stream
  for (uint32_t t : g.stream(0, work::Stream::compute)) compute += times[g.tasks[t].item];
  const double d2h = 0.25 + params * 2 / 1e6;
  const double adam = params * (2 + 12 + 12 + 2 + 2) / (4e6 * 0.5);  // + the clipping norm's read
  const double h2d = 0.25 + params * 2 / 1e6;
  CHECK(compute == 3 * 2 * 6);  // 3 micro-batches x 2 layers x 2 blocks x (F + B + W)
  const auto& a = run->analysis;
  CHECK(a.step_time_s == Approx(compute + d2h + adam + h2d).epsilon(1e-12));
  CHECK(a.compute_s == Approx(compute));
  CHECK(a.optimizer_s == Approx(adam));  // the GPU waits for the host's step
  CHECK(a.exposed_s[work::Stream::host] == Approx(d2h + h2d));
  check_accounting(a);
  std::size_t copies = 0;
  for (const auto& t : run->graph.tasks) copies += t.kind == work::TaskKind::host_copy;
  CHECK(copies == 2);
}

TEST_CASE("ZeRO-2 with offload copies each micro-batch's shard while backward goes on", "[offload][step]") {
  auto w = small_workload(2, 4, work::Schedule::one_f_one_b);
  w.parallel.dp = 2;
  w.parallel.zero = 2;
  w.parallel.offload = work::Offload::optimizer;
  w.batch = {8, 1};
  HostSpec host;
  host.pcie_bandwidth_Bps = 1e9;
  work::GraphOptions go;
  go.bucket_params = 1;  // a bucket per layer (and the head's, the embedding's)
  const auto g = work::build_training_graph(w, go);
  testing::AlphaBetaConfig net;
  net.ranks_per_node = 2;
  net.intra_node = {1e-6, 100e9};
  net.inter_node = {5e-6, 10e9};
  auto run = run_step(w, offload_times(g, host), {}, net, go);
  check_accounting(run->analysis);
  // Per worker: one copy per bucket per micro-batch, then the host step and the weights back.
  for (uint32_t wk = 0; wk < run->graph.workers.size(); ++wk) {
    std::size_t copies_out = 0, steps = 0, copies_in = 0;
    for (uint32_t t : run->graph.stream(wk, work::Stream::host)) {
      const auto& task = run->graph.tasks[t];
      const auto& op = run->graph.compute_items[task.item].ops.front();
      copies_out += op.name == "gradients_d2h";
      copies_in += op.name == "weights_h2d";
      steps += task.kind == work::TaskKind::optimizer;
    }
    CHECK(copies_out == 4u * 2);  // 4 micro-batches x 2 layers per stage (+ the head or embedding
                                  // bucket, folded into its chunk's first bucket)
    CHECK(steps == 1);
    CHECK(copies_in == 1);
    CHECK(run->graph.stream(wk, work::Stream::compute).size() > 0);
  }
  // No GPU optimizer: it runs on the host.
  for (const auto& t : run->graph.tasks)
    if (t.kind == work::TaskKind::optimizer) CHECK(t.stream == work::Stream::host);
  CHECK(run->analysis.optimizer_s > 0);
}

}  // namespace
}  // namespace cs::compute::test
