// The sizing search: lines of the space bisected round by round, dominated lines pruned, points
// near a bound confirmed with more replications. Why rounds: pruning then depends only on the
// rounds before, never on which worker finished first, so the answer is the same for any jobs.
#include "sim/studies/size_search.hpp"

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <limits>
#include <utility>

#include "sim/scenario/load.hpp"
#include "sim/studies/grid_check.hpp"
#include "sim/studies/parallel.hpp"
#include "sim/studies/significance.hpp"
#include "sim/world/run.hpp"

namespace cs::studies {

using nlohmann::json;
using scenario::InputError;

namespace {

constexpr double kInfinity = std::numeric_limits<double>::infinity();

// Consecutive ascending whole numbers, at least 3 of them: a range worth bisecting.
bool is_integer_range(const std::vector<json>& values) {
  if (values.size() < 3) return false;
  for (std::size_t i = 0; i < values.size(); ++i) {
    if (!values[i].is_number_integer()) return false;
    if (i > 0 && values[i].get<long long>() != values[i - 1].get<long long>() + 1) return false;
  }
  return true;
}

// The most runs a line of n values takes: the least value, doubling to the end, then halving
// the last gap (counted by playing the worst case: every probe misses but the last).
std::size_t runs_per_line(std::size_t n) {
  std::size_t runs = 1, lo = 0;
  while (lo < n - 1) {
    const std::size_t probe = std::min(2 * lo + 1, n - 1);
    ++runs;
    if (probe == n - 1) {  // the end meets: halve the gap (lo, n - 1)
      for (std::size_t gap = n - 1 - lo; gap > 1; gap = (gap + 1) / 2) ++runs;
      break;
    }
    lo = probe;
  }
  return std::min(runs, n);
}

json stat_json(const SummaryNumber& n) {
  if (!n.finite) return nullptr;
  return n.mean;
}

}  // namespace

std::optional<std::vector<json>> integer_range(const std::string& text, const std::string& at) {
  const std::size_t dots = text.find("..");
  if (dots == std::string::npos) return std::nullopt;
  long long lo = 0, hi = 0;
  int used = 0;
  if (std::sscanf(text.c_str(), "%lld..%lld%n", &lo, &hi, &used) != 2 || used != int(text.size())) return std::nullopt;
  if (lo > hi) throw InputError(at, "'" + text + "' is an empty range (LO > HI)", "write LO..HI with LO <= HI, e.g. 4..40");
  if (hi - lo >= (long long)kMaxGridPoints)
    throw InputError(at, "'" + text + "' has more than " + std::to_string(kMaxGridPoints) + " values (the limit)");
  std::vector<json> values;
  for (long long v = lo; v <= hi; ++v) values.emplace_back(v);
  return values;
}

SizeSearch::SizeSearch(json base, std::vector<SizeAxis> axes, SizeOptions options)
    : base_(std::move(base)), axes_(std::move(axes)), options_(std::move(options)) {
  const SizeNames& names = options_.names;
  if (axes_.empty())
    throw InputError(names.vary, "nothing to vary: the space is empty",
                     "give at least one PATH=V1,V2,... or PATH=LO..HI, e.g. fleet.autoscaler.replicas=4..40");
  std::vector<GridAxisShape> shape;
  for (const auto& a : axes_) shape.push_back({a.path, a.values.size()});
  check_grid(shape, names.vary);  // empty axes, paths twice or nested, more than kMaxGridPoints
  if (options_.minimize.empty()) {
    const json& workload = base_.contains("workload") ? base_["workload"] : json();
    const std::string kind = workload.is_object() && workload.contains("kind") && workload["kind"].is_string()
                                 ? workload["kind"].get<std::string>() : "";
    options_.minimize = kind + ".cost_usd";
  }
  for (std::size_t a = 0; a < axes_.size(); ++a) {
    axes_[a].searched = !searched_ && is_integer_range(axes_[a].values);
    if (axes_[a].searched) searched_ = a;
    else enumerated_.push_back(a);
  }
  line_length_ = searched_ ? axes_[*searched_].values.size() : 1;
  line_count_ = 1;
  for (std::size_t a : enumerated_) line_count_ *= axes_[a].values.size();
  const std::size_t per_line = searched_ ? runs_per_line(line_length_) : 1;
  run_bound_ = line_count_ * per_line;
  if (run_bound_ > options_.max_runs)
    throw InputError(names.vary,
                     "the space may need " + std::to_string(run_bound_) + " runs (" + std::to_string(line_count_) +
                         " combinations x up to " + std::to_string(per_line) + " points each); the run budget is " +
                         std::to_string(options_.max_runs) + " (" + names.max_runs + ")",
                     "vary fewer values, give a whole-number axis as LO..HI so it is bisected, or raise " +
                         names.max_runs);
  lines_.resize(line_count_);
  for (std::size_t l = 0; l < line_count_; ++l) {
    lines_[l].first = l * line_length_;
    lines_[l].hi = line_length_;
  }
}

SweepPoint SizeSearch::point_at(std::size_t index) const {
  SweepPoint point(axes_.size());
  std::size_t line = index / line_length_;
  if (searched_) point[*searched_] = {axes_[*searched_].path, axes_[*searched_].values[index % line_length_]};
  for (std::size_t e = enumerated_.size(); e-- > 0;) {  // the first axis varies slowest
    const SizeAxis& axis = axes_[enumerated_[e]];
    point[enumerated_[e]] = {axis.path, axis.values[line % axis.values.size()]};
    line /= axis.values.size();
  }
  return point;
}

bool SizeSearch::settled(std::size_t index) const {
  const auto it = tried_.find(index);
  if (it == tried_.end() || !it->second.done) return false;
  // A point near a bound matters only if it could beat the best: costlier, whichever side of
  // the bound it is on, its line cannot win through it (it would be pruned, or searched below).
  return !it->second.needs_confirm || it->second.objective > incumbent_;
}

void SizeSearch::want(std::size_t index, std::vector<std::size_t>& wanted) const {
  if (!settled(index)) wanted.push_back(index);
}

double SizeSearch::incumbent() const {
  double best = kInfinity;
  for (const auto& [index, t] : tried_)
    if (t.done && !t.needs_confirm && t.feasible) best = std::min(best, t.objective);
  return best;
}

void SizeSearch::advance(Line& line, std::vector<std::size_t>& wanted) {
  // lo: the largest position known to miss (or none), hi: the smallest known to meet (or the
  // axis' length). The least value first (it may meet, or miss at a cost above the best
  // already); then doubling (positions 1, 3, 7, ...: answers are usually small values, found
  // in a few runs) until one meets; then bisection between the two.
  while (line.phase == Phase::search) {
    if (line.lo) {
      const Tried& missed = tried_.at(line.first + *line.lo);
      // Its side misses and already costs more than the best found: the other side costs more.
      if (!missed.error && std::isfinite(missed.objective) && missed.objective > incumbent_) {
        line.phase = Phase::pruned;
        return;
      }
    }
    const std::size_t below = line.lo ? *line.lo + 1 : 0;
    if (below >= line.hi) {
      line.phase = Phase::done;
      return;
    }
    std::size_t probe = 0;
    if (line.lo) probe = line.hi < line_length_ ? *line.lo + (line.hi - *line.lo) / 2
                                                : std::min(2 * *line.lo + 1, line_length_ - 1);
    want(line.first + probe, wanted);
    if (!settled(line.first + probe)) return;
    if (tried_.at(line.first + probe).feasible) line.hi = probe;
    else line.lo = probe;
  }
}

std::vector<SizeRun> SizeSearch::next() {
  std::vector<std::size_t> wanted;
  incumbent_ = incumbent();
  for (Line& line : lines_) advance(line, wanted);
  std::sort(wanted.begin(), wanted.end());
  wanted.erase(std::unique(wanted.begin(), wanted.end()), wanted.end());
  if (wanted.empty()) return {};
  ++round_;
  const json& run = base_.contains("run") && base_["run"].is_object() ? base_["run"] : json::object();
  const int base_replications = run.value("replications", 1);
  std::vector<SizeRun> runs;
  for (std::size_t index : wanted) {
    SizeRun r;
    r.point = index;
    const auto it = tried_.find(index);
    const bool confirming = it != tried_.end() && it->second.needs_confirm;
    r.replications = confirming ? options_.confirm_replications : std::max(1, base_replications);
    r.doc = base_;
    for (const auto& [path, value] : point_at(index)) scenario::set_path(r.doc, path, value);
    if (confirming) scenario::set_path(r.doc, "run.replications", r.replications);
    runs.push_back(std::move(r));
  }
  return runs;
}

bool SizeSearch::near_bound(const Tried& t) const {
  for (std::size_t q = 0; q < options_.requirements.size(); ++q) {
    const Requirement& r = options_.requirements[q];
    const SummaryNumber& v = t.values[q];
    if (!v.finite) continue;
    const double margin = std::abs(r.margin(v.mean));
    if (v.n > 1 ? margin < v.ci95 : margin < options_.near * std::abs(r.value)) return true;
  }
  return false;
}

void SizeSearch::judge(Tried& t) const {
  t.values.clear();
  t.feasible = false;
  t.objective = kInfinity;
  if (t.error) return;
  t.feasible = true;
  for (const Requirement& r : options_.requirements) {
    t.values.push_back(summary_number_at(t.summary, r.key));
    const SummaryNumber& v = t.values.back();
    if (!v.finite || !r.holds(v.mean)) t.feasible = false;
  }
  const SummaryNumber objective = summary_number_at(t.summary, options_.minimize);
  if (objective.finite) t.objective = objective.mean;
  else t.feasible = false;
  t.needs_confirm = t.replications < options_.confirm_replications && near_bound(t);
}

void SizeSearch::tell(const std::vector<SizeRun>& runs, const std::vector<SizeOutcome>& outcomes) {
  if (runs.size() != outcomes.size()) throw std::invalid_argument("SizeSearch::tell: one outcome per run");
  for (std::size_t i = 0; i < runs.size(); ++i) {
    const SizeOutcome& o = outcomes[i];
    if (!o.error) {  // every summary names the keys; the first that does not is the user's error
      for (const Requirement& r : options_.requirements) check_summary_key(o.summary, r.key, options_.names.require);
      check_summary_key(o.summary, options_.minimize, options_.names.minimize);
    }
    Tried& t = tried_[runs[i].point];
    t.point = point_at(runs[i].point);
    t.replications = runs[i].replications;
    t.round = round_;
    t.done = true;
    t.summary = o.summary;
    t.error = o.error;
    judge(t);
  }
  runs_done_ += runs.size();
}

json SizeSearch::result() const {
  const Tried* first_error = nullptr;
  bool any_ran = false;
  std::optional<std::size_t> best;
  for (const auto& [index, t] : tried_) {
    if (t.error && !first_error) first_error = &t;
    if (!t.error) any_ran = true;
    if (t.done && !t.needs_confirm && t.feasible && (!best || t.objective < tried_.at(*best).objective)) best = index;
  }
  if (!any_ran && first_error) throw *first_error->error;  // wrong at every point: the user's input

  const auto point_json = [](const SweepPoint& p) {
    json out = json::object();
    for (const auto& [path, value] : p) out[path] = value;
    return out;
  };
  json out;
  out["minimize"] = options_.minimize;
  out["requirements"] = json::array();
  for (const auto& r : options_.requirements) out["requirements"].push_back(r.text);
  out["searched"] = searched_ ? json(axes_[*searched_].path) : json(nullptr);
  out["best"] = nullptr;
  out["warnings"] = json::array();
  if (best) {
    const Tried& t = tried_.at(*best);
    json reqs = json::array();
    for (std::size_t q = 0; q < options_.requirements.size(); ++q) {
      const Requirement& r = options_.requirements[q];
      const SummaryNumber& v = t.values[q];
      // Sure: the 95% interval lies wholly on the meeting side (unknown from one replication).
      const json sure = v.n > 1 ? json(r.holds(v.mean - v.ci95) && r.holds(v.mean + v.ci95)) : json(nullptr);
      reqs.push_back({{"require", r.text}, {"key", r.key}, {"mean", v.mean}, {"ci95", v.ci95},
                      {"replications", v.n}, {"bound", r.value}, {"holds", true}, {"sure", sure}});
      if (sure == json(false))
        out["warnings"].push_back(r.text + ": the answer meets it on average, but its 95% interval (" +
                                  std::to_string(v.mean) + " +- " + std::to_string(v.ci95) + ", " +
                                  std::to_string(v.n) + " replications) reaches past the bound: at other seeds it may not");
    }
    out["best"] = {{"point", point_json(t.point)}, {"objective", t.objective}, {"replications", t.replications},
                   {"requirements", reqs}, {"summary", t.summary}};
    // The answer against the runner-up among the points that meet every requirement: within
    // each other's 95% interval of the objective, the answer is not significant.
    std::vector<Estimate> estimates;
    for (const auto& [index, other] : tried_)
      if (other.done && !other.needs_confirm && other.feasible) {
        std::string label;
        for (const auto& [path, value] : other.point)
          label.append(label.empty() ? "" : " ").append(path).append("=").append(value.dump());
        estimates.push_back({label, other.objective, summary_number_at(other.summary, options_.minimize).ci95});
      }
    if (auto w = not_significant(options_.minimize, std::move(estimates), true)) out["warnings"].push_back(*w);
  }
  json points = json::array();
  for (const auto& [index, t] : tried_) {
    json p = {{"point", point_json(t.point)}, {"feasible", t.feasible},
              {"objective", std::isfinite(t.objective) ? json(t.objective) : json(nullptr)},
              {"replications", t.replications}, {"round", t.round}};
    json reqs = json::object();
    for (std::size_t q = 0; q < t.values.size(); ++q) {
      const SummaryNumber& v = t.values[q];
      reqs[options_.requirements[q].text] = {{"mean", stat_json(v)}, {"ci95", v.ci95},
                                             {"holds", v.finite && options_.requirements[q].holds(v.mean)}};
    }
    p["requirements"] = reqs;
    if (t.error) {
      p["error"] = t.error->expected();
      p["error_path"] = t.error->path();
    } else {
      p["summary"] = t.summary;
    }
    points.push_back(std::move(p));
  }
  out["points"] = std::move(points);
  std::size_t pruned = 0;
  for (const Line& l : lines_) pruned += l.phase == Phase::pruned;
  out["runs"] = runs_done_;
  out["lines"] = line_count_;
  out["lines_pruned"] = pruned;
  return out;
}

json size_search(const json& base, std::vector<SizeAxis> axes, const SizeOptions& options, int jobs,
                 const std::function<void(std::size_t, std::size_t)>& progress) {
  SizeSearch search(base, std::move(axes), options);
  for (std::vector<SizeRun> runs = search.next(); !runs.empty(); runs = search.next()) {
    std::vector<SizeOutcome> outcomes(runs.size());
    for_each_index(runs.size(), jobs, [&](std::size_t i) {
      try {
        world::RunOptions run_options;
        run_options.threads = 1;  // the round's points are the parallel work
        outcomes[i].summary = world::run_scenario(scenario::parse_config(runs[i].doc), run_options).summary;
      } catch (const InputError& e) {
        outcomes[i].error = e;
      }
    });
    search.tell(runs, outcomes);
    if (progress) progress(search.runs_done(), search.run_bound());
  }
  return search.result();
}

namespace {

std::string point_text(const json& point) {
  std::string s;
  for (const auto& [path, value] : point.items()) s += (s.empty() ? "" : " ") + path + "=" + value.dump();
  return s;
}

}  // namespace

std::string size_text(const json& result) {
  std::string s;
  char buf[256];
  const auto& best = result["best"];
  if (best.is_null()) {
    s += "no point tried meets every requirement\n";
  } else {
    std::snprintf(buf, sizeof buf, "best: %s  %s = %.6g\n", point_text(best["point"]).c_str(),
                  result["minimize"].get<std::string>().c_str(), best["objective"].get<double>());
    s += buf;
    for (const auto& r : best["requirements"]) {
      const std::string sure = r["sure"].is_null() ? "one replication: no interval"
                               : r["sure"].get<bool>() ? "sure: its 95% interval clears the bound"
                                                       : "not sure: its 95% interval reaches past the bound";
      std::snprintf(buf, sizeof buf, "  %s: %.6g +- %.3g (95%%, %s replications); %s\n",
                    r["require"].get<std::string>().c_str(), r["mean"].get<double>(), r["ci95"].get<double>(),
                    r["replications"].dump().c_str(), sure.c_str());
      s += buf;
    }
  }
  std::snprintf(buf, sizeof buf, "%s runs, %s combinations (%s pruned)%s\n", result["runs"].dump().c_str(),
                result["lines"].dump().c_str(), result["lines_pruned"].dump().c_str(),
                result["searched"].is_null() ? ""
                                             : (", " + result["searched"].get<std::string>() + " bisected").c_str());
  s += buf;
  for (const auto& w : result["warnings"]) s += "warning: " + w.get<std::string>() + "\n";
  s += "points tried:\n";
  for (const auto& p : result["points"]) {
    const std::string objective = p["objective"].is_null() ? "-" : p["objective"].dump();
    s += "  " + point_text(p["point"]) + "  " + (p["feasible"].get<bool>() ? "meets" : "misses") + "  " +
         objective + (p.contains("error") ? "  error: " + p["error_path"].get<std::string>() + ": " +
                                                p["error"].get<std::string>() : "") + "\n";
  }
  return s;
}

}  // namespace cs::studies
