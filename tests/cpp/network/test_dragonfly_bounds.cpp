// Dragonfly routings at their closed-form bounds on all-to-all: where the global cables bind,
// a direct all-to-all of S per rank moves (N - R) S bytes between groups (N ranks, R per
// group), once over a global cable under minimal routing and twice under Valiant, spread over
// the g (g - 1) m directed global cables (m per group pair) at B_g each. Valiant per packet
// (valiant_packet) against the same bounds and the group shift's.
#include <numeric>
#include <stdexcept>
#include <vector>

#include <catch2/catch.hpp>

#include "network_test_support.hpp"
#include "sim/network/analytical_model.hpp"
#include "sim/network/collective_run.hpp"
#include "topology/direct_layouts.hpp"
#include "topology/topology.hpp"

using namespace cs;

namespace {

struct FlyShape {
  int a, p, h, g, gpus;
  double global_Bps;  // global cables; everything else 400 Gb/s unless set below
  double local_Bps = 50e9;
};

topo::TopologyParams fly_params(const FlyShape& f) {
  topo::TopologyParams p;
  p.kind = topo::TopologyKind::dragonfly;
  p.routers_per_group = f.a;
  p.nodes_per_router = f.p;
  p.global_links_per_router = f.h;
  p.groups = f.g;
  p.nodes = f.a * f.p * f.g;
  p.node.gpus = f.gpus;
  p.node.nics = f.gpus;
  p.node.nic_bandwidth_Bps = 50e9;
  p.node.pcie_bandwidth_Bps = 1e12;
  p.link_bandwidth_Bps = f.local_Bps;
  p.global_bandwidth_Bps = f.global_Bps;
  p.link_latency_s = 0;
  p.global_latency_s = 0;
  return p;
}

// Seconds of a direct all-to-all of `bytes` per rank over `ranks` (every GPU: empty), the
// wire alone.
double fly_all_to_all_s(const topo::Topology& topology, topo::RoutingKind routing, net::NetworkModel model,
                        double bytes, std::vector<int> ranks = {}) {
  net::CommConfig config;
  config.model = model;
  config.protocol = net::Protocol::none;
  return test::collective_seconds(topology, routing, config, work::CollectiveOp::all_to_all,
                                  work::CollectiveAlgorithm::direct, bytes, std::move(ranks));
}

// The global cables' bound: crossings x (N - R) S / (g (g - 1) m B_g) (N ranks each send S / N
// to every rank, N - R of them in other groups).
double global_bound_s(const topo::Topology& t, const FlyShape& f, int crossings, double bytes) {
  const double n = t.ranks(), r = static_cast<double>(f.a) * f.p * f.gpus;
  const double cables = static_cast<double>(f.g) * (f.g - 1) * t.dragonfly()->links_per_group_pair;
  return crossings * (n - r) * bytes / (cables * f.global_Bps);
}

}  // namespace

TEST_CASE("Valiant, minimal and UGAL all-to-all reach the global cables' bound", "[routing][dragonfly][valiant]") {
  const double S = 64e6;
  // Several cables per group pair (a h / (g - 1) = 8) and one (a h = g - 1), global cables
  // slow enough to bind under both routings.
  for (const FlyShape f : {FlyShape{8, 1, 4, 5, 4, 5e9}, FlyShape{4, 2, 2, 9, 2, 5e9}}) {
    const topo::Topology t = topo::build_topology(fly_params(f));
    INFO("a=" << f.a << " h=" << f.h << " g=" << f.g << " m=" << t.dragonfly()->links_per_group_pair);
    for (auto model : {net::NetworkModel::analytical, net::NetworkModel::flow}) {
      const double minimal = fly_all_to_all_s(t, topo::RoutingKind::minimal, model, S);
      const double valiant = fly_all_to_all_s(t, topo::RoutingKind::valiant, model, S);
      CHECK(minimal == Approx(global_bound_s(t, f, 1, S)).epsilon(0.02));
      CHECK(valiant == Approx(global_bound_s(t, f, 2, S)).epsilon(0.02));
      // UGAL sees the queues the whole stage builds on its minimal routes, balanced, and keeps
      // nearly every pair minimal: within 5% of minimal's bound (measured 2.4% and 3.1%: pairs
      // whose Valiant route has fewer hops leave). Choosing per pair against the pairs placed
      // before it detoured many: 19% below minimal at 4,096 GPUs.
      const double ugal = fly_all_to_all_s(t, topo::RoutingKind::ugal, model, S);
      CHECK(ugal >= global_bound_s(t, f, 1, S) * (1 - 1e-9));
      CHECK(ugal <= 1.05 * global_bound_s(t, f, 1, S));
    }
  }
}

