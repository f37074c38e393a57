#pragma once
// Sizing (`clustersim size`, Python `clustersim.size`): the point of a varied space with the
// least objective (default the workload's cost_usd) that meets every requirement. One search
// for both front ends; it asks for runs and is told their summaries, so that the CLI runs them
// on this machine's cores (size_search below) and Python on any executor or a Dask cluster.
//
// How the space is searched
// - An axis whose values are consecutive whole numbers (LO..HI, at least 3 of them: replicas,
//   nodes, an autoscaler's max) is a resource: the first such axis is bisected for every
//   combination of the other axes (each combination is a "line"), assuming that a value
//   meeting the requirements is met by every larger value too (more replicas never break a
//   requirement that fewer met), and that the objective grows with it (more replicas cost
//   more), so the least value that meets them is its line's answer. The least value is run
//   first (it may meet already), then values doubling away from it until one meets, then the
//   boundary is bisected: about 2 log2(n) runs for n values at most, fewer when the answer is
//   small. Other axes are enumerated.
// - Dominated lines are pruned: once a value of a line misses the requirements at an objective
//   above the best feasible point found, the larger values that might meet them cost more.
// - Lines advance in rounds, every line one step per round, the runs of a round in parallel;
//   pruning uses the best point of the rounds before. So the points tried, and the answer, are
//   the same for any number of workers. Every point runs with the scenario's own seed (common
//   random numbers: two points differ by what was varied, not by their draws).
// - A point near a requirement's bound (its 95% interval covers the bound; with one
//   replication, within `near` of it relatively) is run again with `confirm_replications`
//   replications before it counts, unless it costs more than the best point found (then its
//   side of the bound changes nothing: its line cannot win through it). The best point's requirements say how sure it is: "sure"
//   when the requirement's 95% interval lies wholly on the meeting side of the bound.
//   The answer's own line is bisected to its boundary, so the value just below the answer was
//   run and missed (unless the answer is the axis' least value).
// The answer is the feasible point tried with the least objective (ties: the first in the
// space's order, the first axis slowest).
#include <cstddef>
#include <functional>
#include <map>
#include <optional>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "sim/scenario/input_error.hpp"
#include "sim/studies/size_requirement.hpp"
#include "sim/studies/sweep.hpp"

namespace cs::studies {

struct SizeAxis {
  std::string path;                      // dot-separated, as --set takes it
  std::vector<nlohmann::json> values;
  bool searched = false;                 // set by the search: the bisected axis
};

// LO..HI as whole numbers: "4..40". nullopt when `text` is not of that form; InputError at `at`
// when it is but LO > HI (an empty range).
std::optional<std::vector<nlohmann::json>> integer_range(const std::string& text, const std::string& at);

// What the errors of the search are named after: the CLI's options or Python's arguments.
struct SizeNames {
  std::string vary = "--vary", require = "--require", minimize = "--minimize", max_runs = "--max-runs";
};
inline SizeNames python_size_names() { return {"vary", "require", "minimize", "max_runs"}; }

struct SizeOptions {
  std::vector<Requirement> requirements;
  std::string minimize;               // a summary path; "" = "<workload kind>.cost_usd"
  int confirm_replications = 10;      // a point near a bound is run again with this many (<= 1: never)
  double near = 0.01;                 // relative distance to a bound that counts as near (one replication)
  std::size_t max_runs = 2000;        // the run budget: a space that may need more is refused
  SizeNames names;
};

// One run the search asks for: a point at some replications, as a scenario document.
struct SizeRun {
  std::size_t point = 0;              // the point's index in the space
  int replications = 1;
  nlohmann::json doc;
};

// What a run gave: its summary, or the input error that stopped it.
struct SizeOutcome {
  nlohmann::json summary;
  std::optional<scenario::InputError> error;
};

class SizeSearch {
 public:
  // Throws InputError (named as options.names says) for an empty space (no axis, an axis with
  // no values), axes given twice or nested, a requirement list that is empty while nothing is
  // minimized, and a space whose worst case needs more runs than options.max_runs.
  SizeSearch(nlohmann::json base, std::vector<SizeAxis> axes, SizeOptions options);

  // The runs of the next round (in point order); empty when the search is over.
  std::vector<SizeRun> next();
  // The outcomes of next()'s runs, in its order. Throws InputError when a requirement or the
  // objective names no number of a summary.
  void tell(const std::vector<SizeRun>& runs, const std::vector<SizeOutcome>& outcomes);

  // Worst-case point runs before confirmations (what max_runs bounds), and runs so far.
  std::size_t run_bound() const { return run_bound_; }
  std::size_t runs_done() const { return runs_done_; }

  // {"best": {"point", "summary", "objective", "requirements": [...]} | null, "minimize",
  //  "requirements", "searched", "points": [{"point", "feasible", "objective", "replications",
  //  "round", "requirements": {text: {"mean", "ci95", "holds"}}, "summary" | "error"}],
  //  "runs", "lines", "lines_pruned", "warnings": [a line per requirement of the best point
  //  whose 95% interval reaches past its bound, and one when its objective's 95% interval
  //  overlaps the runner-up's among the feasible points (significance.hpp)]}. Throws the first point's InputError when every point
  //  tried failed (a path or value wrong everywhere).
  nlohmann::json result() const;

 private:
  enum class Phase { search, done, pruned };
  struct Tried {  // a point run (or being confirmed)
    SweepPoint point;
    int replications = 1;
    std::size_t round = 0;
    bool done = false, needs_confirm = false, feasible = false;
    nlohmann::json summary;
    std::optional<scenario::InputError> error;
    std::vector<SummaryNumber> values;  // per requirement
    double objective = 0;               // +infinity when it has none
  };
  struct Line {  // a combination of the enumerated axes, along the searched one
    std::size_t first = 0;              // the index of its first point
    Phase phase = Phase::search;
    std::optional<std::size_t> lo;      // the largest searched position known to miss
    std::size_t hi = 0;                 // the smallest known to meet (the axis' length: none yet)
  };

  SweepPoint point_at(std::size_t index) const;
  bool settled(std::size_t index) const;
  void want(std::size_t index, std::vector<std::size_t>& wanted) const;
  void advance(Line& line, std::vector<std::size_t>& wanted);
  bool near_bound(const Tried& t) const;
  void judge(Tried& t) const;
  double incumbent() const;

  nlohmann::json base_;
  std::vector<SizeAxis> axes_;
  SizeOptions options_;
  std::vector<std::size_t> enumerated_;    // indices of the enumerated axes, in order
  std::optional<std::size_t> searched_;    // index of the bisected axis
  std::size_t line_count_ = 0, line_length_ = 1;
  std::vector<Line> lines_;
  std::map<std::size_t, Tried> tried_;     // by point index
  std::size_t run_bound_ = 0, runs_done_ = 0, round_ = 0;
  double incumbent_ = 0;                  // the best settled objective when the round began
};

// The whole search on this machine: each round's runs on at most `jobs` threads (0: TBB's
// default). progress(runs done, run_bound) after every round. Returns SizeSearch::result().
nlohmann::json size_search(const nlohmann::json& base, std::vector<SizeAxis> axes, const SizeOptions& options,
                           int jobs, const std::function<void(std::size_t, std::size_t)>& progress = {});

// The search's answer as text: the best point, how sure each requirement is, then every point
// tried (one line each).
std::string size_text(const nlohmann::json& result);

}  // namespace cs::studies
