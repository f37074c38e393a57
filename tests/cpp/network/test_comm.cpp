// The communication layer (comm.hpp): sends and collectives started and cancelled at any
// time, in either network model, agreeing where nothing contends; cancel frees links at
// once; several collectives on one group overlap; the tuner's estimate is what a lone
// collective takes.
#include <map>
#include <memory>
#include <string>
#include <vector>

#include <catch2/catch.hpp>

#include "network_test_support.hpp"

#include "sim/network/comm_factory.hpp"

using namespace cs;
using namespace cs::test;
using work::CollectiveAlgorithm;
using work::CollectiveOp;

namespace {

// The rail fabric's GPU 0s (rail 0) and GPU 1s (rail 1): disjoint paths through the leaves.
const std::vector<int> kRail0{0, 2, 4, 6}, kRail1{1, 3, 5, 7};

struct World {
  explicit World(net::NetworkModel model, const topo::TopologyParams& p = rail_fat_tree()) : fabric(p) {
    net::CommConfig c;
    c.model = model;
    c.protocol = net::Protocol::simple;
    comm = net::make_comm(fabric.network, net::Placement::identity(fabric.topology.ranks()), c);
  }
  engine::Simulator& sim() { return fabric.sim; }
  Fabric fabric;
  std::unique_ptr<net::CommBase> comm;
};

// Times (and bytes delivered at cancels) of a scripted mix of sends and collectives.
struct Log {
  std::map<std::string, double> done_at, delivered;
};

net::CollectiveOptions with(CollectiveAlgorithm a) {
  net::CollectiveOptions o;
  o.algorithm = a;
  return o;
}

// Nothing contends: rail 0 carries the all-reduces, rail 1 the sends and the all-gather, and
// no two transfers on one rail overlap in time.
Log staggered_mix(net::NetworkModel model) {
  World w(model);
  net::Comm& comm = *w.comm;
  auto& sim = w.sim();
  Log log;
  const net::GroupId g0 = comm.group(kRail0), g1 = comm.group(kRail1);
  auto note = [&](std::string name) { return [&log, &sim, name] { log.done_at[name] = sim.now(); }; };
  net::TransferId s1 = 0, c = 0, d = 0;
  sim.schedule_at(0.0, [&] { comm.collective(g0, CollectiveOp::all_reduce, 64e6, note("A ring all_reduce"), with(CollectiveAlgorithm::ring)); });
  sim.schedule_at(1e-4, [&] { s1 = comm.send(1, 3, 100e6, note("S1 (cancelled)")); });
  sim.schedule_at(1e-3, [&] { log.delivered["S1"] = comm.cancel(s1); });
  sim.schedule_at(2e-3, [&] { comm.send(5, 7, 50e6, note("S2 send 5->7")); });
  sim.schedule_at(4e-3, [&] { comm.collective(g1, CollectiveOp::all_gather, 32e6, note("B all_gather")); });
  sim.schedule_at(10e-3, [&] { c = comm.collective(g0, CollectiveOp::all_reduce, 64e6, note("C (cancelled)"), with(CollectiveAlgorithm::ring)); });
  sim.schedule_at(10.5e-3, [&] { log.delivered["C"] = comm.cancel(c); });
  sim.schedule_at(12e-3, [&] {
    d = comm.collective(g0, CollectiveOp::all_reduce, 16e6, note("D (cancelled)"), with(CollectiveAlgorithm::halving_doubling));
  });
  sim.schedule_at(12.3e-3, [&] { log.delivered["D"] = comm.cancel(d); });
  sim.schedule_at(13e-3, [&] {
    comm.collective(g0, CollectiveOp::all_reduce, 16e6, note("E halving_doubling"), with(CollectiveAlgorithm::halving_doubling));
  });
  sim.run();
  CHECK(comm.active_transfers() == 0);
  CHECK(comm.transfers_completed() == 4);  // A, S2, B, E; S1, C and D were cancelled
  return log;
}

}  // namespace

TEST_CASE("comm: both models give the same times for staggered sends, collectives and cancels", "[comm]") {
  const Log flow = staggered_mix(net::NetworkModel::flow);
  const Log fluid = staggered_mix(net::NetworkModel::analytical);
  REQUIRE(flow.done_at.size() == 4);
  REQUIRE(fluid.done_at.size() == flow.done_at.size());
  for (const auto& [name, t] : flow.done_at) {
    INFO(name);
    CHECK(fluid.done_at.at(name) == Approx(t).epsilon(1e-9));
  }
  for (const auto& [name, bytes] : flow.delivered) {
    INFO(name);
    CHECK(bytes > 0);
    CHECK(fluid.delivered.at(name) == Approx(bytes).epsilon(1e-9));
  }
  // A send of 100 MB over a 50 GB/s path cancelled 0.9 ms after it started: its wire latency
  // aside, 0.9 ms at 50 GB/s.
  CHECK(flow.delivered.at("S1") < 0.9e-3 * 50e9 * (1 + 1e-9));
  CHECK(flow.delivered.at("S1") > 0.89e-3 * 50e9);
  // The send that ran alone: its wire latency (a few us) + 50 MB / 50 GB/s after its start.
  CHECK(flow.done_at.at("S2 send 5->7") == Approx(2e-3 + 1e-3).margin(5e-6));
}

