// clustersim._core: converts between Python and the C++ scenario layer, nothing more.
// Documents cross the boundary as JSON text so there is one implementation of every rule.
#include <atomic>
#include <chrono>
#include <future>
#include <memory>
#include <string>
#include <tuple>
#include <vector>

#include <pybind11/pybind11.h>
#include <pybind11/stl.h>

#include "sim/engine/simulator.hpp"
#include "sim/fleet/training_run_config.hpp"
#include "sim/scenario/load.hpp"
#include "sim/studies/compare.hpp"
#include "sim/studies/paired.hpp"
#include "sim/studies/plan_search.hpp"
#include "sim/studies/size_search.hpp"
#include "sim/studies/sweep.hpp"
#include "sim/world/run.hpp"
#include "sim/world/topology_report.hpp"

namespace py = pybind11;
using nlohmann::json;

namespace {

std::string load_file(const std::string& path) {
  return cs::scenario::read_scenario_file(path).dump();
}

std::string parse_text(const std::string& text) {
  return cs::scenario::parse_scenario_text(text, "<python>").dump();
}

std::string set_path(const std::string& doc_text, const std::string& path,
                     const std::string& value_json) {
  json doc = json::parse(doc_text);
  cs::scenario::set_path(doc, path, json::parse(value_json));
  return doc.dump();
}

std::string apply_override(const std::string& doc_text, const std::string& assignment) {
  json doc = json::parse(doc_text);
  cs::scenario::apply_override(doc, assignment);
  return doc.dump();
}

void validate(const std::string& doc_text) {
  const auto config = cs::scenario::parse_config(json::parse(doc_text));
  cs::world::check_buildable(config);
}

// A run's cancellation: set by the thread that waits for the run (on a signal) or by a
// sweep (on any failure); polled by the run's simulators (RunOptions::interrupted) from
// whichever threads run its replications. One per run or per sweep, never process-wide.
class CancelToken {
 public:
  void cancel() { cancelled_.store(true, std::memory_order_relaxed); }
  bool cancelled() const { return cancelled_.load(std::memory_order_relaxed); }

