// libFuzzer target: the command line's parsing (cli/args.hpp), as `clustersim ARGS...` meets
// it. Each input line is one argument (argv[0] is "clustersim"). Parsing ends in arguments,
// help or a usage error, never in a crash, hang, leak or sanitizer report; the parsed values
// stay within their documented ranges.
#include <cstddef>
#include <cstdint>
#include <cstdlib>
#include <string>
#include <vector>

#include "cli/args.hpp"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, std::size_t size) {
  const std::string text(reinterpret_cast<const char*>(data), size);
  std::vector<std::string> words{"clustersim"};
  std::size_t begin = 0;
  while (begin <= text.size() && words.size() < 64) {
    const std::size_t eol = text.find('\n', begin);
    words.push_back(text.substr(begin, eol == std::string::npos ? std::string::npos : eol - begin));
    if (eol == std::string::npos) break;
    begin = eol + 1;
  }
  std::vector<const char*> argv;
  for (const std::string& w : words) argv.push_back(w.c_str());
  argv.push_back(nullptr);
  const cs::cli::Parsed parsed = cs::cli::parse_args(static_cast<int>(words.size()), argv.data());
  if (!parsed.args) {
    if (parsed.exit_code != 0 && parsed.exit_code != 2) std::abort();
    return 0;
  }
  const cs::cli::Args& a = *parsed.args;
  if (a.jobs < 1 || a.jobs > 1024 || a.refine < 0 || a.top < 0) std::abort();
  return 0;
}
