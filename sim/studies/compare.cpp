// The architect's comparison: workloads x fabrics -> checked documents -> parallel runs ->
// one table. Each pair runs exactly as `clustersim run` would run its document.
#include "sim/studies/compare.hpp"

#include <cmath>
#include <algorithm>
#include <cstdio>
#include <optional>
#include <string>
#include <vector>

#include "sim/network/comm_factory.hpp"
#include "sim/scenario/input_error.hpp"
#include "sim/scenario/load.hpp"
#include "sim/studies/parallel.hpp"
#include "sim/studies/significance.hpp"
#include "sim/world/cluster_bill.hpp"
#include "sim/world/run.hpp"
#include "topology/narrow_links.hpp"
#include "topology/params.hpp"
#include "topology/report.hpp"
#include "topology/uniform_traffic.hpp"

namespace cs::studies {

using namespace cs::scenario;
using namespace cs::world;

using nlohmann::json;

namespace {

// A summary number, or the mean of a replicated one ({mean, ci95}).
double number(const json& v) {
  if (v.is_number()) return v.get<double>();
  if (v.is_object() && v.contains("mean") && v["mean"].is_number()) return v["mean"].get<double>();
  return std::nan("");
}

// out[key] = the number (a replicated one's mean), and out[key + "_ci95"] = its 95% half-width
// when it was replicated.
void put_number(json& out, const std::string& key, const json& v) {
  out[key] = number(v);
  if (v.is_object() && v.contains("ci95") && v["ci95"].is_number()) out[key + "_ci95"] = v["ci95"];
}

std::string format(const char* fmt, double x) {
  char buf[64];
  std::snprintf(buf, sizeof buf, fmt, x);
  return buf;
}

// 1073741824 -> "1GiB", 1e9 -> "1GB", 12345 -> "12345B".
std::string bytes_label(double bytes) {
  const struct { double unit; const char* name; } units[] = {
      {0x1p40, "TiB"}, {0x1p30, "GiB"}, {0x1p20, "MiB"}, {0x1p10, "KiB"},
      {1e12, "TB"},    {1e9, "GB"},     {1e6, "MB"},     {1e3, "KB"}};
  for (const auto& u : units)
    if (bytes >= u.unit && std::fmod(bytes, u.unit) == 0) return format("%.0f", bytes / u.unit) + u.name;
  return format("%.0f", bytes) + "B";
}

// The cases one run gives: per collective result row, the traffic's one, or the training
// step's one.
std::vector<json> cases_of(const json& summary) {
  std::vector<json> out;
  if (summary.contains("collective")) {
    const json& c = summary["collective"];
    const std::string op = c["op"].get<std::string>();
    for (const json& r : c["results"]) {
      const std::string algorithm = r.value("requested_algorithm", r.value("algorithm", std::string("")));
      std::string name = op;
      name.append(" ").append(bytes_label(number(r["bytes"]))).append(" ").append(algorithm);
      json row = {{"case", name},
                  {"algorithm", r.value("algorithm", std::string(""))},
                  {"protocol", r.value("protocol", std::string(""))}};
      if (algorithm != row["algorithm"]) row["requested_algorithm"] = algorithm;
      for (const char* key : {"time_s", "algbw_GBps", "busbw_GBps"}) put_number(row, key, r[key]);
      put_number(row, "network_usd_per_busbw_GBps", r.value("network_usd_per_busbw_GBps", json()));
      out.push_back(std::move(row));
    }
  } else if (summary.contains("traffic")) {
    const json& t = summary["traffic"];
    json row = {{"case", "traffic"}};
    for (const char* key : {"makespan_s", "mean_fct_s", "p99_fct_s"}) put_number(row, key, t[key]);
    out.push_back(std::move(row));
  } else if (summary.contains("training")) {
    const json& t = summary["training"];
    json row = {{"case", "training step"}};
    for (const char* key : {"step_time_s", "tokens_per_s", "exposed_comm_s", "compute_s", "mfu"})
      if (t.contains(key)) put_number(row, key, t[key]);
    out.push_back(std::move(row));
  }
  return out;
}

// A result row's case as the table names it: "[workload] case".
std::string case_label(const json& r) {
  std::string key = "[";  // appended piecewise: GCC 12's -Wrestrict misfires on "[" + s + "] "
  key.append(r["workload"].get<std::string>()).append("] ").append(r["case"].get<std::string>());
  return key;
}

// Under replications: per workload and case, a warning where the fastest fabric's interval
// overlaps the runner-up's (significance.hpp).
json significance_warnings(const json& results) {
  json warnings = json::array();
  std::vector<std::string> cases;  // in order of first appearance
  for (const json& r : results) {
    const std::string c = case_label(r);
    if (std::find(cases.begin(), cases.end(), c) == cases.end()) cases.push_back(c);
  }
  for (const std::string& c : cases)
    for (const char* key : {"time_s", "makespan_s", "mean_fct_s", "p99_fct_s"}) {
      std::vector<Estimate> estimates;
      for (const json& r : results)
        if (case_label(r) == c && r.contains(std::string(key) + "_ci95"))
          estimates.push_back({r["fabric"].get<std::string>(), number(r[key]), number(r[std::string(key) + "_ci95"])});
      std::string what = c;
      what.append(" ").append(key);
      if (auto w = not_significant(what, std::move(estimates), true)) warnings.push_back(*w);
    }
  return warnings;
}

// A row's costs beside its numbers: on all_to_all rows what a GPU's share of the network costs
// per GB/s of delivered all-to-all (algbw: what each GPU sends per second; 0 where nothing was
// delivered); on training rows the tokens/s each $M of the whole cluster buys.
void add_row_costs(json& row, const json& fabric) {
  if (row["case"].get<std::string>().rfind("all_to_all ", 0) == 0 && fabric.contains("network_cost_per_gpu_usd")) {
    const double algbw = number(row["algbw_GBps"]);
    row["network_usd_per_all_to_all_GBps"] = algbw > 0 ? number(fabric["network_cost_per_gpu_usd"]) / algbw : 0.0;
  }
  if (row.contains("tokens_per_s") && fabric.contains("cluster_cost_usd") && number(fabric["cluster_cost_usd"]) > 0)
    row["tokens_per_s_per_cluster_musd"] = number(row["tokens_per_s"]) / (number(fabric["cluster_cost_usd"]) / 1e6);
}

// The fabric's best delivered all-to-all over the comparison's all_to_all rows (each GPU's
// algbw, GB/s) and the network's cost per GPU per GB/s of it: beside the cost per GB/s of
// busbw, which an all-reduce can win on a fabric that delivers little all-to-all.
void add_delivered_all_to_all(json& fabric, const json& results) {
  double best = 0.0;
  for (const json& r : results)
    if (r["fabric"] == fabric["label"] && r.contains("network_usd_per_all_to_all_GBps"))
      best = std::max(best, number(r["algbw_GBps"]));
  if (best <= 0.0 || !fabric.contains("network_cost_per_gpu_usd")) return;
  fabric["all_to_all_delivered_GBps"] = best;
  fabric["network_usd_per_all_to_all_GBps"] = number(fabric["network_cost_per_gpu_usd"]) / best;
}

// The whole cluster beside the network: the nodes' bill (sim/world/cluster_bill.hpp) plus the
// network's, the network's cost per GPU per GB/s of the all-to-all bound, and the narrow-link
// warnings.
void add_cluster_figures(json& f, const json& nodes, const std::vector<std::string>& warnings) {
  for (const auto& [k, v] : nodes.items()) f[k] = v;
  if (f.contains("nodes_cost_usd") && f.contains("network_cost_usd")) {
    f["cluster_cost_usd"] = number(f["nodes_cost_usd"]) + number(f["network_cost_usd"]);
    if (f.contains("gpus") && number(f["gpus"]) > 0)
      f["cluster_cost_per_gpu_usd"] = number(f["cluster_cost_usd"]) / number(f["gpus"]);
  }
  if (f.contains("nodes_power_w") && f.contains("network_power_w"))
    f["cluster_power_w"] = number(f["nodes_power_w"]) + number(f["network_power_w"]);
  const double bound = f.contains("all_to_all_bound_per_gpu_Bps") ? number(f["all_to_all_bound_per_gpu_Bps"]) : 0.0;
  if (bound > 0 && f.contains("network_cost_per_gpu_usd"))
    f["network_usd_per_all_to_all_bound_GBps"] = number(f["network_cost_per_gpu_usd"]) / (bound / 1e9);
  f["warnings"] = warnings;
}

}  // namespace

json compare_fabrics(const std::vector<ComparedFabric>& fabrics, const std::vector<ComparedWorkload>& workloads,
                     const std::vector<std::string>& sets, int jobs) {
  if (fabrics.empty()) throw InputError("", "at least one fabric (scenario file) to compare");
  if (workloads.empty()) throw InputError("workload", "at least one workload to run on each fabric");
  const std::size_t n = fabrics.size() * workloads.size();
  // Pair p: workload p / fabrics, fabric p % fabrics.
  std::vector<std::optional<Config>> configs(n);
  std::vector<json> identity(fabrics.size());  // topology, routing and model as run
  std::vector<json> node_bills(fabrics.size());
  std::vector<std::vector<std::string>> warnings(fabrics.size());
  std::vector<json> tier_ratios(fabrics.size(), json::array());  // fat-trees: achieved down:up per tier
  for_each_index(n, jobs, [&](std::size_t p) {
    const ComparedFabric& f = fabrics[p % fabrics.size()];
    const ComparedWorkload& w = workloads[p / fabrics.size()];
    try {
      json doc = f.doc;
      doc["workload"] = w.workload;
      for (const std::string& s : sets) apply_override(doc, s);
      // Before parsing: another kind's own required keys would hide what is wrong.
      const json* kind = doc["workload"].is_object() && doc["workload"].contains("kind") ? &doc["workload"]["kind"] : nullptr;
      if (kind && kind->is_string() && *kind != "collective" && *kind != "traffic" && *kind != "training")
        throw InputError("workload.kind", "collective, traffic or training: compare runs network and training workloads on each fabric; got \"" +
                                              kind->get<std::string>() + "\"");
      Config config = parse_config(doc);
      check_buildable(config);
      if (p < fabrics.size()) {
        identity[p] = {{"topology", std::string(topo::to_string(config.topology.kind))},
                       {"routing", std::string(topo::to_string(config.network.routing))},
                       {"model", std::string(net::to_string(config.network.model))}};
        node_bills[p] = world::detail::nodes_bill(config);
        const topo::Topology topology = build_topology(config);
        warnings[p] = topo::narrow_link_warnings(topology);
        for (const topo::TierRatio& r : topo::tier_ratios(topology)) tier_ratios[p].push_back(r.ratio);
      }
      configs[p] = std::move(config);
    } catch (const InputError& e) {
      throw InputError(e.path(), e.expected() + " (fabric " + f.label + ", workload " + w.label + ")", e.hint());
    }
  });
  std::vector<json> summaries(n);
  RunOptions options;
  options.draw_ahead = jobs == 1 || n == 1;  // runs at once are the parallel work (RunOptions::draw_ahead)
  for_each_index(n, jobs, [&](std::size_t p) {
    summaries[p] = run_scenario(*configs[p], options).summary;
    configs[p].reset();
  });

  json out = {{"fabrics", json::array()}, {"results", json::array()}};
  for (std::size_t j = 0; j < fabrics.size(); ++j) {
    const json& s = summaries[j];  // workload 0 on fabric j: the fabric block is the workload's alone
    json f = {{"label", fabrics[j].label}};
    for (const auto& [k, v] : identity[j].items()) f[k] = v;
    if (s.contains("fabric"))
      for (const auto& [k, v] : s["fabric"].items()) f[k] = v;
    add_cluster_figures(f, node_bills[j], warnings[j]);
    if (!tier_ratios[j].empty()) f["oversubscription_by_tier"] = tier_ratios[j];
    out["fabrics"].push_back(std::move(f));
  }
  for (std::size_t w = 0; w < workloads.size(); ++w) {
    std::vector<std::vector<json>> cases(fabrics.size());
    std::size_t rows = 0;
    for (std::size_t j = 0; j < fabrics.size(); ++j) {
      cases[j] = cases_of(summaries[w * fabrics.size() + j]);
      rows = std::max(rows, cases[j].size());
    }
    for (std::size_t c = 0; c < rows; ++c)
      for (std::size_t j = 0; j < fabrics.size(); ++j) {
        if (c >= cases[j].size()) continue;  // run.until cut this fabric's table short
        json row = {{"fabric", fabrics[j].label}, {"workload", workloads[w].label}};
        for (const auto& [k, v] : cases[j][c].items()) row[k] = v;
        add_row_costs(row, out["fabrics"][j]);
        out["results"].push_back(std::move(row));
      }
  }
  out["warnings"] = significance_warnings(out["results"]);
  for (json& f : out["fabrics"]) add_delivered_all_to_all(f, out["results"]);
  return out;
}

std::string comparison_text(const json& comparison) {
  const json& fabrics = comparison["fabrics"];
  const std::size_t columns = fabrics.size();
  std::vector<std::pair<std::string, std::vector<std::string>>> lines;
  const auto line = [&](std::string name, auto cell) {
    std::vector<std::string> cells;
    for (std::size_t j = 0; j < columns; ++j) cells.push_back(cell(fabrics[j], j));
    lines.emplace_back(std::move(name), std::move(cells));
  };
  const auto field = [](const json& f, const char* key) { return f.contains(key) ? number(f[key]) : std::nan(""); };
  const auto shown = [](const char* fmt, double x) { return std::isnan(x) ? std::string("-") : format(fmt, x); };
  line("", [](const json& f, std::size_t) { return f["label"].get<std::string>(); });
  line("topology, routing", [](const json& f, std::size_t) {
    return f["topology"].get<std::string>() + " " + f["routing"].get<std::string>();
  });
  line("GPUs", [&](const json& f, std::size_t) { return shown("%.0f", field(f, "gpus")); });
  line("down:up by tier, leaf first", [&](const json& f, std::size_t) {
    std::string text;
    for (const json& r : f.value("oversubscription_by_tier", json::array()))
      text += (text.empty() ? "" : " / ") + format("%.3g", r.get<double>());
    return text.empty() ? std::string("-") : text;
  });
  line("switches", [&](const json& f, std::size_t) { return shown("%.0f", field(f, "switches")); });
  line("cables copper / AOC / fiber", [&](const json& f, std::size_t) {
    return shown("%.0f", field(f, "copper_cables")) + " / " + shown("%.0f", field(f, "aoc_cables")) + " / " +
           shown("%.0f", field(f, "fiber_cables"));
  });
  line("network cost ($M)", [&](const json& f, std::size_t) { return shown("%.3f", field(f, "network_cost_usd") / 1e6); });
  line("network power (kW)", [&](const json& f, std::size_t) { return shown("%.1f", field(f, "network_power_w") / 1e3); });
  line("network $ per GPU", [&](const json& f, std::size_t) { return shown("%.0f", field(f, "network_cost_per_gpu_usd")); });
  line("nodes + network cost ($M)", [&](const json& f, std::size_t) { return shown("%.2f", field(f, "cluster_cost_usd") / 1e6); });
  line("nodes + network power (kW)", [&](const json& f, std::size_t) { return shown("%.0f", field(f, "cluster_power_w") / 1e3); });
  line("nodes + network $ per GPU", [&](const json& f, std::size_t) { return shown("%.0f", field(f, "cluster_cost_per_gpu_usd")); });
  line("bisection (TB/s)", [&](const json& f, std::size_t) { return shown("%.2f", field(f, "bisection_bandwidth_Bps") / 1e12); });
  line("$ per GB/s of bisection", [&](const json& f, std::size_t) { return shown("%.1f", field(f, "network_usd_per_bisection_GBps")); });
  line("all-to-all bound (GB/s per GPU)", [&](const json& f, std::size_t) {
    const double x = field(f, "all_to_all_bound_per_gpu_Bps");
    return std::isnan(x) || x <= 0 ? std::string("-")
                                   : format("%.1f", x / 1e9) + " (" + f["all_to_all_bound_limit"].get<std::string>() + ")";
  });
  line("network $ / (GPU x GB/s of all-to-all bound)",
       [&](const json& f, std::size_t) { return shown("%.1f", field(f, "network_usd_per_all_to_all_bound_GBps")); });
  bool delivered = false;
  for (const json& f : fabrics) delivered = delivered || f.contains("all_to_all_delivered_GBps");
  if (delivered) {
    line("all-to-all delivered (GB/s per GPU)",
         [&](const json& f, std::size_t) { return shown("%.1f", field(f, "all_to_all_delivered_GBps")); });
    line("network $ / (GPU x GB/s of all-to-all delivered)",
         [&](const json& f, std::size_t) { return shown("%.1f", field(f, "network_usd_per_all_to_all_GBps")); });
  }

  // Results: one block per (workload, case), in the order they come.
  std::vector<std::string> order;
  std::vector<std::vector<const json*>> by_case;
  for (const json& r : comparison["results"]) {
    const std::string key = case_label(r);
    std::size_t k = 0;
    while (k < order.size() && order[k] != key) ++k;
    if (k == order.size()) {
      order.push_back(key);
      by_case.emplace_back(columns, nullptr);
    }
    for (std::size_t j = 0; j < columns; ++j)
      if (fabrics[j]["label"] == r["fabric"]) by_case[k][j] = &r;
  }
  for (std::size_t k = 0; k < order.size(); ++k) {
    lines.emplace_back(order[k], std::vector<std::string>(columns));
    const auto metric = [&](std::string name, const char* key, const char* fmt, double scale) {
      bool any = false;
      for (const json* r : by_case[k]) any = any || (r && r->contains(key));
      if (!any) return;
      line("  " + name, [&](const json&, std::size_t j) {
        const json* r = by_case[k][j];
        return r && r->contains(key) ? shown(fmt, number((*r)[key]) * scale) : std::string("-");
      });
    };
    // What auto chose, where a case asked for it: "tree LL128".
    bool chosen = false;
    for (const json* r : by_case[k]) chosen = chosen || (r && r->contains("requested_algorithm"));
    if (chosen)
      line("  chosen algorithm", [&](const json&, std::size_t j) {
        const json* r = by_case[k][j];
        if (!r) return std::string("-");
        std::string text = (*r)["algorithm"].get<std::string>();
        const std::string protocol = r->value("protocol", std::string(""));
        return protocol.empty() ? text : text + " " + protocol;
      });
    metric("time (us)", "time_s", "%.1f", 1e6);
    metric("busbw (GB/s)", "busbw_GBps", "%.1f", 1);
    metric("network $ / (GPU x GB/s of busbw)", "network_usd_per_busbw_GBps", "%.1f", 1);
    metric("makespan (us)", "makespan_s", "%.1f", 1e6);
    metric("mean FCT (us)", "mean_fct_s", "%.1f", 1e6);
    metric("p99 FCT (us)", "p99_fct_s", "%.1f", 1e6);
    metric("step time (ms)", "step_time_s", "%.2f", 1e3);
    metric("tokens/s", "tokens_per_s", "%.0f", 1);
    metric("exposed communication (ms)", "exposed_comm_s", "%.2f", 1e3);
    metric("MFU", "mfu", "%.3f", 1);
    metric("tokens/s per $M of nodes + network", "tokens_per_s_per_cluster_musd", "%.0f", 1);
  }

  std::size_t name_width = 0;
  std::vector<std::size_t> width(columns, 0);
  for (const auto& [name, cells] : lines) {
    name_width = std::max(name_width, name.size());
    for (std::size_t j = 0; j < columns; ++j) width[j] = std::max(width[j], cells[j].size());
  }
  std::string out;
  for (const auto& [name, cells] : lines) {
    std::string text = name + std::string(name_width - name.size(), ' ');
    for (std::size_t j = 0; j < columns; ++j) text += "  " + std::string(width[j] - cells[j].size(), ' ') + cells[j];
    while (!text.empty() && text.back() == ' ') text.pop_back();
    out += text + "\n";
  }
  out += std::string("figures: ") + topo::kBisectionAssumes + "; " + topo::kUniformTrafficAssumes + "\n";
  if (comparison.contains("warnings"))
    for (const json& w : comparison["warnings"]) out += "warning: " + w.get<std::string>() + "\n";
  out += "costs: nodes at data/ownership.json's typical price and power, network as `topo` bills it; "
         "network $ / (GPU x GB/s): the network's cost per GPU over each GPU's delivered GB/s\n";
  for (const json& f : fabrics)
    for (const json& w : f.value("warnings", json::array()))
      out += "warning: " + f["label"].get<std::string>() + ": " + w.get<std::string>() + "\n";
  return out;
}

}  // namespace cs::studies
