#include "sim/fleet/instance_prices.hpp"

#include <cmath>
#include <stdexcept>

#include <nlohmann/json.hpp>

namespace cs::fleet {
namespace {

using json = nlohmann::json;

[[noreturn]] void fail(const std::string& path, const std::string& expected) {
  throw std::invalid_argument("instance_prices." + path + ": expected " + expected);
}

const json& member(const json& obj, const char* key, const std::string& path) {
  const auto it = obj.find(key);
  if (it == obj.end()) fail(path + "." + key, "a value (missing)");
  return *it;
}

double number(const json& v, const std::string& path, double lo, double hi) {
  if (!v.is_number()) fail(path, "a number");
  const double x = v.get<double>();
  if (!(x >= lo && x <= hi) || !std::isfinite(x))
    fail(path, "a number in [" + std::to_string(lo) + ", " + std::to_string(hi) + "]");
  return x;
}

std::string text(const json& v, const std::string& path) {
  if (!v.is_string()) fail(path, "a string");
  return v.get<std::string>();
}

Market market_key(const std::string& key, const std::string& path) {
  const auto m = parse_market(key);
  if (!m) fail(path, "a market: on_demand, spot or reserved");
  return *m;
}

}  // namespace

InstancePriceCatalog InstancePriceCatalog::parse(std::string_view json_text) {
  json doc;
  try {
    doc = json::parse(json_text);
  } catch (const json::parse_error& e) {
    throw std::invalid_argument(std::string("instance_prices: not valid JSON: ") + e.what());
  }
  if (!doc.is_object()) fail("", "an object");
  InstancePriceCatalog c;
  if (const auto d = doc.find("default_discounts"); d != doc.end()) {
    if (!d->is_object()) fail("default_discounts", "an object");
    for (const auto& [key, v] : d->items()) {
      const std::string path = "default_discounts." + key;
      const Market m = market_key(key, path);
      if (m == Market::on_demand) fail(path, "spot or reserved (on_demand is the reference)");
      c.discount_[m] = number(member(v, "value", path), path + ".value", 0.0, 1.0);
      c.discount_source_[m] = text(member(v, "source", path), path + ".source");
    }
  }
  const json& instances = member(doc, "instances", "");
  if (!instances.is_object()) fail("instances", "an object of instance types");
  for (const auto& [name, v] : instances.items()) {
    const std::string path = "instances." + name;
    if (!v.is_object()) fail(path, "an object");
    InstanceType t;
    t.name = name;
    t.provider = text(member(v, "provider", path), path + ".provider");
    t.gpu = text(member(v, "gpu", path), path + ".gpu");
    t.region = text(member(v, "region", path), path + ".region");
    t.gpus = static_cast<int>(number(member(v, "gpus", path), path + ".gpus", 1, 1024));
    const json& prices = member(v, "usd_per_hour", path);
    if (!prices.is_object()) fail(path + ".usd_per_hour", "an object by market");
    for (const auto& [key, q] : prices.items()) {
      const std::string at = path + ".usd_per_hour." + key;
      t.listed[market_key(key, at)] =
          PriceQuote{number(member(q, "usd", at), at + ".usd", 0.0, 1e7),
                     text(member(q, "source", at), at + ".source"), false};
    }
    c.instances_.emplace(name, std::move(t));
  }
  return c;
}

const InstancePriceCatalog& InstancePriceCatalog::builtin() {
  static const InstancePriceCatalog catalog = parse(instance_prices_text());
  return catalog;
}

const InstanceType* InstancePriceCatalog::find(std::string_view name) const {
  const auto it = instances_.find(name);
  return it == instances_.end() ? nullptr : &it->second;
}

std::vector<std::string> InstancePriceCatalog::names() const {
  std::vector<std::string> n;
  for (const auto& [name, t] : instances_) n.push_back(name);
  return n;
}

double InstancePriceCatalog::default_discount(Market market) const { return discount_[market]; }

PriceQuote InstancePriceCatalog::price(std::string_view name, Market market) const {
  const InstanceType* t = find(name);
  if (!t) throw std::out_of_range("instance_prices: no instance type \"" + std::string(name) + "\"");
  if (t->listed[market]) return *t->listed[market];
  const auto& od = t->listed[Market::on_demand];
  if (!od)
    throw std::invalid_argument("instance_prices: " + std::string(name) + " lists neither " +
                                std::string(to_string(market)) + " nor on_demand");
  return PriceQuote{od->usd_per_hour * (1.0 - discount_[market]),
                    "derived: on_demand x (1 - " + std::to_string(discount_[market]) + "); " +
                        discount_source_[market],
                    true};
}

PerMarket<double> InstancePriceCatalog::usd_per_hour(std::string_view name) const {
  PerMarket<double> p;
  for (const Market m : kAllMarkets) p[m] = price(name, m).usd_per_hour;
  return p;
}

void InstancePriceCatalog::set_price(std::string_view name, Market market, double usd_per_hour,
                                     std::string source) {
  if (!(usd_per_hour >= 0.0) || !std::isfinite(usd_per_hour))
    throw std::invalid_argument("instance_prices: a price must be finite and >= 0");
  auto it = instances_.find(name);
  if (it == instances_.end()) {
    InstanceType t;
    t.name = std::string(name);
    it = instances_.emplace(t.name, std::move(t)).first;
  }
  it->second.listed[market] = PriceQuote{usd_per_hour, std::move(source), false};
}

void InstancePriceCatalog::set_default_discount(Market market, double discount, std::string source) {
  if (!(discount >= 0.0 && discount <= 1.0))
    throw std::invalid_argument("instance_prices: a discount must be in [0, 1]");
  discount_[market] = discount;
  discount_source_[market] = std::move(source);
}

}  // namespace cs::fleet
