#pragma once
// Whether a comparison's winner is significant: the best of several replicated estimates
// against the runner-up. Overlapping 95% intervals are read as "not significant" (a
// conservative test: two intervals may overlap a little while their difference is significant,
// but never separate while it is not), so a study that names a winner says when the seeds
// could as well have named another. Shared by `compare` and `size`.
#include <optional>
#include <string>
#include <vector>

namespace cs::studies {

struct Estimate {
  std::string label;  // what gave it (a fabric, a point)
  double mean = 0;
  double ci95 = 0;    // 95% half-width; 0 for one replication (no interval)
};

// When the best estimate (least with lower_is_better, else greatest) and the runner-up have
// intervals that overlap, a sentence naming `what`, both and their intervals; nothing when
// fewer than two estimates, when the best is alone in its interval, or when neither has an
// interval (one replication: nothing to judge by).
std::optional<std::string> not_significant(const std::string& what, std::vector<Estimate> estimates,
                                           bool lower_is_better);

}  // namespace cs::studies
