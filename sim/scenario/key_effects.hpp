#pragma once
// Keys that have no effect where they stand: set in the file, valid by the schema, but made
// inert by the document's other choices. The rule, for every such key:
//   - a parameter of a part the chosen configuration does not have is a warning on stderr
//     naming the key, and the run goes on: another topology family's keys (dims on a
//     fat-tree, groups on a torus, switches on a dragonfly...), a PCIe node's NVLink
//     parameters (gpu_bandwidth, gpu_latency), a training plan's overlap of a parallelism it
//     does not have (tp_comm_overlap at tp 1, overlap_p2p at pp 1, overlap_grad_reduce at dp
//     and cp 1, overlap_tp_wgrad at tp 1, under userbuffers or under zb_h1). Such keys are left behind by design when one file is swept or compared over
//     topology.kind, hardware.node.fabric or the plan;
//   - a request the run would not honour is an input error at the key: a workload that
//     would not run (workload.background on a traffic run), as hardware.node.mesh,
//     hardware.node.nvls and topology.sharp already are where they cannot apply.
#include <nlohmann/json.hpp>

#include "sim/scenario/config.hpp"

namespace cs::scenario::detail {

// `doc` the normalized document, `config` parsed from it: throws InputError for a request
// not honoured; appends "warning: <path>: ..." to config.warnings for an absent part's key.
void check_key_effects(const nlohmann::json& doc, Config& config);

}  // namespace cs::scenario::detail