TEST_CASE("Valiant all-to-all over 1,024 GPUs at its bound (a=16, p=1, h=8, g=8)", "[routing][dragonfly][valiant]") {
  // 18 cables per group pair, 400 Gb/s everywhere, 8 GPUs and NICs per node. The bound is the
  // global cables' (local links carry 1.5 of their 2.1 GB): 2 x 896 x S / (8 x 7 x 18 x 50
  // GB/s) = 38.2 ms for S = 1 GiB, 28.1 GB/s of algbw. Both legs on one cable index piled the
  // intermediate groups' local hops onto neighbouring routers: 61 ms (17.4 GB/s).
  for (int parallel : {1, 2}) {
    topo::TopologyParams p = fly_params({16, 1, 8, 8, 8, 50e9});
    p.local_parallel_links = parallel;
    const topo::Topology t = topo::build_topology(p);
    REQUIRE(t.dragonfly()->links_per_group_pair == 18);
    const double S = 1073741824.0, bound = 2.0 * 896 * S / (8 * 7 * 18 * 50e9);
    const double valiant = fly_all_to_all_s(t, topo::RoutingKind::valiant, net::NetworkModel::analytical, S);
    CHECK(valiant >= bound * (1 - 1e-9));
    CHECK(valiant <= bound * 1.02);
  }
}

TEST_CASE("UGAL detours an all-to-all inside two groups and beats both its routes", "[routing][dragonfly][ugal]") {
  // Two of 9 groups (a=4, p=2, h=2, one cable per group pair, 16 ranks each): minimal routes
  // put the 16 x 16 pairs each way (S / 32 each) on one global cable, 256 S / 32 / B_g;
  // Valiant spreads them over 7 groups but crosses two cables. UGAL, each pair choosing against
  // the queues the whole stage builds on its minimal routes, moves pairs until the two
  // balance: faster than either (measured 8% below Valiant's time, 7.5 x below minimal's).
  const FlyShape f{4, 2, 2, 9, 2, 5e9};
  const topo::Topology t = topo::build_topology(fly_params(f));
  std::vector<int> ranks(32);
  std::iota(ranks.begin(), ranks.end(), 0);
  const double S = 64e6, minimal_bound = 256 * S / 32 / f.global_Bps;
  for (auto model : {net::NetworkModel::analytical, net::NetworkModel::flow}) {
    INFO("model " << static_cast<int>(model));
    const double minimal = fly_all_to_all_s(t, topo::RoutingKind::minimal, model, S, ranks);
    const double valiant = fly_all_to_all_s(t, topo::RoutingKind::valiant, model, S, ranks);
    const double ugal = fly_all_to_all_s(t, topo::RoutingKind::ugal, model, S, ranks);
    CHECK(minimal == Approx(minimal_bound).epsilon(0.02));
    CHECK(ugal < std::min(minimal, valiant));
  }
}

