#include "sim/fleet/serverless_prices.hpp"

#include <nlohmann/json.hpp>

#include "sim/fleet/data_fields.hpp"

namespace cs::fleet {

const SourcedValue* ServerlessProvider::price(std::string_view gpu) const {
  const auto it = usd_per_gpu_second.find(gpu);
  return it == usd_per_gpu_second.end() ? nullptr : &it->second;
}

ServerlessCatalog ServerlessCatalog::parse(std::string_view json_text) {
  using json = nlohmann::json;
  const data::Fields f("serverless_prices");
  const json doc = f.parse(json_text);
  const json& providers = f.object(f.member(f.object(doc, "", "the catalog"), "providers", ""), "providers",
                                   "provider name -> its offer");
  // A figure with its source: {"s": seconds} or {"usd": USD per GPU-second}.
  const auto sourced = [&f](const json& v, const char* key, const std::string& path, double lo, double hi) {
    f.object(v, path, "{\"" + std::string(key) + "\": number, \"source\": string}");
    return SourcedValue{f.number(f.member(v, key, path), path + "." + key, lo, hi),
                        f.text(f.member(v, "source", path), path + ".source")};
  };
  ServerlessCatalog c;
  for (const auto& [name, v] : providers.items()) {
    const std::string path = "providers." + name;
    f.object(v, path, "the provider's offer");
    ServerlessProvider p;
    p.name = name;
    p.billing = f.text(f.member(v, "billing", path), path + ".billing");
    constexpr double kDay_s = 86400.0;
    p.container_start_s = sourced(f.member(v, "container_start", path), "s", path + ".container_start", 0.0, kDay_s);
    p.image_pull_s = sourced(f.member(v, "image_pull", path), "s", path + ".image_pull", 0.0, kDay_s);
    p.idle_timeout_s = sourced(f.member(v, "idle_timeout", path), "s", path + ".idle_timeout", 0.0, kDay_s);
    const std::string at = path + ".usd_per_gpu_second";
    for (const auto& [gpu, q] : f.object(f.member(v, "usd_per_gpu_second", path), at, "accelerator -> price").items())
      p.usd_per_gpu_second.emplace(gpu, sourced(q, "usd", at + "." + gpu, 1e-9, 1.0));
    if (p.usd_per_gpu_second.empty()) f.fail(at, "at least one accelerator");
    c.providers_.emplace(name, std::move(p));
  }
  if (c.providers_.empty()) f.fail("providers", "at least one provider");
  return c;
}

const ServerlessCatalog& ServerlessCatalog::builtin() {
  static const ServerlessCatalog catalog = parse(serverless_prices_text());
  return catalog;
}

const ServerlessProvider* ServerlessCatalog::find(std::string_view provider) const {
  const auto it = providers_.find(provider);
  return it == providers_.end() ? nullptr : &it->second;
}

std::vector<std::string> ServerlessCatalog::names() const {
  std::vector<std::string> n;
  for (const auto& [name, p] : providers_) n.push_back(name);
  return n;
}

std::vector<std::string> ServerlessCatalog::selling(std::string_view gpu) const {
  std::vector<std::string> n;
  for (const auto& [name, p] : providers_)
    if (p.price(gpu)) n.push_back(name);
  return n;
}

}  // namespace cs::fleet
