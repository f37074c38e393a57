// The communication layer's overhead per transfer (comm.hpp), on DGX-like nodes on a
// rail-optimized non-blocking fat-tree (bench_util.hpp), 4,096 GPUs:
//   - flow model: one million 1 MiB point-to-point sends between random GPU pairs, started
//     at uniformly random times over one simulated second (a Poisson-like stream of about
//     one send per microsecond, ~20 in flight at once);
//   - analytical model: 100,000 8-rank all-reduces (16 MiB, NCCL Simple, ring) started at
//     once on 512 groups (each group one GPU on each of 8 nodes, on one rail), ~195 sharing
//     each group's links.
// Reports median thread CPU time over repetitions, events per second and CPU per transfer.
// Usage: bench_comm [--quick]   (--quick: 1 repetition, a tenth of the transfers)
#include <cstdio>
#include <string>
#include <cstring>
#include <memory>
#include <random>
#include <vector>

#include "bench/bench_util.hpp"
#include "sim/engine/simulator.hpp"
#include "sim/network/comm_factory.hpp"
#include "topology/topology.hpp"

namespace {

using namespace cs;

constexpr int kGpus = 4096;

struct World {
  explicit World(net::NetworkModel model)
      : topology(topo::build_topology(bench::dgx_fat_tree(kGpus))), network(sim, topology, topo::RoutingKind::dmodk) {
    net::CommConfig c;
    c.model = model;
    c.protocol = net::Protocol::simple;
    comm = net::make_comm(network, net::Placement::identity(topology.ranks()), c);
  }
  engine::Simulator sim{1};
  topo::Topology topology;
  net::Network network;
  std::unique_ptr<net::CommBase> comm;
};

// Starts the sends in time order, one pending start event at a time.
class SendStream final : public engine::EventTarget, public net::TransferObserver {
 public:
  SendStream(net::Comm& comm, engine::Simulator& sim, std::size_t n) : comm_(comm), sim_(sim) {
    std::mt19937_64 rng(42);
    std::uniform_real_distribution<double> when(0.0, 1.0);
    std::uniform_int_distribution<int> gpu(0, kGpus - 1);
    sends_.resize(n);
    for (auto& s : sends_) {
      s.t = when(rng);
      s.src = gpu(rng);
      do s.dst = gpu(rng);
      while (s.dst == s.src);
    }
    std::sort(sends_.begin(), sends_.end(), [](const Send& a, const Send& b) { return a.t < b.t; });
  }
  void start() { sim_.schedule_at(sends_.front().t, *this); }
  void on_event(uint64_t i) override {
    const Send& s = sends_[i];
    comm_.send(s.src, s.dst, 1 << 20, this, i, i);
    if (i + 1 < sends_.size()) sim_.schedule_at(sends_[i + 1].t, *this, i + 1);
  }
  void on_transfer_done(net::TransferId, uint64_t) override { ++done_; }
  std::size_t done() const { return done_; }

 private:
  struct Send {
    double t;
    int src, dst;
  };
  net::Comm& comm_;
  engine::Simulator& sim_;
  std::vector<Send> sends_;
  std::size_t done_ = 0;
};

struct Sample {
  double setup_s, run_s, sim_s;
  uint64_t events;
  std::size_t done;
};

Sample sends_case(std::size_t n) {
  const double t0 = bench::thread_cpu_s();
  World w(net::NetworkModel::flow);
  SendStream stream(*w.comm, w.sim, n);
  const double t1 = bench::thread_cpu_s();
  stream.start();
  w.sim.run();
  return {t1 - t0, bench::thread_cpu_s() - t1, w.sim.now(), w.sim.events_processed(), stream.done()};
}

Sample allreduce_case(std::size_t n) {
  const double t0 = bench::thread_cpu_s();
  World w(net::NetworkModel::analytical);
  constexpr int kGroups = kGpus / 8;
  std::vector<net::GroupId> groups;
  for (int g = 0; g < kGroups; ++g) {
    // Nodes 8(g/8) .. 8(g/8)+7, local GPU g % 8: one rail, eight nodes.
    std::vector<int> members;
    for (int k = 0; k < 8; ++k) members.push_back(((g / 8) * 8 + k) * 8 + g % 8);
    groups.push_back(w.comm->group(members));
  }
  net::CollectiveOptions ring;
  ring.algorithm = work::CollectiveAlgorithm::ring;
  std::size_t done = 0;
  struct Counter final : net::TransferObserver {
    std::size_t* done;
    void on_transfer_done(net::TransferId, uint64_t) override { ++*done; }
  } counter;
  counter.done = &done;
  const double t1 = bench::thread_cpu_s();
  for (std::size_t i = 0; i < n; ++i)
    w.comm->collective(groups[i % groups.size()], work::CollectiveOp::all_reduce, 16 << 20, &counter, i, ring);
  w.sim.run();
  return {t1 - t0, bench::thread_cpu_s() - t1, w.sim.now(), w.sim.events_processed(), done};
}

void report(const char* name, std::size_t n, int reps, Sample (*one)(std::size_t)) {
  std::vector<double> run_s, setup_s;
  Sample last{};
  for (int r = 0; r < reps; ++r) {
    last = one(n);
    run_s.push_back(last.run_s);
    setup_s.push_back(last.setup_s);
  }
  const double run = bench::median(run_s);
  std::printf("%-34s %9zu done %9zu  setup %.3f s  run %.3f s (median of %d)  %.2f M events/s  "
              "%.2f us CPU per transfer  sim %.4f s  peak RSS %.0f MB\n",
              name, n, last.done, bench::median(setup_s), run, reps, static_cast<double>(last.events) / run / 1e6,
              run / static_cast<double>(n) * 1e6, last.sim_s, bench::peak_rss_mb());
  bench::figure(std::string("comm/") + name, run, "s", bench::Better::lower);
}

}  // namespace

int main(int argc, char** argv) {
  const bool quick = argc > 1 && std::strcmp(argv[1], "--quick") == 0;
  const int reps = quick ? 1 : 3;
  std::printf("communication layer, 4,096 GPUs (512 DGX-like nodes, rail-optimized fat-tree, D-mod-K)\n");
  bench::in_child([&] { report("flow: 1 MiB sends, random pairs", quick ? 100000 : 1000000, reps, sends_case); });
  bench::in_child([&] { report("analytical: 8-rank ring all-reduces", quick ? 10000 : 100000, reps, allreduce_case); });
  return 0;
}
