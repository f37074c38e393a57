#pragma once
// Keys that have no effect where they stand: set in the file, valid by the schema, but made
// inert by the document's other choices. The rule, for every such key:
//   - a key of a topology family other than the one chosen (dims on a fat-tree, groups on a
//     torus, switches on a dragonfly...) is a warning naming the key: sweeping topology.kind
//     over one file leaves the other families' parameters behind by design;
//   - any other inert key is an input error at the key: it says something about the model
//     that the run would silently not do (a background on a traffic run would not run;
//     gpu_bandwidth or gpu_latency on a PCIe node would not be used), as hardware.node.mesh,
//     hardware.node.nvls and topology.sharp already are where they cannot apply.
#include <nlohmann/json.hpp>

#include "sim/scenario/config.hpp"

namespace cs::scenario::detail {

// `doc` the normalized document, `config` parsed from it: throws InputError for an inert key
// of the second kind, appends "warning: <path>: ..." to config.warnings for the first.
void check_key_effects(const nlohmann::json& doc, Config& config);

}  // namespace cs::scenario::detail
