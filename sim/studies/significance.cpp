// The best against the runner-up, by their 95% intervals.
#include "sim/studies/significance.hpp"

#include <algorithm>
#include <cmath>
#include <cstdio>

namespace cs::studies {

std::optional<std::string> not_significant(const std::string& what, std::vector<Estimate> estimates,
                                           bool lower_is_better) {
  estimates.erase(std::remove_if(estimates.begin(), estimates.end(),
                                 [](const Estimate& e) { return !std::isfinite(e.mean) || !std::isfinite(e.ci95); }),
                  estimates.end());
  if (estimates.size() < 2) return std::nullopt;
  // Stable: ties keep the order given, so the same input names the same winner.
  std::stable_sort(estimates.begin(), estimates.end(), [&](const Estimate& a, const Estimate& b) {
    return lower_is_better ? a.mean < b.mean : a.mean > b.mean;
  });
  const Estimate& best = estimates[0];
  const Estimate& next = estimates[1];
  if (best.ci95 <= 0 && next.ci95 <= 0) return std::nullopt;
  if (std::abs(next.mean - best.mean) > best.ci95 + next.ci95) return std::nullopt;
  char text[512];
  std::snprintf(text, sizeof text,
                "%s: %s (%.6g +- %.3g) against %s (%.6g +- %.3g): the 95%% intervals overlap, not significant; more "
                "replications, or a paired comparison at common seeds, may separate them",
                what.c_str(), best.label.c_str(), best.mean, best.ci95, next.label.c_str(), next.mean, next.ci95);
  return std::string(text);
}

}  // namespace cs::studies