TEST_CASE("comm: a cancelled transfer frees its links at once", "[comm]") {
  for (auto model : {net::NetworkModel::flow, net::NetworkModel::analytical}) {
    INFO(std::string(net::to_string(model)));
    // Two sends into GPU 2 share its NIC's link: B/2 each; cancelling one at t gives the
    // other the whole link from t on.
    World w(model);
    auto& sim = w.sim();
    double done = -1;
    const net::TransferId victim = w.comm->send(0, 2, 1e9, [] {});
    w.comm->send(4, 2, 1e9, [&] { done = sim.now(); });
    const double t_cancel = 10e-3;
    double delivered = -2;
    sim.schedule_at(t_cancel, [&] { delivered = w.comm->cancel(victim); });
    sim.run();
    const double latency = w.fabric.network.route(4, 2).latency_s;
    // Both moved at B/2 from their latency to t; the survivor then moves the rest at B.
    const double moved = (t_cancel - latency) * 25e9;
    CHECK(delivered == Approx(moved).epsilon(1e-6));
    CHECK(done == Approx(t_cancel + (1e9 - moved) / 50e9).epsilon(1e-9));
    CHECK(w.comm->cancel(victim) == -1);  // not active any more
  }
}

TEST_CASE("comm: two collectives on one group overlap and share their links", "[comm]") {
  std::map<net::NetworkModel, std::vector<double>> times;
  for (auto model : {net::NetworkModel::flow, net::NetworkModel::analytical}) {
    World w(model);
    auto& sim = w.sim();
    const net::GroupId g0 = w.comm->group(kRail0), g1 = w.comm->group(kRail1);
    const double alone = w.comm->alone_time_s(g0, CollectiveOp::all_reduce, 1e8, with(CollectiveAlgorithm::ring));
    std::vector<double> t(3, -1);
    w.comm->collective(g0, CollectiveOp::all_reduce, 1e8, [&] { t[0] = sim.now(); }, with(CollectiveAlgorithm::ring));
    w.comm->collective(g0, CollectiveOp::all_reduce, 1e8, [&] { t[1] = sim.now(); }, with(CollectiveAlgorithm::ring));
    w.comm->collective(g1, CollectiveOp::all_reduce, 1e8, [&] { t[2] = sim.now(); }, with(CollectiveAlgorithm::ring));
    CHECK(w.comm->active_transfers() == 3);
    sim.run();
    // The two on group 0 share every link of their ring: each takes the latency and twice the
    // bandwidth term; the one on rail 1 runs alone. The latency is the alone time's intercept
    // at sizes past NCCL's ring plateau (which raises a large ring's latency across nodes).
    const double half = w.comm->alone_time_s(g0, CollectiveOp::all_reduce, 5e7, with(CollectiveAlgorithm::ring));
    const double latency = 2 * half - alone;
    CHECK(t[0] == Approx(latency + 2 * (alone - latency)).epsilon(1e-6));
    CHECK(t[1] == Approx(t[0]).epsilon(1e-12));
    CHECK(t[2] == Approx(alone).epsilon(1e-12));
    times[model] = t;
  }
  for (std::size_t i = 0; i < 3; ++i) CHECK(times[net::NetworkModel::analytical][i] == Approx(times[net::NetworkModel::flow][i]).epsilon(1e-9));
}

TEST_CASE("comm: a lone collective takes the tuner's estimate, and auto picks the fastest", "[comm]") {
  for (auto model : {net::NetworkModel::flow, net::NetworkModel::analytical}) {
    World w(model);
    const net::GroupId g = w.comm->group(first_ranks(8));
    for (double bytes : {8.0, 1e6, 1e9}) {
      const net::CollectiveChoice pick = w.comm->choose(g, CollectiveOp::all_reduce, bytes);
      double best = 1e300;
      for (CollectiveAlgorithm a : w.comm->candidates(g, CollectiveOp::all_reduce))
        best = std::min(best, w.comm->alone_time_s(g, CollectiveOp::all_reduce, bytes, with(a)));
      const double estimate = w.comm->alone_time_s(g, CollectiveOp::all_reduce, bytes);
      CHECK(estimate == Approx(best).epsilon(1e-12));
      double done = -1;
      const double t0 = w.sim().now();
      const net::TransferId id = w.comm->collective(g, CollectiveOp::all_reduce, bytes, [&] { done = w.sim().now(); });
      CHECK(w.comm->choice(id).algorithm == pick.algorithm);
      w.sim().run();
      CHECK(done - t0 == Approx(estimate).epsilon(1e-9));
    }
  }
}

