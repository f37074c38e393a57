#include "sim/fleet/data_fields.hpp"

#include <cmath>
#include <stdexcept>

#include <nlohmann/json.hpp>

namespace cs::fleet::data {

using json = nlohmann::json;

void Fields::fail(const std::string& path, const std::string& expected) const {
  throw std::invalid_argument(file_ + (path.empty() ? "" : "." + path) + ": expected " + expected);
}

json Fields::parse(std::string_view text) const {
  try {
    return json::parse(text);
  } catch (const json::parse_error& e) {
    throw std::invalid_argument(file_ + ": not valid JSON: " + e.what());
  }
}

const json& Fields::member(const json& obj, const char* key, const std::string& path) const {
  const auto it = obj.find(key);
  if (it == obj.end()) fail(path.empty() ? std::string(key) : path + "." + key, "a value (missing)");
  return *it;
}

double Fields::number(const json& v, const std::string& path, double lo, double hi) const {
  if (!v.is_number()) fail(path, "a number");
  const double x = v.get<double>();
  if (!(x >= lo && x <= hi) || !std::isfinite(x))
    fail(path, "a number in [" + std::to_string(lo) + ", " + std::to_string(hi) + "]");
  return x;
}

std::string Fields::text(const json& v, const std::string& path) const {
  if (!v.is_string()) fail(path, "a string");
  return v.get<std::string>();
}

const json& Fields::object(const json& v, const std::string& path, const std::string& what) const {
  if (!v.is_object()) fail(path, "an object: " + what);
  return v;
}

}  // namespace cs::fleet::data