namespace {

// Group shift: every rank sends `bytes` to the rank of the same index in the next group, as
// one stage of independent transfers; seconds in the analytical and the flow model, no
// latency anywhere.
std::pair<double, double> group_shift_s(const topo::Topology& t, topo::RoutingKind routing, double bytes) {
  const int n = t.ranks(), per_group = n / t.dragonfly()->groups;
  work::CollectivePlan plan;
  plan.ranks = test::first_ranks(n);
  work::Stage stage;
  stage.name = "group shift";
  for (int i = 0; i < n; ++i) stage.transfers.push_back({i, (i + per_group) % n, 1.0, -1});
  plan.stages.push_back(stage);
  net::CollectiveCosts costs;
  costs.base_latency_s = 0;
  costs.step_latency_s = {0, 0, 0};
  engine::Simulator sim(1);
  net::Network network(sim, t, routing);
  const net::RoutedPlan routed(network, plan);
  net::AnalyticalModel analytical(network);
  const double analytical_s = analytical.estimate(routed, bytes, costs).time_s;
  // The flow model's run as a collective's (a load-aware routing routes the stage together).
  net::CollectiveRun run(network, plan);
  double done_at = -1;
  run.start(bytes, costs, [&] { done_at = sim.now(); });
  sim.run();
  return {analytical_s, done_at};
}

// Group shift's bandwidth term under `routing`: what S more bytes add (the wire latency of the
// NICs' links drops out), with both models alike at 2 S.
double group_shift_wire_s(const topo::Topology& t, topo::RoutingKind routing, double S) {
  const auto [analytical, flow] = group_shift_s(t, routing, 2 * S);
  CHECK(flow == Approx(analytical).epsilon(1e-9));
  return analytical - group_shift_s(t, routing, S).first;
}

// The group shift fabric: a=4, p=2, h=2, g=9 (one cable per group pair), one GPU per node,
// local links fast enough not to bind.
FlyShape group_shift_shape() {
  FlyShape f{4, 2, 2, 9, 1, 50e9};
  f.local_Bps = 200e9;
  return f;
}

}  // namespace

TEST_CASE("Valiant per packet: group shift at the global cables' bound, both models alike", "[routing][dragonfly][valiant_packet]") {
  // A group's a p ranks inject I = a p r; per packet each flow crosses every one
  // of the k = g - 2 intermediate groups with 1/k of its bytes, so cable (u, v) carries the
  // first legs of group u through v and the second legs of group v - 1 through u: 2 I / k,
  // and (u, u + 1) nothing. r = k B_g / (2 a p) = 7/16 of a 50 GB/s NIC (21.9 GB/s, ~50% of
  // injection as g grows); minimal puts a group's 8 ranks on one cable: r = B_g / 8.
  const FlyShape f = group_shift_shape();
  const topo::Topology t = topo::build_topology(fly_params(f));
  REQUIRE(t.dragonfly()->links_per_group_pair == 1);
  const double S = 64e6, k = f.g - 2, rate = k * f.global_Bps / (2.0 * f.a * f.p);
  const auto wire_s = [&](topo::RoutingKind routing) { return group_shift_wire_s(t, routing, S); };
  const double packet = wire_s(topo::RoutingKind::valiant_packet);
  CHECK(packet == Approx(S / rate).epsilon(1e-9));
  CHECK(rate / 50e9 == Approx(7.0 / 16));
  const double minimal = wire_s(topo::RoutingKind::minimal);
  CHECK(minimal == Approx(S * f.a * f.p / f.global_Bps).epsilon(1e-9));
  // Per flow, Valiant puts a group's 8 flows on 7 intermediate groups: two share a cable.
  CHECK(wire_s(topo::RoutingKind::valiant) > packet * (1 + 1e-6));
}

TEST_CASE("Valiant per packet: all-to-all at its bound with one and several cables per group pair", "[routing][dragonfly][valiant_packet]") {
  const double S = 64e6;
  for (const FlyShape f : {FlyShape{8, 1, 4, 5, 4, 5e9}, FlyShape{4, 2, 2, 9, 2, 5e9}}) {
    const topo::Topology t = topo::build_topology(fly_params(f));
    INFO("a=" << f.a << " h=" << f.h << " g=" << f.g << " m=" << t.dragonfly()->links_per_group_pair);
    const double analytical = fly_all_to_all_s(t, topo::RoutingKind::valiant_packet, net::NetworkModel::analytical, S);
    const double flow = fly_all_to_all_s(t, topo::RoutingKind::valiant_packet, net::NetworkModel::flow, S);
    CHECK(analytical == Approx(global_bound_s(t, f, 2, S)).epsilon(0.02));
    CHECK(flow == Approx(analytical).epsilon(0.02));
  }
}

