// NCCL's tuning constants: the compiled-in table is data/nccl_tuning.json, in seconds.
#include <fstream>
#include <stdexcept>

#include <catch2/catch.hpp>
#include <nlohmann/json.hpp>

#include "network_test_support.hpp"
#include "sim/network/nccl_tuning.hpp"

using namespace cs;
using cs::test::kNvlink;
using work::CollectiveAlgorithm;

namespace {

nlohmann::json file() {
  std::ifstream in(CS_SOURCE_DIR "/data/nccl_tuning.json");
  REQUIRE(in);
  return nlohmann::json::parse(in);
}

constexpr auto kPcie = static_cast<std::size_t>(net::TransferClass::pcie);
constexpr auto kNet = static_cast<std::size_t>(net::TransferClass::net);

}  // namespace

TEST_CASE("the compiled-in NCCL table is the data file", "[nccl]") {
  CHECK(nlohmann::json::parse(net::nccl_tuning_text()) == file());
}

TEST_CASE("nccl_costs(simple) gives the file's ring numbers in seconds", "[nccl]") {
  const nlohmann::json ring = file()["nccl_algorithms"]["ring"]["simple"];
  const net::CollectiveCostTable t = net::nccl_costs("simple");
  const net::CollectiveCosts& c = t[CollectiveAlgorithm::ring];
  CHECK(c.base_latency_s == Approx(ring["base_latency_us"].get<double>() * 1e-6));
  CHECK(c.step_latency_s[kNvlink] == Approx(ring["step_latency_us"]["nvlink"].get<double>() * 1e-6));
  CHECK(c.step_latency_s[kPcie] == Approx(ring["step_latency_us"]["pcie"].get<double>() * 1e-6));
  CHECK(c.step_latency_s[kNet] == Approx(ring["step_latency_us"]["net"].get<double>() * 1e-6));
  CHECK(c.bandwidth_efficiency == 1.0);
  // NCCL 2.20.3: Simple ring baseLat 8.4 us, NET hwLat 14 us.
  CHECK(c.base_latency_s == Approx(8.4e-6));
  CHECK(c.step_latency_s[kNet] == Approx(14e-6));
}

TEST_CASE("nccl_costs fills every algorithm as the file maps it", "[nccl]") {
  for (const char* proto : {"simple", "ll", "ll128"}) {
    const net::CollectiveCostTable t = net::nccl_costs(proto);
    for (CollectiveAlgorithm a : {CollectiveAlgorithm::ring, CollectiveAlgorithm::tree,
                                  CollectiveAlgorithm::halving_doubling, CollectiveAlgorithm::direct,
                                  CollectiveAlgorithm::hierarchical, CollectiveAlgorithm::automatic,
                                  CollectiveAlgorithm::in_network}) {
      CHECK(t[a].step_latency_s[kNet] > 0);
      CHECK(t[a].bandwidth_efficiency > 0);
      CHECK(t[a].bandwidth_efficiency <= 1);
    }
    const auto& ring = t[CollectiveAlgorithm::ring];
    for (CollectiveAlgorithm a : {CollectiveAlgorithm::halving_doubling, CollectiveAlgorithm::direct,
                                  CollectiveAlgorithm::hierarchical}) {
      CHECK(t[a].base_latency_s == ring.base_latency_s);
      CHECK(t[a].step_latency_s == ring.step_latency_s);
    }
    // In-network reduction runs Simple whatever the protocol.
    CHECK(t[CollectiveAlgorithm::in_network].bandwidth_efficiency == 1.0);
    CHECK(t[CollectiveAlgorithm::in_network].step_latency_s[kNvlink] == Approx(23e-6));
  }
  CHECK(net::nccl_costs("ll")[CollectiveAlgorithm::ring].bandwidth_efficiency == 0.5);
  CHECK(net::nccl_costs("ll128")[CollectiveAlgorithm::tree].bandwidth_efficiency ==
        Approx(120.0 / 128.0));
  CHECK(net::nccl_costs("ll")[CollectiveAlgorithm::tree].step_latency_s[kNet] == Approx(5e-6));
}

TEST_CASE("nccl_costs rejects an unknown protocol", "[nccl]") {
  CHECK_THROWS_AS(net::nccl_costs("bogus"), std::invalid_argument);
  CHECK_THROWS_AS(net::nccl_costs("none"), std::invalid_argument);
  CHECK_THROWS_AS(net::nccl_costs("Simple"), std::invalid_argument);
}
