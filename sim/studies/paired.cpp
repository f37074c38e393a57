// Paired comparison under common random numbers: every variant at the same seeds, differences
// seed by seed.
#include "sim/studies/paired.hpp"

#include <cstdio>
#include <vector>

#include "sim/engine/statistics.hpp"
#include "sim/scenario/load.hpp"
#include "sim/studies/parallel.hpp"
#include "sim/studies/size_requirement.hpp"
#include "sim/world/run.hpp"

namespace cs::studies {

using nlohmann::json;
using scenario::InputError;

json paired_comparison(const json& base, const std::vector<PairedVariant>& variants, const std::vector<std::string>& keys,
                       int replications, int jobs, const std::string& at, const std::function<bool()>& interrupted) {
  if (variants.size() < 2) throw InputError(at, "at least two variants to compare (the first is the baseline)");
  if (replications < 1) throw InputError(at, "replications: at least 1 (10 or more for a useful interval)");
  if (keys.empty()) throw InputError(at, "at least one summary key to compare, e.g. serving.cost_usd");
  const std::size_t seeds = std::size_t(replications), n = variants.size() * seeds;
  const uint64_t first_seed = base.value("seed", uint64_t{0});
  // Run i: variant i / seeds at seed first_seed + i % seeds.
  std::vector<json> summaries(n);
  for_each_index(n, jobs, [&](std::size_t i) {
    const PairedVariant& v = variants[i / seeds];
    json doc = base;
    try {
      for (const auto& [path, value] : v.point) scenario::set_path(doc, path, value);
      scenario::set_path(doc, "seed", first_seed + i % seeds);
      scenario::set_path(doc, "run.replications", 1);
      world::RunOptions options;
      options.threads = 1;
      options.interrupted = interrupted;
      summaries[i] = world::run_scenario(scenario::parse_config(doc), options).summary;
    } catch (const InputError& e) {
      throw InputError(e.path(), e.expected() + " (variant " + v.label + ")", e.hint());
    }
  });
  for (const std::string& key : keys) check_summary_key(summaries.front(), key, at);

  // values[v][k][r]: variant v's number `k` at seed r.
  std::vector<std::vector<std::vector<double>>> values(variants.size(), std::vector<std::vector<double>>(keys.size()));
  json out;
  out["replications"] = replications;
  out["seeds"] = json::array();
  for (std::size_t r = 0; r < seeds; ++r) out["seeds"].push_back(first_seed + r);
  out["baseline"] = variants.front().label;
  out["variants"] = json::array();
  for (std::size_t v = 0; v < variants.size(); ++v) {
    json numbers = json::object();
    for (std::size_t k = 0; k < keys.size(); ++k) {
      for (std::size_t r = 0; r < seeds; ++r) {
        const SummaryNumber x = summary_number_at(summaries[v * seeds + r], keys[k]);
        values[v][k].push_back(x.finite ? x.mean : std::nan(""));
      }
      const engine::MeanCi s = engine::mean_ci95(values[v][k]);
      numbers[keys[k]] = {{"mean", s.mean}, {"ci95", s.ci95}, {"values", values[v][k]}};
    }
    json point = json::object();
    for (const auto& [path, value] : variants[v].point) point[path] = value;
    out["variants"].push_back({{"label", variants[v].label}, {"point", point}, {"numbers", numbers}});
  }
  out["differences"] = json::array();
  out["warnings"] = json::array();
  for (std::size_t k = 0; k < keys.size(); ++k)
    for (std::size_t v = 1; v < variants.size(); ++v) {
      std::vector<double> d(seeds);
      int lower = 0, higher = 0, equal = 0;
      for (std::size_t r = 0; r < seeds; ++r) {
        d[r] = values[v][k][r] - values[0][k][r];
        (d[r] < 0 ? lower : d[r] > 0 ? higher : equal)++;
      }
      const engine::MeanCi s = engine::mean_ci95(d);
      const bool conclusive = seeds > 1 && (s.mean - s.ci95 > 0 || s.mean + s.ci95 < 0);
      out["differences"].push_back({{"key", keys[k]}, {"variant", variants[v].label},
                                    {"baseline", variants[0].label}, {"mean", s.mean}, {"ci95", s.ci95},
                                    {"conclusive", conclusive}, {"lower", lower}, {"higher", higher},
                                    {"equal", equal}});
      char buf[512];
      if (seeds == 1) {
        std::snprintf(buf, sizeof buf, "%s: %s - %s = %.6g from one seed: no interval; compare over replications",
                      keys[k].c_str(), variants[v].label.c_str(), variants[0].label.c_str(), s.mean);
        out["warnings"].push_back(buf);
      } else if (!conclusive && lower > 0 && higher > 0) {
        std::snprintf(buf, sizeof buf,
                      "%s: %s - %s = %.6g +- %.3g (95%%, %zu seeds): not significant, the seeds disagree (%d lower, "
                      "%d higher); a conclusion from one seed would rest on chance",
                      keys[k].c_str(), variants[v].label.c_str(), variants[0].label.c_str(), s.mean, s.ci95, seeds,
                      lower, higher);
        out["warnings"].push_back(buf);
      }
    }
  return out;
}

}  // namespace cs::studies