TEST_CASE("UGAL per packet: group shift at valiant_packet's bound or better, both models alike", "[routing][dragonfly][ugal_packet]") {
  // valiant_packet's fabric above. Splitting each flow between its minimal route (share f) and
  // the even Valiant spread loads cable (u, u + 1) with f I and every other cable with
  // 2 (1 - f) I / k; the two balance at f = 2 / g, 2 I / g per cable: no split of these paths
  // does better (r = g B_g / (2 a p), 9/16 of a NIC). UGAL per packet, its parts choosing by
  // the queues, must come within 5% of valiant_packet's 2 I / k, or beat it.
  const FlyShape f = group_shift_shape();
  const topo::Topology t = topo::build_topology(fly_params(f));
  const double S = 64e6, k = f.g - 2;
  const double packet_s = S / (k * f.global_Bps / (2.0 * f.a * f.p)), balanced_s = S / (f.g * f.global_Bps / (2.0 * f.a * f.p));
  const double ugal_packet = group_shift_wire_s(t, topo::RoutingKind::ugal_packet, S);
  CHECK(ugal_packet >= balanced_s * (1 - 1e-9));
  CHECK(ugal_packet <= 1.05 * packet_s);
}

TEST_CASE("UGAL per packet: all-to-all at minimal's bound with one and several cables per group pair", "[routing][dragonfly][ugal_packet]") {
  // The shapes of the UGAL test above, one GPU per node (the flow model's routes list every
  // lane). Uniform traffic loads every way alike, so the parts stay minimal: within 5% of
  // minimal's bound, in both models.
  const double S = 64e6;
  for (const FlyShape f : {FlyShape{8, 1, 4, 5, 1, 5e9}, FlyShape{4, 2, 2, 9, 1, 5e9}}) {
    const topo::Topology t = topo::build_topology(fly_params(f));
    INFO("a=" << f.a << " h=" << f.h << " g=" << f.g << " m=" << t.dragonfly()->links_per_group_pair);
    for (auto model : {net::NetworkModel::analytical, net::NetworkModel::flow}) {
      INFO("model " << static_cast<int>(model));
      const double ugal_packet = fly_all_to_all_s(t, topo::RoutingKind::ugal_packet, model, S);
      CHECK(ugal_packet >= global_bound_s(t, f, 1, S) * (1 - 1e-9));
      CHECK(ugal_packet <= 1.05 * global_bound_s(t, f, 1, S));
    }
  }
}

TEST_CASE("UGAL per packet: group shift within 5% of valiant_packet where the detours' local hops bind too", "[routing][dragonfly][ugal_packet]") {
  // The group shift fabric with local links as fast as the global cables (as
  // scenarios/dragonfly_group_shift.json): a detour's local hops in the intermediate groups
  // load as much as its cables. The flows start together and settle their splits together
  // (Router::rounds_together); one after another, the last flows found the detours loaded by
  // the first ones' choices (8.5% slower than valiant_packet on the shipped scenario).
  FlyShape f = group_shift_shape();
  f.local_Bps = f.global_Bps;
  const topo::Topology t = topo::build_topology(fly_params(f));
  const double S = 64e6, k = f.g - 2;
  const double packet_s = S / (k * f.global_Bps / (2.0 * f.a * f.p)), balanced_s = S / (f.g * f.global_Bps / (2.0 * f.a * f.p));
  CHECK(group_shift_wire_s(t, topo::RoutingKind::valiant_packet, S) == Approx(packet_s).epsilon(1e-9));
  const double ugal_packet = group_shift_wire_s(t, topo::RoutingKind::ugal_packet, S);
  CHECK(ugal_packet >= balanced_s * (1 - 1e-9));
  CHECK(ugal_packet <= 1.05 * packet_s);
}

