// clustersim._core: converts between Python and the C++ scenario layer, nothing more.
// Documents cross the boundary as JSON text so there is one implementation of every rule.
#include <string>
#include <vector>

#include <pybind11/pybind11.h>
#include <pybind11/stl.h>

#include "sim/fleet/training_run_config.hpp"
#include "sim/scenario/compare.hpp"
#include "sim/scenario/load.hpp"
#include "sim/scenario/plan_search.hpp"
#include "sim/scenario/run.hpp"
#include "sim/scenario/sweep.hpp"
#include "sim/scenario/topology_report.hpp"

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
  cs::scenario::check_buildable(config);
}

py::tuple run(const std::string& doc_text) {
  cs::scenario::RunOutput out;
  {
    // Parsing is cheap; the simulation is not: let other Python threads run meanwhile.
    py::gil_scoped_release release;
    const auto config = cs::scenario::parse_config(json::parse(doc_text));
    cs::scenario::RunOptions options;
    options.flow_table = true;
    options.job_table = true;
    out = cs::scenario::run_scenario(config, options);
  }
  return py::make_tuple(out.summary.dump(), out.timeseries_csv, out.trace_json, out.flows_csv,
                        out.links_csv, out.jobs_csv);
}

// clustersim plan: the ranked plans as JSON (plan_search_json, every row).
std::string plan(const std::string& doc_text, int jobs, std::size_t refine) {
  py::gil_scoped_release release;
  const auto config = cs::scenario::parse_config(json::parse(doc_text));
  cs::scenario::PlanSearchOptions options;
  options.jobs = jobs;
  options.refine = refine;
  return cs::scenario::plan_search_json(config, cs::scenario::search_plans(config, options)).dump();
}

std::string topology_report(const std::string& doc_text) {
  return cs::scenario::report_json(cs::scenario::topology_report(json::parse(doc_text))).dump();
}

std::vector<std::string> route_links(const std::string& doc_text, int src_rank, int dst_rank, uint64_t flow_key) {
  return cs::scenario::route_links(json::parse(doc_text), src_rank, dst_rank, flow_key);
}

std::string topology_graph(const std::string& doc_text) {
  return cs::scenario::topology_graph(json::parse(doc_text)).dump();
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
  std::vector<cs::scenario::ComparedFabric> f;
  for (const auto& [label, doc] : fabrics) f.push_back({label, json::parse(doc)});
  std::vector<cs::scenario::ComparedWorkload> w;
  for (const auto& [label, workload] : workloads) w.push_back({label, json::parse(workload)});
  json comparison;
  {
    py::gil_scoped_release release;
    comparison = cs::scenario::compare_fabrics(f, w, sets, jobs);
  }
  return py::make_tuple(comparison.dump(), cs::scenario::comparison_text(comparison));
}

// axes: [[path, [values...]], ...] -> the points, [[[path, value], ...], ...].
std::string grid_points(const std::string& axes_json) {
  std::vector<cs::scenario::GridAxis> axes;
  for (const json& a : json::parse(axes_json)) axes.push_back({a.at(0).get<std::string>(), a.at(1).get<std::vector<json>>()});
  json out = json::array();
  for (const auto& point : cs::scenario::grid_points(axes, "grid")) out.push_back(point);
  return out.dump();
}

// (point [[path, value], ...], summary) -> rows, each [[column, value], ...] in column order.
std::string summary_rows(const std::string& point_json, const std::string& summary_json) {
  const auto point = json::parse(point_json).get<cs::scenario::SweepPoint>();
  json out = json::array();
  for (const auto& row : cs::scenario::summary_rows(point, json::parse(summary_json))) out.push_back(row.cells());
  return out.dump();
}

}  // namespace

PYBIND11_MODULE(_core, m) {
  m.doc() = "clustersim private core: use the clustersim package instead";
  // InputError -> clustersim.ScenarioError (a ValueError) with its path, expected and hint.
  py::register_exception_translator([](std::exception_ptr p) {
    try {
      if (p) std::rethrow_exception(p);
    } catch (const cs::scenario::InputError& e) {
      const py::object type = py::module_::import("clustersim.errors").attr("ScenarioError");
      const py::object error = type(e.what(), e.path(), e.expected(), e.hint());
      PyErr_SetObject(type.ptr(), error.ptr());
    }
  });
  m.def("load_file", &load_file, py::arg("path"));
  m.def("parse_text", &parse_text, py::arg("text"));
  m.def("set_path", &set_path, py::arg("doc"), py::arg("path"), py::arg("value_json"));
  m.def("apply_override", &apply_override, py::arg("doc"), py::arg("assignment"));
  m.def("validate", &validate, py::arg("doc"));
  m.def("run", &run, py::arg("doc"));
  m.def("plan", &plan, py::arg("doc"), py::arg("jobs"), py::arg("refine"));
  m.def("topology_report", &topology_report, py::arg("doc"));
  m.def("route_links", &route_links, py::arg("doc"), py::arg("src_rank"), py::arg("dst_rank"),
        py::arg("flow_key") = 0);
  m.def("topology_graph", &topology_graph, py::arg("doc"));
  m.def("compare", &compare, py::arg("fabrics"), py::arg("workloads"), py::arg("sets"), py::arg("jobs"));
  m.def("grid_points", &grid_points, py::arg("axes"));
  m.def("summary_rows", &summary_rows, py::arg("point"), py::arg("summary"));
  m.def("schema", [] { return std::string(cs::scenario::schema_text()); });
  m.def("training_run_states", &training_run_states);
}
