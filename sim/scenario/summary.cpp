#include "sim/scenario/summary.hpp"

#include <algorithm>
#include <cmath>
#include <set>
#include <stdexcept>
#include <string>

namespace cs::scenario {

double percentile(std::vector<double> values, double p) {
  if (values.empty()) return 0.0;
  const std::size_t n = values.size();
  std::size_t rank = static_cast<std::size_t>(std::ceil(p / 100.0 * static_cast<double>(n)));
  rank = std::clamp<std::size_t>(rank, 1, n);
  std::nth_element(values.begin(), values.begin() + (rank - 1), values.end());
  return values[rank - 1];
}

double mean(const std::vector<double>& values) {
  if (values.empty()) return 0.0;
  double s = 0;
  for (double v : values) s += v;
  return s / static_cast<double>(values.size());
}

double ci95_halfwidth(double sd, std::size_t n) {
  if (n < 2) return 0.0;
  // Two-sided 95% quantiles of Student's t for df = 1..30; beyond, the normal 1.96 is within 2%.
  static constexpr double t975[] = {12.706, 4.303, 3.182, 2.776, 2.571, 2.447, 2.365, 2.306,
                                    2.262,  2.228, 2.201, 2.179, 2.160, 2.145, 2.131, 2.120,
                                    2.110,  2.101, 2.093, 2.086, 2.080, 2.074, 2.069, 2.064,
                                    2.060,  2.056, 2.052, 2.048, 2.045, 2.042};
  const std::size_t df = n - 1;
  const double t = df <= 30 ? t975[df - 1] : 1.96;
  return t * sd / std::sqrt(static_cast<double>(n));
}

namespace {

const std::set<std::string>& identifying_keys() {
  static const std::set<std::string> keys{"seed", "ranks", "groups", "bytes", "flows", "replications"};
  return keys;
}

// Replications may differ in shape: run.until can cut one's collective sizes short of
// another's. An object keeps the keys of the first replication that every replication has; an
// array keeps the entries every replication has (the shortest length). What is dropped is
// what some replication did not reach (the collective block's sizes_not_run says how much).
nlohmann::json combine(const std::vector<const nlohmann::json*>& xs, const std::string& key) {
  const nlohmann::json& first = *xs.front();
  const auto same_type = [&](auto is) { return std::all_of(xs.begin(), xs.end(), [&](const auto* x) { return is(*x); }); };
  if (first.is_object() && same_type([](const nlohmann::json& j) { return j.is_object(); })) {
    nlohmann::json out = nlohmann::json::object();
    for (auto it = first.begin(); it != first.end(); ++it) {
      std::vector<const nlohmann::json*> children;
      for (const auto* x : xs)
        if (const auto c = x->find(it.key()); c != x->end()) children.push_back(&*c);
      if (children.size() == xs.size()) out[it.key()] = combine(children, it.key());
    }
    return out;
  }
  if (first.is_array() && same_type([](const nlohmann::json& j) { return j.is_array(); })) {
    std::size_t n = first.size();
    for (const auto* x : xs) n = std::min(n, x->size());
    nlohmann::json out = nlohmann::json::array();
    for (std::size_t i = 0; i < n; ++i) {
      std::vector<const nlohmann::json*> children;
      for (const auto* x : xs) children.push_back(&(*x)[i]);
      out.push_back(combine(children, key));
    }
    return out;
  }
  if (!same_type([](const nlohmann::json& j) { return j.is_number() && !j.is_boolean(); })) return first;
  if (first.is_number() && !first.is_boolean() && !identifying_keys().count(key)) {
    std::vector<double> v;
    for (const auto* x : xs) v.push_back(x->get<double>());
    const double m = mean(v);
    double ss = 0;
    for (double d : v) ss += (d - m) * (d - m);
    const double sd = v.size() > 1 ? std::sqrt(ss / static_cast<double>(v.size() - 1)) : 0.0;
    return {{"mean", m}, {"ci95", ci95_halfwidth(sd, v.size())}};
  }
  return first;
}

}  // namespace

nlohmann::json combine_replications(const std::vector<nlohmann::json>& summaries) {
  if (summaries.empty()) throw std::invalid_argument("combine_replications: no summaries");
  if (summaries.size() == 1) return summaries.front();
  std::vector<const nlohmann::json*> xs;
  for (const auto& s : summaries) xs.push_back(&s);
  return combine(xs, "");
}

}  // namespace cs::scenario
