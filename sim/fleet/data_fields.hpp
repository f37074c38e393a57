#pragma once
// Internal: reading the catalogs compiled in from data/ (instance_prices.json,
// serverless_prices.json). Each reader throws std::invalid_argument "<file>.<path>: expected
// <what>" so that a malformed data file names the field at fault.
#include <string>
#include <string_view>

#include <nlohmann/json_fwd.hpp>

namespace cs::fleet::data {

class Fields {
 public:
  explicit Fields(std::string_view file) : file_(file) {}

  [[noreturn]] void fail(const std::string& path, const std::string& expected) const;
  // The parsed document; an error names the file when the text is not JSON.
  nlohmann::json parse(std::string_view text) const;
  // obj[key], required.
  const nlohmann::json& member(const nlohmann::json& obj, const char* key, const std::string& path) const;
  double number(const nlohmann::json& v, const std::string& path, double lo, double hi) const;
  std::string text(const nlohmann::json& v, const std::string& path) const;
  // An object's members, or the error "an object: <what>".
  const nlohmann::json& object(const nlohmann::json& v, const std::string& path, const std::string& what) const;

 private:
  std::string file_;
};

}  // namespace cs::fleet::data
