// libFuzzer target: `--set` overrides on a valid scenario, as `clustersim run FILE --set ...`
// applies them. Each input line is one PATH=VALUE; the result is parsed, its cost estimated
// and checked (run_budget.hpp). Any exception other than InputError, any crash, hang, leak or
// sanitizer report is a bug. Starts from a valid document so that the overrides, not the
// loader, are what the fuzzer explores.
#include <cstddef>
#include <cstdint>
#include <string_view>

#include "sim/scenario/load.hpp"
#include "sim/world/run.hpp"
#include "sim/world/run_budget.hpp"

namespace {

constexpr std::string_view kBase = R"({
  "name": "fuzz_base",
  "hardware": { "node": { "gpus": 2, "nics": 2, "nic_bandwidth": "400Gbps" } },
  "topology": { "kind": "fat_tree", "nodes": 4, "switch_radix": 8 },
  "workload": { "kind": "collective", "op": "all_reduce", "algorithm": "ring", "sizes": ["1MiB"] },
  "run": { "timeseries_interval": "1us" }
})";

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, std::size_t size) {
  std::string_view text(reinterpret_cast<const char*>(data), size);
  try {
    nlohmann::json doc = cs::scenario::parse_scenario_text(kBase, "<base>");
    while (!text.empty()) {
      const std::size_t eol = text.find('\n');
      const std::string_view line = text.substr(0, eol);
      if (!line.empty()) cs::scenario::apply_override(doc, line);
      text = eol == std::string_view::npos ? std::string_view() : text.substr(eol + 1);
    }
    const cs::scenario::Config config = cs::scenario::parse_config(doc);
    (void)cs::world::estimate_cost(config);
    cs::world::check_cost(config);
  } catch (const cs::scenario::InputError&) {
    // expected: the overrides were invalid and said so
  }
  return 0;
}
