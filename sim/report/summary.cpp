#include "sim/report/summary.hpp"

#include <algorithm>
#include <cmath>
#include <set>
#include <stdexcept>
#include <string>

namespace cs::report {

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
  // A number some replications did not observe (null there, e.g. serving.slo.attainment_by_hour's
  // hour without a finished request) combines over the replications that did.
  const auto is_number = [](const nlohmann::json& j) { return j.is_number() && !j.is_boolean(); };
  if (!same_type([&](const nlohmann::json& j) { return is_number(j) || j.is_null(); })) return first;
  const auto observed = std::find_if(xs.begin(), xs.end(), [&](const auto* x) { return is_number(*x); });
  if (observed == xs.end()) return first;
  if (!identifying_keys().count(key)) {
    std::vector<double> v;
    for (const auto* x : xs)
      if (is_number(*x)) v.push_back(x->get<double>());
    const engine::MeanCi s = engine::mean_ci95(v);
    return {{"mean", s.mean}, {"ci95", s.ci95}};
  }
  return **observed;
}

}  // namespace

nlohmann::json summary_number(double value) {
  if (!std::isfinite(value)) return nullptr;
  if (std::floor(value) == value && std::fabs(value) <= 0x1p53) return static_cast<int64_t>(value);
  return value;
}

void add_grouped_numbers(nlohmann::json& block, const std::vector<std::pair<std::string, double>>& numbers) {
  for (const auto& [name, value] : numbers) {
    const auto dot = name.find('.');
    if (dot == std::string::npos) block[name] = summary_number(value);
    else block[name.substr(0, dot)][name.substr(dot + 1)] = summary_number(value);
  }
}

nlohmann::json combine_replications(const std::vector<nlohmann::json>& summaries) {
  if (summaries.empty()) throw std::invalid_argument("combine_replications: no summaries");
  if (summaries.size() == 1) return summaries.front();
  std::vector<const nlohmann::json*> xs;
  for (const auto& s : summaries) xs.push_back(&s);
  return combine(xs, "");
}

}  // namespace cs::report
