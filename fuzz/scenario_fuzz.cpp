// libFuzzer target: arbitrary bytes through the scenario loader. Any exception other than
// InputError, any crash, hang, leak or sanitizer report is a bug.
#include <cstddef>
#include <cstdint>
#include <string_view>

#include "sim/scenario/load.hpp"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, std::size_t size) {
  const std::string_view text(reinterpret_cast<const char*>(data), size);
  try {
    const nlohmann::json doc = cs::scenario::parse_scenario_text(text, "<fuzz>");
    (void)cs::scenario::parse_config(doc);
  } catch (const cs::scenario::InputError&) {
    // expected: the input was invalid and said so
  }
  // Overrides go through the same paths: use the input's first line as one.
  const std::size_t eol = text.find('\n');
  if (eol != std::string_view::npos && eol > 0) {
    try {
      nlohmann::json doc = nlohmann::json::object();
      cs::scenario::apply_override(doc, text.substr(0, eol));
      (void)cs::scenario::parse_config(doc);
    } catch (const cs::scenario::InputError&) {
    }
  }
  return 0;
}
