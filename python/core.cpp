// clustersim._core: converts between Python and the C++ scenario layer, nothing more.
// Documents cross the boundary as JSON text so there is one implementation of every rule.
#include <string>
#include <vector>

#include <pybind11/pybind11.h>
#include <pybind11/stl.h>

#include "sim/fleet/training_run_config.hpp"
#include "sim/scenario/load.hpp"
#include "sim/scenario/run.hpp"
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
    out = cs::scenario::run_scenario(config, options);
  }
  return py::make_tuple(out.summary.dump(), out.timeseries_csv, out.trace_json, out.flows_csv,
                        out.links_csv);
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

}  // namespace

PYBIND11_MODULE(_core, m) {
  m.doc() = "clustersim private core: use the clustersim package instead";
  py::register_exception<cs::scenario::InputError>(m, "ScenarioError", PyExc_ValueError);
  m.def("load_file", &load_file, py::arg("path"));
  m.def("parse_text", &parse_text, py::arg("text"));
  m.def("set_path", &set_path, py::arg("doc"), py::arg("path"), py::arg("value_json"));
  m.def("apply_override", &apply_override, py::arg("doc"), py::arg("assignment"));
  m.def("validate", &validate, py::arg("doc"));
  m.def("run", &run, py::arg("doc"));
  m.def("topology_report", &topology_report, py::arg("doc"));
  m.def("route_links", &route_links, py::arg("doc"), py::arg("src_rank"), py::arg("dst_rank"),
        py::arg("flow_key") = 0);
  m.def("topology_graph", &topology_graph, py::arg("doc"));
  m.def("schema", [] { return std::string(cs::scenario::schema_text()); });
  m.def("training_run_states", &training_run_states);
}