 private:
  std::atomic<bool> cancelled_{false};
};

// Runs `work` on a thread of its own while this one, holding the GIL every 100 ms, asks Python
// whether a signal came (PyErr_CheckSignals: only the main thread can see one). On Ctrl-C the
// token stops the simulators within their next poll (every 4,096 events), the work's thread
// is joined and the KeyboardInterrupt raised: within a second, not at the work's end.
template <class Work>
auto run_cancellable(const std::shared_ptr<CancelToken>& token, Work work) {
  std::future<decltype(work())> running;
  {
    py::gil_scoped_release release;
    running = std::async(std::launch::async, work);
  }
  for (;;) {
    std::future_status status;
    {
      py::gil_scoped_release release;
      status = running.wait_for(std::chrono::milliseconds(100));
    }
    if (status == std::future_status::ready) break;
    if (PyErr_CheckSignals() != 0) {
      token->cancel();
      {
        py::gil_scoped_release release;
        running.wait();
      }
      try {
        running.get();
      } catch (...) {
        // Interrupted, or whatever came first: the signal's exception is the one raised.
      }
      throw py::error_already_set();
    }
  }
  return running.get();
}

py::tuple run(const std::string& doc_text, std::shared_ptr<CancelToken> token, bool draw_ahead) {
  if (!token) token = std::make_shared<CancelToken>();
  cs::world::RunOptions options;
  options.draw_ahead = draw_ahead;
  options.flow_table = true;
  options.job_table = true;
  options.interrupted = [token] { return token->cancelled(); };
  const cs::world::RunOutput out = run_cancellable(token, [&doc_text, &options] {
    const auto config = cs::scenario::parse_config(json::parse(doc_text));
    return cs::world::run_scenario(config, options);
  });
  return py::make_tuple(out.summary.dump(), out.timeseries_csv, out.trace_json, out.flows_csv,
                        out.links_csv, out.jobs_csv, out.warnings);
}

// axes: [[path, [values...]], ...] -> the points, [[[path, value], ...], ...], after the
// grid's checks (grid_check.hpp, as `clustersim sweep`).
std::string grid_points(const std::string& axes_json) {
  std::vector<cs::studies::GridAxis> axes;
  for (const json& a : json::parse(axes_json)) axes.push_back({a.at(0).get<std::string>(), a.at(1).get<std::vector<json>>()});
  json out = json::array();
  for (const auto& point : cs::studies::grid_points(axes, "grid")) out.push_back(point);
  return out.dump();
}

// (point [[path, value], ...], summary) -> rows, each [[column, value], ...] in column order.
std::string summary_rows(const std::string& point_json, const std::string& summary_json) {
  const auto point = json::parse(point_json).get<cs::studies::SweepPoint>();
  json out = json::array();
  for (const auto& row : cs::studies::summary_rows(point, json::parse(summary_json))) out.push_back(row.cells());
  return out.dump();
}

// clustersim plan: the ranked plans as JSON (plan_search_json, every row); Ctrl-C as run's.
std::string plan(const std::string& doc_text, int jobs, std::size_t refine, const std::vector<std::string>& only,
                 const std::string& max_time, std::shared_ptr<CancelToken> token) {
  if (!token) token = std::make_shared<CancelToken>();
  return run_cancellable(token, [&doc_text, jobs, refine, &only, &max_time, token] {
    const auto config = cs::scenario::parse_config(json::parse(doc_text));
    cs::studies::PlanSearchOptions options;
    options.space = cs::studies::plan_space(only, "only");
    options.jobs = jobs;
    options.refine = refine;
    options.max_seconds = cs::studies::plan_time_limit(max_time, "max_time");
    options.budget_key = "max_time";
    options.interrupted = [token] { return token->cancelled(); };
    return cs::studies::plan_search_json(config, cs::studies::search_plans(config, options)).dump();
  });
}

std::string topology_report(const std::string& doc_text) {
  return cs::world::report_json(cs::world::topology_report(json::parse(doc_text))).dump();
}

std::vector<std::string> route_links(const std::string& doc_text, int src_rank, int dst_rank, uint64_t flow_key) {
  return cs::world::route_links(json::parse(doc_text), src_rank, dst_rank, flow_key);
}

std::string topology_graph(const std::string& doc_text) {
  return cs::world::topology_graph(json::parse(doc_text)).dump();
}

// The names of a training run's states, indexed by the value of its "<prefix>.state" series.
std::vector<std::string> training_run_states() {
  std::vector<std::string> names;
  for (std::size_t s = 0; s < cs::fleet::kJobStates; ++s)
    names.emplace_back(cs::fleet::to_string(static_cast<cs::fleet::JobState>(s)));
  return names;
}

// fabrics: (label, scenario JSON); workloads: (label, workload JSON). Returns the comparison
// JSON and its text table.
py::tuple compare(const std::vector<std::pair<std::string, std::string>>& fabrics,
                  const std::vector<std::pair<std::string, std::string>>& workloads,
                  const std::vector<std::string>& sets, int jobs) {
  std::vector<cs::studies::ComparedFabric> f;
  for (const auto& [label, doc] : fabrics) f.push_back({label, json::parse(doc)});
  std::vector<cs::studies::ComparedWorkload> w;
  for (const auto& [label, workload] : workloads) w.push_back({label, json::parse(workload)});
  json comparison;
  {
    py::gil_scoped_release release;
    comparison = cs::studies::compare_fabrics(f, w, sets, jobs);
  }
  return py::make_tuple(comparison.dump(), cs::studies::comparison_text(comparison));
}

// clustersim.size's search (sim/studies/size_search.hpp): Python runs what next() asks for on
// its executor and tells the outcomes back. axes: [[path, [values...]], ...].
class SizeSearch {
 public:
  SizeSearch(const std::string& base, const std::string& axes_json, const std::vector<std::string>& require,
             const std::string& minimize, int confirm, std::size_t max_runs)
      : search_(json::parse(base), axes(axes_json), options(require, minimize, confirm, max_runs)) {}

  // The next round's scenarios (JSON documents); empty when the search is over.
  std::vector<std::string> next() {
    runs_ = search_.next();
    std::vector<std::string> docs;
    for (const auto& r : runs_) docs.push_back(r.doc.dump());
    return docs;
  }
  // Per run of next(): (summary JSON, "", "", "") or ("", error path, expected, hint).
  void tell(const std::vector<std::tuple<std::string, std::string, std::string, std::string>>& outcomes) {
    std::vector<cs::studies::SizeOutcome> out;
    for (const auto& [summary, path, expected, hint] : outcomes) {
      cs::studies::SizeOutcome o;
      if (summary.empty()) o.error.emplace(path, expected, hint);
      else o.summary = json::parse(summary);
      out.push_back(std::move(o));
    }
    search_.tell(runs_, out);
  }
  std::size_t run_bound() const { return search_.run_bound(); }
  std::string result() const { return search_.result().dump(); }