TEST_CASE("comm: auto weighs per op only what NCCL runs", "[comm]") {
  // Four nodes of two GPUs: a rank on each node, and every GPU; nothing reduces in the fabric.
  // Direct all-pairs, halving-doubling and hierarchical exist for these groups but are no
  // NCCL algorithm: auto leaves them to an explicit request.
  World w(net::NetworkModel::analytical);
  for (const std::vector<int>& ranks : {kRail0, first_ranks(8)}) {
    const net::GroupId g = w.comm->group(ranks);
    CHECK(w.comm->candidates(g, CollectiveOp::all_reduce) ==
          std::vector{CollectiveAlgorithm::ring, CollectiveAlgorithm::tree});
    for (CollectiveOp op : {CollectiveOp::all_gather, CollectiveOp::reduce_scatter, CollectiveOp::broadcast,
                            CollectiveOp::reduce})
      CHECK(w.comm->candidates(g, op) == std::vector{CollectiveAlgorithm::ring});
    CHECK(w.comm->candidates(g, CollectiveOp::all_to_all) == std::vector{CollectiveAlgorithm::direct});
    CHECK_NOTHROW(w.comm->plan(g, CollectiveOp::all_reduce, CollectiveAlgorithm::direct));
    CHECK_NOTHROW(w.comm->plan(g, CollectiveOp::all_reduce, CollectiveAlgorithm::halving_doubling));
  }
  const std::vector<int> pair{0, 2};
  CHECK(w.comm->candidates(w.comm->group(pair), CollectiveOp::send_recv) == std::vector{CollectiveAlgorithm::direct});
}

TEST_CASE("comm: refuses says which algorithms a request would be refused for, as the request does", "[comm]") {
  // Asked twice (the second answer remembered), before and after the requests: refuses is true
  // exactly where an estimate with that algorithm throws CommError, whatever the bytes.
  World w(net::NetworkModel::analytical);
  const net::GroupId g = w.comm->group(first_ranks(8));
  std::size_t refused = 0;
  for (int pass = 0; pass < 2; ++pass)
    for (CollectiveOp op : {CollectiveOp::all_reduce, CollectiveOp::all_gather, CollectiveOp::all_to_all})
      for (CollectiveAlgorithm a : {CollectiveAlgorithm::ring, CollectiveAlgorithm::tree, CollectiveAlgorithm::in_network,
                                    CollectiveAlgorithm::torus, CollectiveAlgorithm::direct}) {
        const bool refuses = w.comm->refuses(g, op, a);
        refused += refuses;
        for (double bytes : {8.0, 1e9}) {
          bool threw = false;
          try {
            w.comm->alone_time_s(g, op, bytes, with(a));
          } catch (const net::CommError&) {
            threw = true;
          }
          CHECK(threw == refuses);
        }
      }
  CHECK(refused >= 2 * 3);  // torus (no torus fabric) and in_network (no SHARP) at least, per op
  CHECK_FALSE(w.comm->refuses(g, CollectiveOp::all_reduce, CollectiveAlgorithm::automatic));
}

TEST_CASE("comm: choices and stage latencies are kept per group, request and protocol", "[comm]") {
  // Requests interleaved over two groups, three protocols and two sizes, twice: each run takes
  // the estimate of what it asked for, as a fresh layer's first request gives it.
  World w(net::NetworkModel::flow);
  const std::vector<std::vector<int>> members{kRail0, kRail1};
  std::vector<net::GroupId> groups;
  for (const auto& m : members) groups.push_back(w.comm->group(m));
  int runs = 0;
  for (int round = 0; round < 2; ++round)
    for (std::size_t g = 0; g < groups.size(); ++g)
      for (net::Protocol p : {net::Protocol::ll, net::Protocol::ll128, net::Protocol::simple})
        for (double bytes : {4096.0, 1e7}) {
          net::CollectiveOptions o = with(CollectiveAlgorithm::ring);
          o.protocol = p;
          World fresh(net::NetworkModel::flow);
          const double expected =
              fresh.comm->alone_time_s(fresh.comm->group(members[g]), CollectiveOp::all_reduce, bytes, o);
          double done = -1;
          const double t0 = w.sim().now();
          const net::TransferId id =
              w.comm->collective(groups[g], CollectiveOp::all_reduce, bytes, [&] { done = w.sim().now(); }, o);
          CHECK(w.comm->choice(id).protocol == p);
          w.sim().run();
          CHECK(done - t0 == Approx(expected).epsilon(1e-12));
          ++runs;
        }
  CHECK(runs == 24);
  CHECK_THROWS_AS(w.comm->choose(net::GroupId(groups.size()), CollectiveOp::all_reduce, 1e6), std::out_of_range);
}

