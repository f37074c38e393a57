#include "sim/fleet/instance_prices.hpp"

#include <cmath>
#include <stdexcept>

#include <nlohmann/json.hpp>

#include "sim/fleet/data_fields.hpp"

namespace cs::fleet {
namespace {

using json = nlohmann::json;

Market market_key(const data::Fields& f, const std::string& key, const std::string& path) {
  const auto m = parse_market(key);
  if (!m || *m == Market::serverless) f.fail(path, "a market: on_demand, spot or reserved (serverless is priced per provider)");
  return *m;
}

}  // namespace

InstancePriceCatalog InstancePriceCatalog::parse(std::string_view json_text) {
  const data::Fields f("instance_prices");
  const json doc = f.parse(json_text);
  if (!doc.is_object()) f.fail("", "an object");
  InstancePriceCatalog c;
  if (const auto d = doc.find("default_discounts"); d != doc.end()) {
    if (!d->is_object()) f.fail("default_discounts", "an object");
    for (const auto& [key, v] : d->items()) {
      const std::string path = "default_discounts." + key;
      const Market m = market_key(f, key, path);
      if (m == Market::on_demand) f.fail(path, "spot or reserved (on_demand is the reference)");
      c.discount_[m] = f.number(f.member(v, "value", path), path + ".value", 0.0, 1.0);
      c.discount_source_[m] = f.text(f.member(v, "source", path), path + ".source");
    }
  }
  const json& instances = f.member(doc, "instances", "");
  if (!instances.is_object()) f.fail("instances", "an object of instance types");
  for (const auto& [name, v] : instances.items()) {
    const std::string path = "instances." + name;
    if (!v.is_object()) f.fail(path, "an object");
    InstanceType t;
    t.name = name;
    t.provider = f.text(f.member(v, "provider", path), path + ".provider");
    t.gpu = f.text(f.member(v, "gpu", path), path + ".gpu");
    t.region = f.text(f.member(v, "region", path), path + ".region");
    t.gpus = static_cast<int>(f.number(f.member(v, "gpus", path), path + ".gpus", 1, 1024));
    if (const auto ns = v.find("not_sold"); ns != v.end()) {
      if (!ns->is_object()) f.fail(path + ".not_sold", "an object: market -> why it is not sold there");
      for (const auto& [key, why] : ns->items()) {
        const std::string at = path + ".not_sold." + key;
        const Market m = market_key(f, key, at);
        if (m == Market::on_demand) f.fail(at, "spot or reserved (an instance is always sold on demand)");
        t.not_sold[m] = f.text(why, at);
        if (t.not_sold[m].empty()) f.fail(at, "a reason with its source");
      }
    }
    const json& prices = f.member(v, "usd_per_hour", path);
    if (!prices.is_object()) f.fail(path + ".usd_per_hour", "an object by market");
    for (const auto& [key, q] : prices.items()) {
      const std::string at = path + ".usd_per_hour." + key;
      t.listed[market_key(f, key, at)] =
          PriceQuote{f.number(f.member(q, "usd", at), at + ".usd", 0.0, 1e7),
                     f.text(f.member(q, "source", at), at + ".source"), false};
    }
    for (const Market m : kInstanceMarkets)
      if (t.listed[m] && !t.sold_in(m))
        f.fail(path + ".usd_per_hour." + std::string(to_string(m)), "no price: not_sold says it is not sold there");
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
  if (market == Market::serverless)
    throw std::invalid_argument("instance_prices: serverless GPUs are priced per provider (serverless_prices.hpp)");
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
  for (const Market m : kInstanceMarkets) p[m] = price(name, m).usd_per_hour;
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
