#include "sim/fleet/cost_ledger.hpp"

#include <algorithm>
#include <stdexcept>

namespace cs::fleet {

CostLedger::AccountId CostLedger::open(std::string name, Market market, double usd_per_hour) {
  if (!(usd_per_hour >= 0.0))
    throw std::invalid_argument("CostLedger: account " + name + " needs a price >= 0 per hour");
  accounts_.push_back(Account{std::move(name), market, usd_per_hour});
  return accounts_.size() - 1;
}

CostLedger::Account& CostLedger::advance(AccountId id, engine::Time t) {
  Account& a = accounts_.at(id);
  if (t < a.since) throw std::logic_error("CostLedger: time went backwards on " + a.name);
  a.closed_instance_s += a.count * (t - a.since);
  a.closed_billed_s += std::max(a.count, a.committed) * (t - a.since);
  a.since = t;
  return a;
}

void CostLedger::set_count(AccountId id, engine::Time t, int count) {
  if (count < 0) throw std::logic_error("CostLedger: negative instance count on " + accounts_.at(id).name);
  advance(id, t).count = count;
}

void CostLedger::set_committed(AccountId id, engine::Time t, int committed) {
  if (committed < 0) throw std::logic_error("CostLedger: negative commitment on " + accounts_.at(id).name);
  advance(id, t).committed = committed;
}

double CostLedger::instance_seconds(AccountId id, engine::Time t) const {
  const Account& a = accounts_.at(id);
  return a.closed_instance_s + a.count * (t - a.since);
}

double CostLedger::billed_seconds(AccountId id, engine::Time t) const {
  const Account& a = accounts_.at(id);
  return a.closed_billed_s + std::max(a.count, a.committed) * (t - a.since);
}

double CostLedger::billed_hours(engine::Time t) const {
  double total = 0.0;
  for (AccountId id = 0; id < accounts_.size(); ++id) total += billed_seconds(id, t) / 3600.0;
  return total;
}

double CostLedger::usd(AccountId id, engine::Time t) const {
  return billed_seconds(id, t) / 3600.0 * accounts_.at(id).usd_per_hour;
}

double CostLedger::usd(engine::Time t) const {
  double total = 0.0;
  for (AccountId id = 0; id < accounts_.size(); ++id) total += usd(id, t);
  return total;
}

PerMarket<double> CostLedger::usd_by_market(engine::Time t) const {
  PerMarket<double> r;
  for (AccountId id = 0; id < accounts_.size(); ++id) r[accounts_[id].market] += usd(id, t);
  return r;
}

PerMarket<double> CostLedger::instance_hours_by_market(engine::Time t) const {
  PerMarket<double> r;
  for (AccountId id = 0; id < accounts_.size(); ++id)
    r[accounts_[id].market] += instance_seconds(id, t) / 3600.0;
  return r;
}

PerMarket<int> CostLedger::count_by_market() const {
  PerMarket<int> r;
  for (const Account& a : accounts_) r[a.market] += a.count;
  return r;
}

}  // namespace cs::fleet