TEST_CASE("comm: ids, observers, errors", "[comm]") {
  World w(net::NetworkModel::flow);
  net::Comm& comm = *w.comm;
  struct Counter final : net::TransferObserver {
    std::vector<std::pair<net::TransferId, uint64_t>> heard;
    void on_transfer_done(net::TransferId id, uint64_t tag) override { heard.emplace_back(id, tag); }
  } counter;
  const net::TransferId a = comm.send(0, 1, 1e6, &counter, 7);
  const net::TransferId b = comm.send(2, 3, 1e6, &counter, 8);
  CHECK(a != 0);
  CHECK(a != b);
  CHECK(comm.cancel(b) == 0);  // still in flight: nothing delivered
  w.sim().run();
  REQUIRE(counter.heard.size() == 1);
  CHECK(counter.heard[0] == std::make_pair(a, uint64_t{7}));
  const net::TransferId c = comm.send(0, 1, 1e6, &counter, 9);  // reuses a's slot, not its id
  CHECK(c != a);
  CHECK(comm.cancel(a) == -1);
  CHECK(comm.cancel(c) == 0);
  CHECK(comm.group(kRail0) == comm.group(kRail0));
  CHECK(comm.group(kRail0) != comm.group(kRail0, 1));

  auto field_of = [](auto&& f) {
    try {
      f();
    } catch (const net::CommError& e) {
      return e.field();
    }
    return std::string("no error");
  };
  CHECK(field_of([&] { comm.send(0, 0, 1, &counter, 0); }) == "ranks");
  CHECK(field_of([&] { comm.send(0, 99, 1, &counter, 0); }) == "ranks");
  CHECK(field_of([&] { comm.send(0, 1, 0, &counter, 0); }) == "bytes");
  CHECK(field_of([&] { comm.group(std::vector<int>{3}); }) == "ranks");
  CHECK(field_of([&] { comm.group(std::vector<int>{1, 1}); }) == "ranks");
  const net::GroupId six = comm.group(std::vector<int>{0, 1, 2, 3, 4, 5});
  CHECK(field_of([&] { comm.collective(six, CollectiveOp::all_gather, 1e6, &counter, 0, with(CollectiveAlgorithm::halving_doubling)); }) ==
        "algorithm");
  CHECK(field_of([&] { comm.collective(six, CollectiveOp::all_reduce, 1e6, &counter, 0, with(CollectiveAlgorithm::in_network)); }) ==
        "algorithm");
}

TEST_CASE("comm: PXN keeps a cross-rail transfer on the destination's rail", "[comm][pxn]") {
  // The rail fabric: GPU g of every node on NIC g, leaf g. A ring 0..7 in rank order leaves
  // node k from GPU 1 (rail 1) and enters node k+1 at GPU 0 (rail 0): without PXN each such
  // hop climbs to a spine; with PXN it crosses node k's NVSwitch to GPU 0 and stays on rail 0.
  // Leaves at 4:1 (one up-port each) make the spine the bottleneck: the four cross-rail hops
  // share rail 1's one up-link without PXN and use four NICs with it.
  topo::TopologyParams p = rail_fat_tree();
  p.oversubscription = 4;
  std::map<bool, double> time;
  for (bool pxn : {false, true}) {
    for (auto model : {net::NetworkModel::flow, net::NetworkModel::analytical}) {
      World w(model, p);
      w.fabric.network.set_pxn(pxn);
      double done = -1;
      w.comm->collective(w.comm->group(first_ranks(8), 1), CollectiveOp::all_reduce, 1e8,
                         [&] { done = w.sim().now(); }, with(CollectiveAlgorithm::ring));
      w.sim().run();
      const net::LinkUsage u = w.comm->link_usage();
      double spine_bytes = 0;
      for (topo::LinkId l = 0; l < w.fabric.topology.num_links(); ++l) {
        const auto& link = w.fabric.topology.link(l);
        const auto& from = w.fabric.topology.vertex(link.from);
        const auto& to = w.fabric.topology.vertex(link.to);
        if (from.kind == topo::VertexKind::fabric_switch && to.kind == topo::VertexKind::fabric_switch)
          spine_bytes += u.bytes[l];
      }
      INFO("pxn " << pxn << " model " << std::string(net::to_string(model)));
      if (pxn) CHECK(spine_bytes == 0);
      else CHECK(spine_bytes > 0);
      if (time.count(pxn)) CHECK(done == Approx(time[pxn]).epsilon(1e-9));
      time[pxn] = done;
    }
  }
  CHECK(time[true] < 0.5 * time[false]);
}