 private:
  static std::vector<cs::studies::SizeAxis> axes(const std::string& axes_json) {
    std::vector<cs::studies::SizeAxis> out;
    for (const json& a : json::parse(axes_json)) out.push_back({a.at(0).get<std::string>(), a.at(1).get<std::vector<json>>()});
    return out;
  }
  static cs::studies::SizeOptions options(const std::vector<std::string>& require, const std::string& minimize,
                                          int confirm, std::size_t max_runs) {
    cs::studies::SizeOptions o;
    o.names = cs::studies::python_size_names();
    for (const auto& r : require) o.requirements.push_back(cs::studies::parse_requirement(r, "require"));
    o.minimize = minimize;
    o.confirm_replications = confirm;
    o.max_runs = max_runs;
    return o;
  }
  cs::studies::SizeSearch search_;
  std::vector<cs::studies::SizeRun> runs_;
};

// clustersim.paired: variants [(label, [[path, value], ...])] -> the comparison JSON.
std::string paired(const std::string& base, const std::string& variants_json, const std::vector<std::string>& keys,
                   int replications, int jobs) {
  std::vector<cs::studies::PairedVariant> variants;
  for (const json& v : json::parse(variants_json))
    variants.push_back({v.at(0).get<std::string>(), v.at(1).get<cs::studies::SweepPoint>()});
  const json doc = json::parse(base);
  py::gil_scoped_release release;
  return cs::studies::paired_comparison(doc, variants, keys, replications, jobs, "paired").dump();
}

}  // namespace

PYBIND11_MODULE(_core, m) {
  m.doc() = "clustersim private core: use the clustersim package instead";
  // InputError -> clustersim.ScenarioError (a ValueError, clustersim/errors.py) with its path,
  // expected and hint; an interrupted run -> KeyboardInterrupt.
  py::register_exception_translator([](std::exception_ptr p) {
    try {
      if (p) std::rethrow_exception(p);
    } catch (const cs::scenario::InputError& e) {
      const py::object type = py::module_::import("clustersim.errors").attr("ScenarioError");
      const py::object error = type(e.what(), e.path(), e.expected(), e.hint());
      PyErr_SetObject(type.ptr(), error.ptr());
    } catch (const cs::engine::Interrupted&) {
      PyErr_SetNone(PyExc_KeyboardInterrupt);
    }
  });
  py::class_<CancelToken, std::shared_ptr<CancelToken>>(m, "CancelToken")
      .def(py::init<>())
      .def("cancel", &CancelToken::cancel)
      .def_property_readonly("cancelled", &CancelToken::cancelled);
  m.def("load_file", &load_file, py::arg("path"));
  m.def("parse_text", &parse_text, py::arg("text"));
  m.def("input_files", [](const std::string& doc_text) { return cs::scenario::input_files(json::parse(doc_text)); },
        py::arg("doc"));
  m.def("set_path", &set_path, py::arg("doc"), py::arg("path"), py::arg("value_json"));
  m.def("apply_override", &apply_override, py::arg("doc"), py::arg("assignment"));
  m.def("validate", &validate, py::arg("doc"));
  m.def("run", &run, py::arg("doc"), py::arg("cancel") = nullptr, py::arg("draw_ahead") = true);
  m.def("plan", &plan, py::arg("doc"), py::arg("jobs"), py::arg("refine"), py::arg("only") = std::vector<std::string>{},
        py::arg("max_time") = std::string("1h"), py::arg("cancel") = nullptr);
  m.def("grid_points", &grid_points, py::arg("axes"));
  m.def("summary_rows", &summary_rows, py::arg("point"), py::arg("summary"));
  m.def("topology_report", &topology_report, py::arg("doc"));
  m.def("route_links", &route_links, py::arg("doc"), py::arg("src_rank"), py::arg("dst_rank"),
        py::arg("flow_key") = 0);
  m.def("topology_graph", &topology_graph, py::arg("doc"));
  m.def("compare", &compare, py::arg("fabrics"), py::arg("workloads"), py::arg("sets"), py::arg("jobs"));
  py::class_<SizeSearch>(m, "SizeSearch")
      .def(py::init<const std::string&, const std::string&, const std::vector<std::string>&, const std::string&, int,
                    std::size_t>(),
           py::arg("base"), py::arg("axes"), py::arg("require"), py::arg("minimize"), py::arg("confirm"),
           py::arg("max_runs"))
      .def("next", &SizeSearch::next)
      .def("tell", &SizeSearch::tell, py::arg("outcomes"))
      .def_property_readonly("run_bound", &SizeSearch::run_bound)
      .def("result", &SizeSearch::result);
  m.def("paired", &paired, py::arg("base"), py::arg("variants"), py::arg("keys"), py::arg("replications"),
        py::arg("jobs"));
  m.def("size_text", [](const std::string& result) { return cs::studies::size_text(json::parse(result)); },
        py::arg("result"));
  m.def("schema", [] { return std::string(cs::scenario::schema_text()); });
  m.def("training_run_states", &training_run_states);
}
