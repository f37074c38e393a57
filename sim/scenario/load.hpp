#pragma once
// From a scenario file to a validated Config. Every user error is an InputError naming the
// JSON path; nothing here crashes, hangs or recurses without bound on hostile input.
#include <string>
#include <string_view>
#include <vector>

#include <nlohmann/json.hpp>

#include "sim/scenario/config.hpp"
#include "sim/scenario/input_error.hpp"

namespace cs::scenario {

// Limits on what a scenario file may be.
inline constexpr std::size_t kMaxScenarioBytes = 64u << 20;  // 64 MiB
inline constexpr int kMaxNestingDepth = 64;

// The keys whose string values name input files (traces). In a scenario read from a file, a
// relative path there is relative to the file's folder: read_scenario_file rewrites it as that
// folder / path (lexically normal), so the file can be run from anywhere. Text given otherwise
// (Python dicts, --set values) keeps paths relative to the working directory.
inline constexpr const char* kInputFileKeys[] = {"workload.arrivals.trace", "workload.trace",
                                                 "fleet.interruptions.trace", "fleet.failures.trace"};
// The rule, as the hint of an input file that cannot be read.
inline constexpr const char* kInputPathHint =
    "paths in a scenario file are relative to its folder (from Python dicts and --set, to the working directory)";

// Read and parse a scenario file: must be a regular readable file, UTF-8 JSON, at most
// kMaxScenarioBytes, nesting at most kMaxNestingDepth, top level an object. Relative input
// file paths (kInputFileKeys) become relative to the file's folder.
nlohmann::json read_scenario_file(const std::string& path);
// The same checks for text already in memory; `origin` names it in messages.
nlohmann::json parse_scenario_text(std::string_view text, std::string_view origin = "<text>");

// Set the value at a dot-separated path ("topology.nodes", "topology.links.0.bandwidth").
// Missing object keys are created; a number indexes a list (index == size appends).
void set_path(nlohmann::json& doc, std::string_view path, nlohmann::json value);
// "PATH=VALUE" as given to --set: VALUE is JSON, or else taken as a bare string.
void apply_override(nlohmann::json& doc, std::string_view assignment);

// The files a scenario reads besides itself, as written in it (relative to the working
// directory; read_scenario_file has made a file's relative paths so): the strings at
// kInputFileKeys (arrival, job, reclaim and failure traces; run.trace is an output). Outputs must never be written over them, and a cache of
// results must key on their contents (the file's name alone would return a stale result).
std::vector<std::string> input_files(const nlohmann::json& doc);

// The JSON Schema of scenario files (scenarios/schema.json, compiled in).
std::string_view schema_text();
// Structural validation against the schema (types, enums, unknown keys, ranges).
void validate_schema(const nlohmann::json& doc);

// Schema validation + typed parsing + cross-field rules. Throws InputError.
Config parse_config(const nlohmann::json& doc);
// The machine alone (top level, hardware, topology, network; the file is still checked
// against the whole schema): what `clustersim topo` and the topology queries need, so a file
// describing only a fabric works there.
Config parse_fabric_config(const nlohmann::json& doc);

}  // namespace cs::scenario
