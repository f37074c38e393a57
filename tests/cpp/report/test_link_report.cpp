// Per-link usage reports on a hand-built topology with made-up measurements.
#include <string>

#include <catch2/catch.hpp>

#include "sim/report/link_report.hpp"
#include "topology/topology.hpp"

using cs::report::LinkUsage;
namespace topo = cs::topo;

namespace {

// Three cables: a-b (100 B/s, fabric) = links 0, 1; b-c (200 B/s, pcie) = links 2, 3;
// c-"x,y" (200 B/s, node_fabric) = links 4, 5.
topo::Topology three_cables() {
  topo::Topology t;
  const auto a = t.add_vertex(topo::VertexKind::gpu, 0, 0, 0, "a");
  const auto b = t.add_vertex(topo::VertexKind::fabric_switch, -1, 0, 1, "b");
  const auto c = t.add_vertex(topo::VertexKind::nic, 0, 0, 0, "c");
  const auto xy = t.add_vertex(topo::VertexKind::gpu, 0, 1, 0, "x,y");
  t.add_cable(a, b, 100.0, 1e-6, topo::LinkKind::fabric);
  t.add_cable(b, c, 200.0, 1e-6, topo::LinkKind::pcie);
  t.add_cable(c, xy, 200.0, 1e-6, topo::LinkKind::node_fabric);
  return t;
}

// Over 10 s: link 3 busiest (80%); links 2 and 4 tie at 50% and 1000 B (id breaks the tie);
// link 0 also 50% but fewer bytes; links 1 and 5 unused.
LinkUsage usage() {
  LinkUsage u;
  u.bytes = {500, 0, 1000, 100, 1000, 0};
  u.busy_s = {5, 0, 5, 8, 5, 0};
  u.peak_utilization = {1.0, 0, 0.75, 0.25, 0.5, 0};
  u.elapsed_s = 10;
  return u;
}

}  // namespace

TEST_CASE("link summary: hottest links by busy share, bytes, id", "[link_report]") {
  const topo::Topology t = three_cables();
  const auto s = cs::report::link_summary(t, usage());
  CHECK(s.at("links_used") == 4);
  CHECK(s.at("bytes_total").get<double>() == 2600.0);
  CHECK(s.at("busy_share_max").get<double>() == Approx(0.8));
  CHECK(s.at("busy_share_mean").get<double>() == Approx((0.8 + 0.5 + 0.5 + 0.5) / 4));
  const auto& hot = s.at("hottest");
  REQUIRE(hot.size() == 4);
  CHECK(hot[0].at("id") == 3);
  CHECK(hot[1].at("id") == 2);
  CHECK(hot[2].at("id") == 4);
  CHECK(hot[3].at("id") == 0);
  CHECK(hot[0].at("link") == "c->b");
  CHECK(hot[0].at("kind") == "pcie");
  CHECK(hot[0].at("capacity_Bps").get<double>() == 200.0);
  CHECK(hot[0].at("busy_share").get<double>() == Approx(0.8));
  CHECK(hot[0].at("peak_utilization").get<double>() == 0.25);
  CHECK(hot[0].at("mean_utilization").get<double>() == Approx(100.0 / (200 * 10)));
  CHECK(hot[3].at("link") == "a->b");
  CHECK(hot[3].at("kind") == "fabric");
  CHECK(hot[3].at("mean_utilization").get<double>() == Approx(0.5));
  CHECK(hot[2].at("link") == "c->x,y");

  CHECK(cs::report::link_summary(t, usage(), 2).at("hottest").size() == 2);
}

TEST_CASE("link summary: unmeasured figures are null, sizes are checked", "[link_report]") {
  const topo::Topology t = three_cables();
  LinkUsage u = usage();
  u.peak_utilization.clear();
  const auto s = cs::report::link_summary(t, u);
  CHECK(s.at("hottest")[0].at("peak_utilization").is_null());
  CHECK(cs::report::hottest_links_text(s).find(" - ") != std::string::npos);
  u.bytes.pop_back();
  CHECK_THROWS_AS(cs::report::link_summary(t, u), std::invalid_argument);
  LinkUsage none;
  none.bytes.assign(t.num_links(), 0.0);
  const auto empty = cs::report::link_summary(t, none);
  CHECK(empty.at("links_used") == 0);
  CHECK(empty.at("busy_share_mean").get<double>() == 0.0);
  CHECK(cs::report::hottest_links_text(empty) == "no link carried bytes\n");
}

TEST_CASE("link table CSV: one row per used link", "[link_report]") {
  const topo::Topology t = three_cables();
  const std::string csv = cs::report::link_table_csv(t, usage());
  const std::string header =
      "link,from,to,kind,capacity_Bps,bytes,busy_s,busy_share,peak_utilization,mean_utilization\n";
  REQUIRE(csv.substr(0, header.size()) == header);
  std::size_t lines = 0;
  for (char c : csv) lines += c == '\n';
  CHECK(lines == 1 + 4);
  CHECK(csv.find("\n0,a,b,fabric,100,500,5,0.5,1,0.5\n") != std::string::npos);
  CHECK(csv.find("\n4,c,\"x,y\",node_fabric,200,1000,5,0.5,0.5,0.5\n") != std::string::npos);
}

TEST_CASE("hottest links text: one line per entry", "[link_report]") {
  const topo::Topology t = three_cables();
  const std::string text = cs::report::hottest_links_text(cs::report::link_summary(t, usage()));
  CHECK(text.find("busy %") != std::string::npos);
  CHECK(text.find("c->b") != std::string::npos);
  CHECK(text.find("80.0") != std::string::npos);
  std::size_t lines = 0;
  for (char c : text) lines += c == '\n';
  CHECK(lines == 1 + 4);
}
