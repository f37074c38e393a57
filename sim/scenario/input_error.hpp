#pragma once
// An error the user caused: a bad file, key or value. Reported as
//   error: <json path>: <what was expected>
//     hint: <suggestion>            (when there is one)
// and exit code 2. Anything else that escapes is an internal fault (exit 1).
#include <stdexcept>
#include <string>

namespace cs::scenario {

class InputError : public std::runtime_error {
 public:
  // path: dot-separated JSON path ("topology.links.0.bandwidth"); "" for the whole file/CLI.
  InputError(std::string path, std::string expected, std::string hint = "")
      : std::runtime_error(format(path, expected, hint)),
        path_(std::move(path)), expected_(std::move(expected)), hint_(std::move(hint)) {}

  const std::string& path() const { return path_; }
  const std::string& expected() const { return expected_; }
  const std::string& hint() const { return hint_; }

 private:
  static std::string format(const std::string& path, const std::string& expected,
                            const std::string& hint) {
    std::string s = "error: " + (path.empty() ? std::string("<scenario>") : path) + ": " + expected;
    if (!hint.empty()) s += "\n  hint: " + hint;
    return s;
  }
  std::string path_, expected_, hint_;
};

}  // namespace cs::scenario