TEST_CASE("UGAL per packet: a batch that starts together settles where no flow would move a part", "[routing][dragonfly][ugal_packet]") {
  // The group shift routed together (StagePlacement::route_all): afterwards each transfer,
  // taken off and choosing again against all the others, chooses the route it has.
  FlyShape f = group_shift_shape();
  f.local_Bps = f.global_Bps;
  const topo::Topology t = topo::build_topology(fly_params(f));
  engine::Simulator sim(1);
  net::Network network(sim, t, topo::RoutingKind::ugal_packet);
  const int n = t.ranks(), per_group = n / f.g;
  std::vector<net::Network::Endpoints> batch;
  for (int i = 0; i < n; ++i) batch.push_back({i, (i + per_group) % n, 0});
  net::Network::StagePlacement placement(network);
  const std::vector<const topo::Route*> routes = placement.route_all(batch);
  REQUIRE(routes.size() == batch.size());
  for (std::size_t i = 0; i < batch.size(); ++i) {
    network.unplace(*routes[i]);
    CHECK(&network.route(batch[i].src_rank, batch[i].dst_rank) == routes[i]);
    topo::Route probe;  // put back as it was
    REQUIRE(network.place_into(batch[i].src_rank, batch[i].dst_rank, 0, probe));
    CHECK(probe.links == routes[i]->links);
  }
}

TEST_CASE("UGAL per packet: a batch whose routing throws leaves the stage's placement as it was", "[routing][dragonfly][ugal_packet]") {
  // StagePlacement::route_all's strong guarantee: the load oracle throws at its n-th reading,
  // in the first choices or in the rounds after; the placed counts are then as before the call
  // (an earlier batch and primed transfers placed), and the batch routed again gives the routes
  // a placement that never failed gives.
  FlyShape f = group_shift_shape();
  f.local_Bps = f.global_Bps;
  const topo::Topology t = topo::build_topology(fly_params(f));
  const int n = t.ranks(), per_group = n / f.g;
  std::vector<net::Network::Endpoints> earlier, batch;
  for (int i = 0; i < n; i += 3) earlier.push_back({i, (i + 2 * per_group) % n, 0});
  for (int i = 0; i < n; ++i) batch.push_back({i, (i + per_group) % n, 0});
  struct Stage {
    engine::Simulator sim{1};
    net::Network network;
    net::Network::StagePlacement placement{network};
    long readings = 0, throw_at = -1;  // -1: never
    explicit Stage(const topo::Topology& t) : network(sim, t, topo::RoutingKind::ugal_packet) {
      network.set_load_oracle([this](topo::LinkId) -> uint32_t {
        if (++readings == throw_at) throw std::runtime_error("oracle fails");
        return 0;  // no flows in flight
      });
    }
    std::vector<uint32_t> counts(const topo::Topology& t) const {
      std::vector<uint32_t> c(t.num_links());
      for (std::size_t l = 0; l < c.size(); ++l) c[l] = network.placed(topo::LinkId(l));
      return c;
    }
  };
  auto prepare = [&](Stage& s) {
    s.placement.route_all(earlier);
    for (int i = 0; i < n; i += 2) s.placement.prime(batch[i].src_rank, batch[i].dst_rank);
  };
  Stage reference(t);
  prepare(reference);
  const std::vector<uint32_t> before = reference.counts(t);
  const long start = reference.readings;
  // Where the first choices end and the rounds begin.
  for (const auto& e : batch) reference.placement.route(e.src_rank, e.dst_rank);
  const long first_choices = reference.readings - start;
  Stage whole(t);
  prepare(whole);
  const long from = whole.readings;
  auto links = [](const std::vector<const topo::Route*>& routes) {
    std::vector<std::vector<topo::LinkId>> v;
    for (const topo::Route* r : routes) v.push_back(r->links);
    return v;
  };
  const auto expected = links(whole.placement.route_all(batch));
  const long total = whole.readings - from;
  REQUIRE(total > first_choices + 2);  // there are rounds to fail in
  const std::vector<uint32_t> after = whole.counts(t);
  for (long at : {1L, first_choices / 2, first_choices + 1, (first_choices + total) / 2, total}) {
    INFO("the oracle throws at reading " << at << " of " << total << " (first choices " << first_choices << ")");
    Stage s(t);
    prepare(s);
    CHECK(s.counts(t) == before);
    s.throw_at = s.readings + at;
    CHECK_THROWS_AS(s.placement.route_all(batch), std::runtime_error);
    CHECK(s.counts(t) == before);
    s.throw_at = -1;
    CHECK(links(s.placement.route_all(batch)) == expected);
    CHECK(s.counts(t) == after);
    s.placement.clear();
    CHECK(s.counts(t) == std::vector<uint32_t>(t.num_links(), 0));
  }
}
