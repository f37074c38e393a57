#pragma once
// Paired comparison of variants of one scenario (policies, fleets) under common random numbers:
// replication r of every variant runs with the same seed (the scenario's seed + r), so their
// difference is measured seed by seed and its 95% interval is the paired one (Student's t on
// the per-seed differences), far narrower than the two means' intervals side by side when the
// seeds drive both variants alike. One implementation for Python's clustersim.paired.
#include <functional>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "sim/studies/sweep.hpp"

namespace cs::studies {

struct PairedVariant {
  std::string label;
  SweepPoint point;  // (path, value) set on the scenario, as --set
};

// Runs every variant at `replications` seeds (each run one replication: run.replications is
// set to 1 and seed to the scenario's seed + r), at most `jobs` at once (0: TBB's default);
// the result is the same for any `jobs`. Returns
//   {"replications", "seeds": [...], "baseline": the first variant's label,
//    "variants": [{"label", "point", "numbers": {KEY: {"mean", "ci95", "values": [per seed]}}}],
//    "differences": [{"key", "variant", "baseline", "mean", "ci95", "conclusive", "lower",
//                     "higher", "equal"}],  (variant - baseline, per key, for every other variant;
//                     lower/higher/equal: seeds where the variant's number was below, above)
//    "warnings": [...]}.
// A warning names each difference whose interval covers 0 while the seeds disagree on its sign
// (not significant: a conclusion from any one seed would rest on chance). InputError at `at` for fewer than two
// variants, fewer than one replication, or a key that names no number of the summaries (with
// the nearest key); a variant's invalid scenario is an InputError naming the variant.
// `interrupted` (may be empty) is polled by every run (world::RunOptions::interrupted).
nlohmann::json paired_comparison(const nlohmann::json& base, const std::vector<PairedVariant>& variants,
                                 const std::vector<std::string>& keys, int replications, int jobs,
                                 const std::string& at, const std::function<bool()>& interrupted = {});

}  // namespace cs::studies
