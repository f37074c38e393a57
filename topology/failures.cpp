// Applying a degraded fabric's failures (see topology/failures.hpp): names resolved, random
// draws, and the check that every NIC still reaches every other over live cables.
#include "topology/failures.hpp"

#include <algorithm>
#include <cmath>
#include <random>
#include <string>
#include <vector>

namespace cs::topo {
namespace {

[[noreturn]] void refuse(std::string param, const std::string& what) { throw BuildError(std::move(param), what); }

bool is_switch(const Topology& t, VertexId v) { return t.vertex(v).kind == VertexKind::fabric_switch; }

// Cables (their even link ids) joining two fabric switches, alive, in id order.
std::vector<LinkId> live_switch_cables(const Topology& t) {
  std::vector<LinkId> out;
  for (LinkId l = 0; l < t.num_links(); l += 2)
    if (!t.failed(l) && is_switch(t, t.link(l).from) && is_switch(t, t.link(l).to)) out.push_back(l);
  return out;
}

bool all_cables_failed(const Topology& t, VertexId v) {
  const auto out = t.out_links(v);
  return !out.empty() && std::all_of(out.begin(), out.end(), [&](LinkId l) { return t.failed(l); });
}

bool holds_nics(const Topology& t, VertexId sw) {
  for (LinkId l : t.out_links(sw))
    if (t.vertex(t.link(l).to).kind == VertexKind::nic) return true;
  return false;
}

// The first `count` of `pool` after a partial Fisher-Yates shuffle by `rng`.
template <class T>
std::vector<T> draw(std::vector<T> pool, std::size_t count, std::mt19937_64& rng) {
  for (std::size_t i = 0; i < count; ++i) {
    const std::size_t j = i + static_cast<std::size_t>(rng() % (pool.size() - i));
    std::swap(pool[i], pool[j]);
  }
  pool.resize(count);
  return pool;
}

void fail_switch(Topology& t, VertexId sw) {
  for (LinkId l : t.out_links(sw)) t.fail_cable(l);
}

VertexId named(const Topology& t, const std::string& name, const std::string& param) {
  if (const auto v = t.find(name)) return *v;
  refuse(param, "no vertex named \"" + name + "\" in this topology (switches are named as `clustersim topo` and "
                "routes name them: leaf3, spine0, core1, g2.r5, t1.0.2, or the custom file's names; NICs n<i> or n<i>.<j>)");
}

void fail_named_links(Topology& t, const FailureParams& f) {
  for (std::size_t i = 0; i < f.links.size(); ++i) {
    const FailedLink& fl = f.links[i];
    const std::string at = "failed.links." + std::to_string(i);
    const VertexId a = named(t, fl.a, at + ".a"), b = named(t, fl.b, at + ".b");
    std::vector<LinkId> cables;
    for (LinkId l : t.out_links(a))
      if (t.link(l).to == b && t.link(l).kind == LinkKind::fabric && !t.failed(l)) cables.push_back(l);
    if (cables.empty())
      refuse(at, "no live fabric cable joins \"" + fl.a + "\" and \"" + fl.b + "\"");
    if (fl.cables > static_cast<int>(cables.size()))
      refuse(at + ".cables", std::to_string(fl.cables) + " cables asked, but \"" + fl.a + "\" and \"" + fl.b +
                                 "\" are joined by " + std::to_string(cables.size()));
    const std::size_t n = fl.cables > 0 ? static_cast<std::size_t>(fl.cables) : cables.size();
    for (std::size_t c = 0; c < n; ++c) t.fail_cable(cables[c]);
  }
}

void fail_named_switches(Topology& t, const FailureParams& f) {
  for (std::size_t i = 0; i < f.switches.size(); ++i) {
    const std::string at = "failed.switches." + std::to_string(i);
    const VertexId v = named(t, f.switches[i], at);
    if (!is_switch(t, v)) refuse(at, "\"" + f.switches[i] + "\" is not a fabric switch");
    fail_switch(t, v);
  }
}

void fail_random(Topology& t, const FailureParams& f) {
  std::mt19937_64 rng(f.seed);
  if (f.random_switches > 0) {
    std::vector<VertexId> pool;
    for (VertexId v = 0; v < t.num_vertices(); ++v)
      if (is_switch(t, v) && !holds_nics(t, v) && !all_cables_failed(t, v)) pool.push_back(v);
    if (static_cast<std::size_t>(f.random_switches) > pool.size())
      refuse("failed.random_switches", std::to_string(f.random_switches) + " switches asked, but this fabric has " +
                                           std::to_string(pool.size()) + " fabric switches without NICs (spines, cores)");
    for (VertexId v : draw(std::move(pool), static_cast<std::size_t>(f.random_switches), rng)) fail_switch(t, v);
  }
  if (f.random_links > 0) {
    std::vector<LinkId> pool = live_switch_cables(t);
    if (static_cast<std::size_t>(f.random_links) > pool.size())
      refuse("failed.random_links", std::to_string(f.random_links) + " cables asked, but " +
                                        std::to_string(pool.size()) + " live switch-to-switch cables remain");
    for (LinkId l : draw(std::move(pool), static_cast<std::size_t>(f.random_links), rng)) t.fail_cable(l);
  }
  if (f.link_mtbf_s > 0 && f.window_s > 0) {
    const double p = -std::expm1(-f.window_s / f.link_mtbf_s);
    for (LinkId l : live_switch_cables(t))
      if (static_cast<double>(rng() >> 11) * 0x1.0p-53 < p) t.fail_cable(l);
  }
}

// Every NIC must reach every other over live fabric cables, through fabric switches (NICs
// do not forward). The largest set of NICs that reach each other is the fabric; the rest
// are named as cut off.
void check_connected(const Topology& t) {
  const std::vector<VertexId> nics = fabric_nics(t);
  if (nics.size() < 2) return;
  std::vector<int> component(t.num_vertices(), -1);
  std::vector<std::size_t> size;
  std::vector<VertexId> stack;
  for (VertexId start : nics) {
    if (component[start] >= 0) continue;
    const int c = static_cast<int>(size.size());
    size.push_back(0);
    component[start] = c;
    stack.assign(1, start);
    while (!stack.empty()) {
      const VertexId v = stack.back();
      stack.pop_back();
      if (t.vertex(v).kind == VertexKind::nic) ++size.back();
      if (v != start && !is_switch(t, v)) continue;
      for (LinkId l : t.out_links(v)) {
        const VertexId w = t.link(l).to;
        if (t.link(l).kind != LinkKind::fabric || t.failed(l) || component[w] >= 0) continue;
        component[w] = c;
        stack.push_back(w);
      }
    }
  }
  if (size.size() == 1) return;
  const int main = static_cast<int>(std::max_element(size.begin(), size.end()) - size.begin());
  std::string cut;
  std::size_t count = 0;
  for (VertexId v : nics) {
    if (component[v] == main) continue;
    if (++count <= 4) cut += (cut.empty() ? "" : ", ") + t.vertex(v).name;
  }
  if (count > 4) cut += ", ...";
  refuse("failed", "the failures cut " + std::to_string(count) + " of " + std::to_string(nics.size()) +
                       " NICs off the rest of the fabric (" + cut + "; their GPUs' ranks have no route): fail fewer "
                       "cables, or spread them so that every NIC keeps a live path");
}

}  // namespace

std::size_t dead_switches(const Topology& t) {
  if (!t.has_failures()) return 0;
  std::size_t n = 0;
  for (VertexId v = 0; v < t.num_vertices(); ++v) n += is_switch(t, v) && all_cables_failed(t, v);
  return n;
}

void apply_failures(Topology& t, const FailureParams& f) {
  if (!f.any()) return;
  if (t.num_fabric_switches() == 0) refuse("failed", "this topology has no fabric to fail (a single node)");
  fail_named_links(t, f);
  fail_named_switches(t, f);
  fail_random(t, f);
  check_connected(t);
}

}  // namespace cs::topo
