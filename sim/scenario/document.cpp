// Reading scenario text: file checks, UTF-8, bounded nesting, JSON syntax; and --set paths.
#include <algorithm>
#include <array>
#include <charconv>
#include <cmath>
#include <filesystem>
#include <fstream>
#include <istream>
#include <system_error>

#include "sim/scenario/document_util.hpp"
#include "sim/scenario/load.hpp"
#include "sim/scenario/quantity.hpp"

namespace cs::scenario {
namespace {

struct LineCol {
  std::size_t line = 1, column = 1;
};

LineCol line_col(std::string_view text, std::size_t offset) {
  LineCol lc;
  offset = std::min(offset, text.size());
  for (std::size_t i = 0; i < offset; ++i) {
    if (text[i] == '\n') {
      ++lc.line;
      lc.column = 1;
    } else if ((static_cast<unsigned char>(text[i]) & 0xC0) != 0x80) {
      ++lc.column;  // count characters, not UTF-8 continuation bytes
    }
  }
  return lc;
}

std::string where(std::string_view origin, std::string_view text, std::size_t offset) {
  const LineCol lc = line_col(text, offset);
  return std::string(origin) + ":" + std::to_string(lc.line) + ":" + std::to_string(lc.column);
}

// Offset of the first byte that is not part of valid UTF-8 (overlong forms, surrogates and
// code points above U+10FFFF are invalid), or npos.
std::size_t invalid_utf8_offset(std::string_view s) {
  const auto* p = reinterpret_cast<const unsigned char*>(s.data());
  const std::size_t n = s.size();
  std::size_t i = 0;
  while (i < n) {
    const unsigned char c = p[i];
    if (c < 0x80) {
      ++i;
      continue;
    }
    std::size_t len;
    unsigned char lo = 0x80, hi = 0xBF;  // allowed range of the second byte
    if (c >= 0xC2 && c <= 0xDF) len = 2;
    else if (c == 0xE0) len = 3, lo = 0xA0;
    else if (c == 0xED) len = 3, hi = 0x9F;
    else if (c >= 0xE1 && c <= 0xEF) len = 3;
    else if (c == 0xF0) len = 4, lo = 0x90;
    else if (c == 0xF4) len = 4, hi = 0x8F;
    else if (c >= 0xF1 && c <= 0xF3) len = 4;
    else return i;
    if (i + len > n) return i;
    if (p[i + 1] < lo || p[i + 1] > hi) return i;
    for (std::size_t k = 2; k < len; ++k)
      if ((p[i + k] & 0xC0) != 0x80) return i;
    i += len;
  }
  return std::string_view::npos;
}

// Offset of the bracket that first exceeds kMaxNestingDepth (outside strings), or npos.
std::size_t too_deep_offset(std::string_view s) {
  int depth = 0;
  bool in_string = false, escaped = false;
  for (std::size_t i = 0; i < s.size(); ++i) {
    const char c = s[i];
    if (in_string) {
      if (escaped) escaped = false;
      else if (c == '\\') escaped = true;
      else if (c == '"') in_string = false;
      continue;
    }
    if (c == '"') in_string = true;
    else if (c == '[' || c == '{') {
      if (++depth > kMaxNestingDepth) return i;
    } else if (c == ']' || c == '}') {
      --depth;  // unbalanced closers are the JSON parser's to report
    }
  }
  return std::string_view::npos;
}

// nlohmann's "[json.exception.parse_error.101] parse error at line 1, column 2: syntax
// error ..." without the prefix and position (we add our own).
std::string parse_error_detail(const std::string& what) {
  auto pos = what.find("column ");
  if (pos != std::string::npos) {
    pos = what.find(": ", pos);
    if (pos != std::string::npos) return what.substr(pos + 2);
  }
  pos = what.find("] ");
  return pos == std::string::npos ? what : what.substr(pos + 2);
}

std::string type_name(const nlohmann::json& v) {
  if (v.is_object()) return "an object";
  if (v.is_array()) return "a list";
  if (v.is_string()) return "a string";
  if (v.is_boolean()) return "a boolean";
  if (v.is_null()) return "null";
  return "a number";
}

std::optional<std::size_t> parse_index(std::string_view seg) {
  if (seg.empty() || seg.size() > 9) return std::nullopt;
  std::size_t v = 0;
  auto [ptr, ec] = std::from_chars(seg.data(), seg.data() + seg.size(), v);
  if (ec != std::errc() || ptr != seg.data() + seg.size()) return std::nullopt;
  return v;
}

}  // namespace

nlohmann::json parse_scenario_text(std::string_view text, std::string_view origin) {
  if (text.size() > kMaxScenarioBytes)
    throw InputError("", std::string(origin) + " is " + std::to_string(text.size()) +
                             " bytes; a scenario may be at most " +
                             std::to_string(kMaxScenarioBytes) + " bytes");
  if (auto bad = invalid_utf8_offset(text); bad != std::string_view::npos)
    throw InputError("", "invalid UTF-8 at byte offset " + std::to_string(bad) + " (" +
                             where(origin, text, bad) + "); scenario files must be UTF-8 text");
  if (text.starts_with("\xEF\xBB\xBF")) text.remove_prefix(3);  // a UTF-8 byte-order mark
  // The JSON parser takes a NUL byte for the end of its input: whatever follows one would be
  // ignored, so a document followed by a NUL and garbage would pass. No text has one.
  if (const auto nul = text.find('\0'); nul != std::string_view::npos)
    throw InputError("", "a NUL byte at " + where(origin, text, nul) +
                             "; a scenario is JSON text, and nothing may follow its document");
  if (text.find_first_not_of(" \t\r\n") == std::string_view::npos)
    throw InputError("", std::string(origin) + " is empty; expected a JSON object");
  if (auto deep = too_deep_offset(text); deep != std::string_view::npos)
    throw InputError("", "nesting deeper than " + std::to_string(kMaxNestingDepth) +
                             " levels at " + where(origin, text, deep));
  nlohmann::json doc;
  try {
    doc = nlohmann::json::parse(text.begin(), text.end());
  } catch (const nlohmann::json::parse_error& e) {
    const std::size_t offset = e.byte > 0 ? e.byte - 1 : 0;
    throw InputError("", "invalid JSON at " + where(origin, text, offset) + ": " +
                             parse_error_detail(e.what()));
  } catch (const nlohmann::json::exception& e) {
    throw InputError("", "invalid JSON in " + std::string(origin) + ": " +
                             parse_error_detail(e.what()));
  }
  if (!doc.is_object())
    throw InputError("", "the top level of a scenario must be an object {...}; got " +
                             type_name(doc));
  return doc;
}

namespace {

// Calls fn(value) for every string at a key of kInputFileKeys, walking the dotted key through
// objects only (anything else is the schema's to report). Json: nlohmann::json, const or not.
template <class Json, class Fn>
void for_each_input_file(Json& doc, Fn fn) {
  for (const char* key : kInputFileKeys) {
    Json* node = &doc;
    std::string_view rest(key);
    while (node && !rest.empty()) {
      const auto dot = rest.find('.');
      const std::string segment(rest.substr(0, dot));
      rest = dot == std::string_view::npos ? std::string_view() : rest.substr(dot + 1);
      if (!node->is_object()) {
        node = nullptr;
        break;
      }
      const auto it = node->find(segment);
      node = it != node->end() ? &*it : nullptr;
    }
    if (node && node->is_string()) fn(*node);
  }
}

}  // namespace

nlohmann::json read_scenario_file(const std::string& path) {
  namespace fs = std::filesystem;
  std::error_code ec;
  const auto status = fs::status(path, ec);
  if (ec || !fs::exists(status))
    throw InputError("", "cannot read scenario '" + path + "': no such file");
  if (fs::is_directory(status))
    throw InputError("", "cannot read scenario '" + path + "': it is a directory, not a file");
  if (!fs::is_regular_file(status))
    throw InputError("", "cannot read scenario '" + path + "': not a regular file");
  const auto size = fs::file_size(path, ec);
  if (!ec && size > kMaxScenarioBytes)
    throw InputError("", "scenario '" + path + "' is " + std::to_string(size) +
                             " bytes; a scenario may be at most " +
                             std::to_string(kMaxScenarioBytes) + " bytes");
  std::ifstream in(path, std::ios::binary);
  if (!in) throw InputError("", "cannot read scenario '" + path + "': cannot open it (permissions?)");
  const std::string text = detail::read_at_most(in, kMaxScenarioBytes);
  if (in.bad()) throw InputError("", "cannot read scenario '" + path + "': read error");
  nlohmann::json doc = parse_scenario_text(text, path);
  const fs::path folder = fs::path(path).parent_path();
  if (!folder.empty()) {
    for_each_input_file(doc, [&](nlohmann::json& name) {
      const fs::path file(name.get<std::string>());
      if (!file.empty() && file.is_relative()) name = (folder / file).lexically_normal().string();
    });
  }
  return doc;
}

void set_path(nlohmann::json& doc, std::string_view path, nlohmann::json value) {
  const std::string full(path);
  if (path.empty()) throw InputError("", "empty path in an override; expected KEY.KEY...=VALUE");
  nlohmann::json* node = &doc;
  std::string done;  // the path walked so far
  std::size_t start = 0;
  while (true) {
    const std::size_t dot = path.find('.', start);
    const std::string_view seg =
        path.substr(start, dot == std::string_view::npos ? std::string_view::npos : dot - start);
    if (seg.empty())
      throw InputError(full, "empty key in path '" + full + "' (two dots, or a dot at an end)");
    const bool last = dot == std::string_view::npos;
    const auto index = parse_index(seg);
    if (node->is_null()) *node = index ? nlohmann::json::array() : nlohmann::json::object();
    nlohmann::json* next;
    if (node->is_object()) {
      next = &(*node)[std::string(seg)];
    } else if (node->is_array()) {
      if (!index)
        throw InputError(full, (done.empty() ? "<scenario>" : done) +
                                   " is a list; expected a list index, got '" + std::string(seg) + "'");
      if (*index > node->size())
        throw InputError(full, (done.empty() ? "<scenario>" : done) + " has " +
                                   std::to_string(node->size()) + " items; index " +
                                   std::to_string(*index) + " is beyond the end (" +
                                   std::to_string(node->size()) + " appends)");
      if (*index == node->size()) node->push_back(nullptr);
      next = &(*node)[*index];
    } else {
      throw InputError(full, "cannot set '" + std::string(seg) + "' inside " + done + ", which is " +
                                 type_name(*node) + ", not an object or a list");
    }
    if (!done.empty()) done += '.';
    done += seg;
    node = next;
    if (last) break;
    start = dot + 1;
  }
  *node = std::move(value);
}

void apply_override(nlohmann::json& doc, std::string_view assignment) {
  const std::size_t eq = assignment.find('=');
  if (eq == std::string_view::npos)
    throw InputError("", "override '" + std::string(assignment) +
                             "' has no '='; expected PATH=VALUE, e.g. topology.nodes=64");
  const std::string_view path = assignment.substr(0, eq);
  const std::string_view text = assignment.substr(eq + 1);
  if (path.empty())
    throw InputError("", "override '" + std::string(assignment) +
                             "' has an empty path; expected PATH=VALUE, e.g. topology.nodes=64");
  if (too_deep_offset(text) != std::string_view::npos || invalid_utf8_offset(text) != std::string_view::npos)
    throw InputError(std::string(path), "override value is nested deeper than " +
                                            std::to_string(kMaxNestingDepth) +
                                            " levels or is not UTF-8");
  nlohmann::json value = nlohmann::json::parse(text.begin(), text.end(), nullptr, false);
  if (value.is_discarded()) value = std::string(text);
  set_path(doc, path, std::move(value));
}

std::vector<std::string> input_files(const nlohmann::json& doc) {
  std::vector<std::string> files;
  for_each_input_file(doc, [&](const nlohmann::json& name) { files.push_back(name.get<std::string>()); });
  std::sort(files.begin(), files.end());
  files.erase(std::unique(files.begin(), files.end()), files.end());
  return files;
}

namespace detail {

std::string read_at_most(std::istream& in, std::size_t max_bytes) {
  // Chunks, not one buffer of the limit: zero-filling 64 MiB was most of a small command's
  // time and memory.
  std::string text;
  std::array<char, 1 << 16> chunk;
  while (text.size() <= max_bytes) {
    in.read(chunk.data(), static_cast<std::streamsize>(chunk.size()));
    const auto got = static_cast<std::size_t>(in.gcount());
    text.append(chunk.data(), std::min(got, max_bytes + 1 - text.size()));
    if (got < chunk.size()) break;
  }
  return text;
}

nlohmann::json normalize_numbers(const nlohmann::json& doc) {
  if (doc.is_number_float()) {
    const double v = doc.get<double>();
    if (std::isfinite(v) && std::floor(v) == v && std::fabs(v) <= 0x1p53)
      return static_cast<int64_t>(v);
    return doc;
  }
  if (doc.is_array()) {
    nlohmann::json out = nlohmann::json::array();
    for (const auto& e : doc) out.push_back(normalize_numbers(e));
    return out;
  }
  if (doc.is_object()) {
    nlohmann::json out = nlohmann::json::object();
    for (const auto& [k, v] : doc.items()) out[k] = normalize_numbers(v);
    return out;
  }
  return doc;
}

}  // namespace detail
}  // namespace cs::scenario
