// Structural validation with valijson, and the translation of its results into one
// InputError: the dot path, what the schema expects there, what was given, a suggestion.
// GCC 12 reports a false -Wrestrict inside std::string code inlined into valijson's
// (GCC bug 105329); it is not suppressed as coming from a system header. Left on for the
// whole file: the templates are instantiated at its end.
#if defined(__GNUC__) && !defined(__clang__)
#pragma GCC diagnostic ignored "-Wrestrict"
#endif
#include <valijson/adapters/nlohmann_json_adapter.hpp>
#include <valijson/schema.hpp>
#include <valijson/schema_parser.hpp>
#include <valijson/validation_results.hpp>
#include <valijson/validator.hpp>

#include "sim/scenario/document_util.hpp"
#include "sim/scenario/load.hpp"
#include "sim/scenario/quantity.hpp"
#include "sim/scenario/quantity_range.hpp"
#include "sim/scenario/suggest.hpp"

namespace cs::scenario {
namespace {

using json = nlohmann::json;

struct CompiledSchema {
  json doc;
  valijson::Schema schema;
  CompiledSchema() : doc(json::parse(schema_text())) {
    valijson::SchemaParser parser(valijson::SchemaParser::kDraft7);
    valijson::adapters::NlohmannJsonAdapter adapter(doc);
    parser.populateSchema(adapter, schema);
  }
};

const CompiledSchema& compiled() {
  static const CompiledSchema c;  // immutable after construction (thread-safe init)
  return c;
}

// ---- navigating the schema --------------------------------------------------------------

// Follows "#/definitions/<name>" references; `ref_name` receives the last definition name.
const json* resolve(const json* node, std::string* ref_name = nullptr) {
  for (int guard = 0; node && node->is_object() && node->contains("$ref") && guard < 16; ++guard) {
    const std::string ref = node->at("$ref").get<std::string>();
    constexpr std::string_view prefix = "#/definitions/";
    if (!ref.starts_with(prefix)) return nullptr;
    const std::string name = ref.substr(prefix.size());
    const json& defs = compiled().doc.at("definitions");
    if (!defs.contains(name)) return nullptr;
    if (ref_name) *ref_name = name;
    node = &defs.at(name);
  }
  return node;
}

std::vector<const json*> branches(const json* node) {
  std::vector<const json*> out;
  node = resolve(node);
  if (!node) return out;
  out.push_back(node);
  for (const char* key : {"oneOf", "anyOf", "allOf"})
    if (node->contains(key))
      for (const auto& b : node->at(key)) out.push_back(resolve(&b));
  return out;
}

// The schema of child `seg` of `node`, where `value` is the document's value at `node`.
const json* child_schema(const json* node, const json& value, const std::string& seg) {
  for (const json* b : branches(node)) {
    if (!b) continue;
    if (value.is_object() && b->contains("properties") && b->at("properties").contains(seg))
      return &b->at("properties").at(seg);
    if (value.is_array() && b->contains("items") && b->at("items").is_object()) return &b->at("items");
  }
  return nullptr;
}

const json* value_child(const json& value, const std::string& seg) {
  if (value.is_object()) {
    auto it = value.find(seg);
    return it == value.end() ? nullptr : &*it;
  }
  if (value.is_array()) {
    std::size_t i = 0;
    for (char c : seg) {
      if (c < '0' || c > '9' || i > value.size()) return nullptr;
      i = i * 10 + static_cast<std::size_t>(c - '0');
    }
    return !seg.empty() && i < value.size() ? &value[i] : nullptr;
  }
  return nullptr;
}

std::vector<std::string> property_names(const json* node) {
  std::vector<std::string> names;
  for (const json* b : branches(node))
    if (b && b->contains("properties"))
      for (const auto& [k, v] : b->at("properties").items()) names.push_back(k);
  return names;
}

// ---- describing what a schema node expects --------------------------------------------

bool type_matches(const json& type, const json& value) {
  if (type.is_array()) {
    for (const auto& t : type)
      if (type_matches(t, value)) return true;
    return false;
  }
  const std::string t = type.get<std::string>();
  if (t == "integer") return value.is_number_integer();
  if (t == "number") return value.is_number();
  if (t == "string") return value.is_string();
  if (t == "boolean") return value.is_boolean();
  if (t == "object") return value.is_object();
  if (t == "array") return value.is_array();
  if (t == "null") return value.is_null();
  return false;
}

std::string num(const json& v) {
  if (v.is_number_integer()) return v.dump();
  std::string s = v.dump();
  return s;
}

std::string range_text(const json& s) {
  const bool lo = s.contains("minimum"), hi = s.contains("maximum");
  const bool xlo = s.contains("exclusiveMinimum");
  if (lo && hi) return " from " + num(s["minimum"]) + " to " + num(s["maximum"]);
  if (xlo) return " > " + num(s["exclusiveMinimum"]);
  if (lo) return " >= " + num(s["minimum"]);
  if (hi) return " <= " + num(s["maximum"]);
  return "";
}

std::string brief(const json* node, int depth = 0);

// The quantity kind of definition `ref`: its own name ("time", "bandwidth", ...) or, for a
// ranged definition ("link_bandwidth", "latency", ...), its "x-quantity".
std::optional<QuantityKind> quantity_kind_of(const std::string& ref) {
  const json& defs = compiled().doc.at("definitions");
  if (defs.contains(ref) && defs.at(ref).contains("x-quantity"))
    return quantity_kind_from_name(defs.at(ref).at("x-quantity").get<std::string>());
  return quantity_kind_from_name(ref);
}

std::string brief_branch(const json& s, const std::string& ref, int depth) {
  if (auto kind = quantity_kind_of(ref))
    return std::string(quantity_kind_name(*kind)) + " (" + std::string(quantity_accepted(*kind)) + ")";
  if (s.contains("enum")) {
    std::vector<std::string> names;
    for (const auto& e : s["enum"]) names.push_back(e.is_string() ? e.get<std::string>() : e.dump());
    if (names.size() == 1) return s["enum"][0].dump();
    return "one of " + quoted_list(names);
  }
  if (s.contains("oneOf") || s.contains("anyOf")) {
    std::string out;
    for (const auto& b : s.contains("oneOf") ? s["oneOf"] : s["anyOf"]) {
      if (!out.empty()) out += ", or ";
      out += brief(&b, depth + 1);
    }
    return out;
  }
  const std::string type = s.contains("type") && s["type"].is_string() ? s["type"].get<std::string>() : "";
  // A plain number's unit, where the schema gives one ("USD per kWh"): a refusal of "$0.08/kWh"
  // then says what the number is in.
  const std::string unit = s.contains("unit") && s["unit"].is_string() ? " (" + s["unit"].get<std::string>() + ")" : "";
  if (type == "integer") return "an integer" + range_text(s) + unit;
  if (type == "number") return "a number" + range_text(s) + unit;
  if (type == "boolean") return "true or false";
  if (type == "string") return s.value("minLength", 0) > 0 ? "a non-empty string" : "a string";
  if (type == "object") {
    std::string keys;
    if (s.contains("properties"))
      for (const auto& [k, v] : s["properties"].items()) keys += (keys.empty() ? "" : ", ") + k;
    return keys.empty() ? "an object" : "an object {" + keys + "}";
  }
  if (type == "array") {
    std::string out = "a list";
    const bool lo = s.contains("minItems") && s["minItems"].get<int64_t>() > 0, hi = s.contains("maxItems");
    if (lo && hi) out += " of " + num(s["minItems"]) + " to " + num(s["maxItems"]) + " items";
    else if (lo) out += " of at least " + num(s["minItems"]) + " items";
    else if (hi) out += " of at most " + num(s["maxItems"]) + " items";
    if (depth < 2 && s.contains("items")) out += ", each " + brief(&s["items"], depth + 1);
    return out;
  }
  return "a valid value";
}

std::string brief(const json* node, int depth) {
  std::string ref;
  const json* s = resolve(node, &ref);
  return s ? brief_branch(*s, ref, depth) : "a valid value";
}

InputError describe(const json* node, const json& value, const std::string& path) {
  std::string ref;
  const json* s = resolve(node, &ref);
  if (!s) return InputError(path, "invalid value " + describe_value(value));
  if (auto kind = quantity_kind_of(ref)) {
    try {
      const double si = parse_quantity(value, *kind, path);
      // A ranged definition: the range, with its units, rather than the bare numbers.
      if (s->contains("minimum") && s->contains("maximum")) check_range(si, value, ref, path);
    } catch (const InputError& e) {
      return e;
    }
  }
  // oneOf / anyOf: when exactly one branch takes this JSON type, explain that branch.
  for (const char* key : {"oneOf", "anyOf"}) {
    if (!s->contains(key)) continue;
    const json* match = nullptr;
    int matches = 0;
    for (const auto& b : s->at(key)) {
      const json* rb = resolve(&b);
      // A "const" branch (0 for "none") matches only its value: it cannot be what was meant.
      if (rb && rb->contains("const") && rb->at("const") != value) continue;
      if (rb && (!rb->contains("type") || type_matches(rb->at("type"), value))) {
        match = &b;
        ++matches;
      }
    }
    // A one-value enum branch ("false", "all") says little alone: list every branch then.
    const json* rm = matches == 1 ? resolve(match) : nullptr;
    if (rm && !(rm->contains("enum") && rm->at("enum").size() == 1)) return describe(match, value, path);
    return InputError(path, "expected " + brief(node) + "; got " + describe_value(value));
  }
  std::string hint;
  if (s->contains("enum") && value.is_string()) {
    std::vector<std::string> names;
    for (const auto& e : s->at("enum"))
      if (e.is_string()) names.push_back(e.get<std::string>());
    hint = did_you_mean(value.get<std::string>(), names);
  } else if (s->contains("type") && value.is_string() && !s->at("type").is_array() &&
             (s->at("type") == "integer" || s->at("type") == "number")) {
    hint = "write numbers without quotes";
  } else if (s->contains("type") && s->at("type") == "integer" && value.is_number_float()) {
    hint = "this must be a whole number";
  }
  return InputError(path, "expected " + brief(node) + "; got " + describe_value(value), hint);
}

// ---- choosing the error to report -------------------------------------------------------

enum class Kind { generic = 0, type = 1, range = 2, required = 3, enumeration = 4, unknown_key = 5 };

struct Candidate {
  std::vector<std::string> segs;  // the JSON path of the value concerned
  Kind kind = Kind::generic;
  std::string key;                // unknown_key / required: the key
  std::size_t depth() const { return segs.size() + (kind == Kind::unknown_key ? 1 : 0); }
};

std::string quoted_arg(const std::string& d) {
  // "... constraints: 'nodez'." or "Missing required property 'b'."
  const auto last = d.rfind('\'');
  if (last == std::string::npos || last == 0) return "";
  const auto marker = d.find(": '");
  std::size_t first = marker != std::string::npos && marker < last ? marker + 2 : d.rfind('\'', last - 1);
  if (first == std::string::npos) return "";
  return d.substr(first + 1, last - first - 1);
}

Candidate classify(const valijson::ValidationResults::Error& e) {
  Candidate c;
  for (std::size_t i = 1; i < e.context.size(); ++i) {  // [0] is "<root>"
    const std::string& part = e.context[i];
    c.segs.push_back(part.size() >= 2 && part.front() == '[' && part.back() == ']'
                         ? part.substr(1, part.size() - 2) : part);
  }
  const std::string& d = e.description;
  if (d.starts_with("Object contains a property that could not be validated")) {
    c.kind = Kind::unknown_key;
    c.key = quoted_arg(d);
  } else if (d.starts_with("Missing required property")) {
    c.kind = Kind::required;
    c.key = quoted_arg(d);
  } else if (d.starts_with("Failed to match against any enum")) {
    c.kind = Kind::enumeration;
  } else if (d.starts_with("Value type not permitted")) {
    c.kind = Kind::type;
  } else if (d.starts_with("Expected number") || d.starts_with("Value should be a multiple") ||
             d.starts_with("Array should contain") || d.starts_with("String should be")) {
    c.kind = Kind::range;
  }
  return c;
}

std::string join(const std::vector<std::string>& segs) {
  std::string s;
  for (const auto& p : segs) s += (s.empty() ? "" : ".") + p;
  return s;
}

InputError translate(const valijson::ValidationResults& results, const json& doc) {
  Candidate best;
  bool have = false;
  for (const auto& e : results) {
    Candidate c = classify(e);
    if (!have || c.depth() > best.depth() ||
        (c.depth() == best.depth() && static_cast<int>(c.kind) > static_cast<int>(best.kind))) {
      best = std::move(c);
      have = true;
    }
  }
  // Walk schema and document down to the chosen place.
  const json* node = &compiled().doc;
  const json* value = &doc;
  for (const auto& seg : best.segs) {
    const json* child_value = value_child(*value, seg);
    node = node ? child_schema(node, *value, seg) : nullptr;
    if (!child_value) break;
    value = child_value;
  }
  const std::string path = join(best.segs);
  if (best.kind == Kind::unknown_key) {
    const auto names = property_names(node);
    const std::string at = path.empty() ? "the top level" : path;
    return InputError(path.empty() ? best.key : path + "." + best.key,
                      "unknown key \"" + best.key + "\" in " + at + "; expected one of " + quoted_list(names),
                      did_you_mean(best.key, names));
  }
  if (best.kind == Kind::required)
    return InputError(path, "missing required key \"" + best.key + "\"; expected " + brief(node));
  if (!node) return InputError(path, "invalid value " + describe_value(*value));
  return describe(node, *value, path);
}

}  // namespace

namespace detail {

const nlohmann::json& schema_json() { return compiled().doc; }

void validate_normalized(const nlohmann::json& doc) {
  const CompiledSchema& c = compiled();
  valijson::adapters::NlohmannJsonAdapter target(doc);
  {
    valijson::Validator fast;
    if (fast.validate(c.schema, target, nullptr)) return;
  }
  valijson::Validator full;
  valijson::ValidationResults results;
  full.validate(c.schema, target, &results);
  throw translate(results, doc);
}

}  // namespace detail

void validate_schema(const nlohmann::json& doc) {
  detail::validate_normalized(detail::normalize_numbers(doc));
}

}  // namespace cs::scenario
