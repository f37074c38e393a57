// topology.kind "tpu_slice": a Google Cloud TPU slice, its chips on the ICI torus of the slice's
// shape. The generation is hardware.gpu (a TPU of the catalog); each chip is a node of one GPU
// at its own torus position, and the chip's ICI links are the torus's cables. `slices` > 1: a
// multislice, that many slices joined by the data-center network (DCN).
#include <algorithm>
#include <cstdlib>
#include <optional>
#include <string>
#include <vector>

#include "sim/compute/gpu_catalog.hpp"
#include "sim/compute/tpu_slice.hpp"
#include "sim/scenario/parse_sections.hpp"
#include "sim/scenario/parse_util.hpp"
#include "sim/scenario/quantity_range.hpp"

namespace cs::scenario::detail {
namespace {

using nlohmann::json;
using Shape = std::vector<int>;

// The slices a generation offers, from Google Cloud's pages "TPU v4", "TPU v5p", "TPU v5e" and
// "TPU v6e" (their configuration tables). v4 and v5p are 3D: the shapes below a 4x4x4 cube that
// the tables list, or A x B x C with every side a multiple of 4 (whole cubes joined by optical
// circuit switches) up to the largest slice (v4: a 4,096-chip pod; v5p: 16x16x24, 6,144 chips).
// v5e and v6e are 2D: the listed shapes, up to the 16x16 pod.
struct SliceRule {
  int dims = 3;
  int max_chips = 0;
  std::vector<Shape> listed;  // each sorted ascending
};

std::optional<SliceRule> slice_rule(std::string_view chip) {
  if (chip == "TPU-v4") return SliceRule{3, 4096, {{1, 2, 2}, {2, 2, 2}, {2, 2, 4}, {2, 4, 4}}};
  if (chip == "TPU-v5p") return SliceRule{3, 6144, {{1, 2, 2}, {2, 2, 2}, {2, 4, 4}}};
  if (chip == "TPU-v5e" || chip == "TPU-v6e")
    return SliceRule{2, 256, {{1, 1}, {2, 2}, {2, 4}, {4, 4}, {4, 8}, {8, 8}, {8, 16}, {16, 16}}};
  return std::nullopt;
}

int64_t chips_of(const Shape& s) {
  int64_t n = 1;
  for (int d : s) n *= d;
  return n;
}

std::string shape_name(const Shape& s) {
  std::string out;
  for (std::size_t i = 0; i < s.size(); ++i) out += (i ? "x" : "") + std::to_string(s[i]);
  return out;
}

bool whole_cubes(const SliceRule& r, const Shape& sorted) {
  return r.dims == 3 && std::all_of(sorted.begin(), sorted.end(), [](int d) { return d % 4 == 0; }) &&
         chips_of(sorted) <= r.max_chips;
}

bool offered(const SliceRule& r, const Shape& sorted) {
  return std::find(r.listed.begin(), r.listed.end(), sorted) != r.listed.end() || whole_cubes(r, sorted);
}

// The offered shape closest to `given` (sorted): fewest side steps apart, then closest in chips.
Shape nearest_offered(const SliceRule& r, Shape given) {
  given.resize(static_cast<std::size_t>(r.dims), 1);
  std::sort(given.begin(), given.end());
  std::vector<Shape> candidates = r.listed;
  if (r.dims == 3)
    for (int a = 4; a * a * a <= r.max_chips; a += 4)
      for (int b = a; a * b * b <= r.max_chips; b += 4)
        for (int c = b; a * b * c <= r.max_chips; c += 4) candidates.push_back({a, b, c});
  auto steps = [&](const Shape& s) {
    int64_t d = 0;
    for (std::size_t i = 0; i < s.size(); ++i) d += std::abs(s[i] - given[i]);
    return d;
  };
  return *std::min_element(candidates.begin(), candidates.end(), [&](const Shape& x, const Shape& y) {
    const int64_t sx = steps(x), sy = steps(y);
    if (sx != sy) return sx < sy;
    return std::llabs(chips_of(x) - chips_of(given)) < std::llabs(chips_of(y) - chips_of(given));
  });
}

// A chip's share of its host's data-center network bandwidth, per direction (bytes/s): v5e
// 25 Gb/s (Google Cloud's "TPU v5e" page: 6.4 Tb/s of DCN bandwidth per 256-chip pod, two
// 100 Gb/s NICs per 8-chip host); v5p 50 Gb/s and v6e 100 Gb/s ("How to Scale Your Model",
// part 2, DCN egress bandwidth per chip: 6.25e9 and 1.25e10 bytes/s; v5p's ct5p-hightpu-4t VM
// has 200 Gb/s for its 4 chips). No per-chip figure for v4 was found: it must be given.
std::optional<double> dcn_per_chip_Bps(std::string_view chip) {
  if (chip == "TPU-v5e") return 25e9 / 8;
  if (chip == "TPU-v5p") return 50e9 / 8;
  if (chip == "TPU-v6e") return 100e9 / 8;
  return std::nullopt;
}

std::string offered_list(const SliceRule& r) {
  std::string out;
  for (const Shape& s : r.listed) out += (out.empty() ? "" : ", ") + shape_name(s);
  if (r.dims == 3)
    out += ", or AxBxC with every side a multiple of 4, at most " + std::to_string(r.max_chips) + " chips";
  return out;
}

}  // namespace

void parse_tpu_slice(const json& doc, const json& t, Config& config) {
  const std::string& chip = config.gpu.name;
  const auto rule = slice_rule(chip);
  if (!rule)
    throw InputError("hardware.gpu", "a tpu_slice is a slice of TPU chips; hardware.gpu is \"" + chip + "\"",
                     "set hardware.gpu to \"TPU-v4\", \"TPU-v5e\", \"TPU-v5p\" or \"TPU-v6e\"");
  const compute::GpuSpec& spec = *compute::find_gpu(chip);
  refuse_keys(t, std::string(kTopology), {"dims", "parallel_links", "switch_radix"},
              "to a torus, not to a tpu_slice: its shape and the chip's ICI links fix them");
  const json* list = member(t, "shape");
  const std::string at = "topology.shape";
  if (!list)
    throw InputError(at, "a tpu_slice needs its shape: a list of " + std::to_string(rule->dims) + " sides",
                     "e.g. \"shape\": " + std::string(rule->dims == 3 ? "[4, 4, 4]" : "[4, 4]"));
  if (!list->is_array() || list->empty())
    throw InputError(at, "expected a list of " + std::to_string(rule->dims) + " sides; got " + describe_value(*list));
  Shape shape;
  for (std::size_t i = 0; i < list->size(); ++i)
    shape.push_back(static_cast<int>(int_value((*list)[i], join_path(at, i), 1, 65536)));
  Shape sorted = shape;
  std::sort(sorted.begin(), sorted.end());
  if (static_cast<int>(shape.size()) != rule->dims || !offered(*rule, sorted))
    throw InputError(at,
                     "a " + chip + " slice is " + offered_list(*rule) + "; got " + shape_name(shape),
                     "the nearest " + chip + " slice: " + shape_name(nearest_offered(*rule, shape)));
  const json& node = object_or_empty(object_or_empty(doc, "hardware", ""), "node", "hardware");
  for (const char* key : {"gpus", "nics"})
    if (const json* v = member(node, key); v && !(v->is_number_integer() && v->get<int64_t>() == 1))
      throw InputError(join_path("hardware.node", key), "a tpu_slice holds one chip per torus position",
                       "remove hardware.node." + std::string(key));
  topo::TopologyParams& p = config.topology;
  compute::set_tpu_slice_topology(spec, shape, p);
  config.in_network.nvls = false;
  p.link_bandwidth_Bps = get_ranged(t, "link_bandwidth", kTopology, "link_bandwidth", spec.ici_link_Bps);
  p.link_latency_s = get_ranged(t, "link_latency", kTopology, "latency", compute::kIciHopLatency_s);
  p.slices = static_cast<int>(get_int(t, "slices", kTopology, 1, 1, 4096));
  if (p.slices > 1) {
    const std::optional<double> dcn = dcn_per_chip_Bps(chip);
    if (!dcn && !member(t, "dcn_bandwidth"))
      throw InputError("topology.dcn_bandwidth", "a " + chip + " multislice needs the DCN bandwidth per chip: no "
                                                 "published per-chip figure is built in for " + chip,
                       "e.g. \"dcn_bandwidth\": \"50Gbps\" (v5p's figure)");
    p.dcn_bandwidth_Bps = get_ranged(t, "dcn_bandwidth", kTopology, "link_bandwidth", dcn.value_or(0));
    // The DCN switch hop costs what any fabric switch hop does here (no published DCN latency).
    p.dcn_latency_s = get_ranged(t, "dcn_latency", kTopology, "latency", p.link_latency_s);
  }
  const int64_t chips = chips_of(shape) * p.slices;
  if (chips > kMaxTotalGpus)
    throw InputError("topology.slices", std::to_string(p.slices) + " slices of " + shape_name(shape) + " are " +
                                            std::to_string(chips) + " chips; at most " + std::to_string(kMaxTotalGpus));
  p.nodes = static_cast<int>(chips);
  const int64_t nodes = get_int(t, "nodes", kTopology, p.nodes, 1, kMaxTotalGpus);
  if (nodes != p.nodes)
    throw InputError("topology.nodes", (p.slices > 1 ? std::to_string(p.slices) + " slices of " + shape_name(shape) + " have "
                                                     : "a " + shape_name(shape) + " slice has ") +
                                           std::to_string(p.nodes) + " chips, one per node; got " + std::to_string(nodes),
                     "remove topology.nodes");
  p.nodes_per_rack = static_cast<int>(get_int(t, "nodes_per_rack", kTopology, 4, 1, 4096));
  check_torus_params(p);
}

}  // namespace cs::scenario::detail
