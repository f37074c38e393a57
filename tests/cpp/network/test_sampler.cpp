// The time-series sampler: a regular grid from the start, bounded per series whatever the
// interval, coarsened by doubling.
#include <catch2/catch.hpp>

#include "network_test_support.hpp"
#include "sim/network/comm_factory.hpp"
#include "sim/network/network_sampler.hpp"

using namespace cs;

namespace {

// One send of `bytes` between GPUs 0 and 1 of an NVSwitch node (450 GB/s), sampled.
struct SampledSend {
  SampledSend(double interval_s, std::size_t max_samples, double bytes)
      : fabric(test::nvswitch_node()),
        comm(net::make_comm(fabric.network, net::Placement::identity(fabric.topology.ranks()), {})),
        sampler(*comm, fabric.sim, interval_s, nullptr, max_samples) {
    sampler.start();
    comm->send(0, 1, bytes, [] {});
    fabric.sim.run();
    sampler.flush();
  }
  test::Fabric fabric;
  std::unique_ptr<net::CommBase> comm;
  net::NetworkSampler sampler;
  const std::vector<engine::Recorder::Sample>& series() { return *fabric.sim.recorder().series("active_transfers"); }
};

}  // namespace

TEST_CASE("samples lie on t0 + k x interval while work is in flight", "[sampler]") {
  SampledSend s(1e-3, 1000, 450e9 * 0.0105);  // about 10.5 ms of transfer
  CHECK_FALSE(s.sampler.coarsened());
  const auto& v = s.series();
  REQUIRE(v.size() == 12);  // 0, 1, ..., 11 ms: the last sees the send done
  for (std::size_t k = 0; k < v.size(); ++k) CHECK(v[k].time == Approx(k * 1e-3).margin(1e-15));
  CHECK(v.front().value == 1);
  CHECK(v.back().value == 0);
}

TEST_CASE("a series never holds more than max_samples: the interval doubles", "[sampler]") {
  // 1 ns asked for over ~10 ms: 10^7 samples; 64 at most, on a grid of 2^k ns.
  SampledSend s(1e-9, 64, 450e9 * 0.0105);
  CHECK(s.sampler.coarsened());
  const auto& v = s.series();
  CHECK(v.size() < 64);
  CHECK(v.size() >= 32);
  const double step = s.sampler.interval_s();
  CHECK(std::log2(step / 1e-9) == Approx(std::round(std::log2(step / 1e-9))));
  for (std::size_t k = 0; k < v.size(); ++k) CHECK(v[k].time == Approx(k * step).margin(1e-15));
}

TEST_CASE("an interval below the clock's resolution still moves the clock", "[sampler]") {
  // Starting at 1e6 s, 1 ns is below the resolution of the clock (ulp ~ 1.2e-10 s is fine,
  // but 1e-20 s is not): the sampler coarsens until it makes progress.
  test::Fabric fabric(test::nvswitch_node());
  auto comm = net::make_comm(fabric.network, net::Placement::identity(fabric.topology.ranks()), {});
  fabric.sim.run(1e6);
  net::NetworkSampler sampler(*comm, fabric.sim, 1e-20, nullptr, 100);
  sampler.start();
  comm->send(0, 1, 450e9 * 1e-3, [] {});
  fabric.sim.run();
  CHECK(sampler.interval_s() > 1e-10);
  CHECK(sampler.samples() < 100);
  CHECK(fabric.sim.events_processed() < 10000);
}
