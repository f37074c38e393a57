#pragma once
// Cost accounting: instance-seconds x hourly price, per account and per market.
//
// An account (one per instance pool) holds a piecewise-constant instance count; set_count(t, n)
// closes the interval since the last change at the old count. Everything is exact integration
// of step functions: instance_hours(m, t) = sum over the account's intervals of count x length,
// and usd = instance_hours x usd_per_hour. Billing is per second with no minimum (AWS, GCP
// and Azure bill Linux instances per second; AWS with a 60 s minimum, ignored here).
// Commitments (reserved capacity, owned nodes): an account may commit to `committed` instances,
// billed every second whether held or not; it is billed max(held, committed) instances, while
// instance_seconds stays what was held (used). A commitment lasts until set_committed(t, 0).
// Invariant: times passed to one account never decrease (std::logic_error otherwise).
#include <cstddef>
#include <string>
#include <vector>

#include "sim/engine/time.hpp"
#include "sim/fleet/market.hpp"

namespace cs::fleet {

class CostLedger {
 public:
  using AccountId = std::size_t;

  struct Account {
    std::string name;
    Market market = Market::on_demand;
    double usd_per_hour = 0.0;
    int count = 0;                    // instances held since `since`
    int committed = 0;                // instances billed since `since`, held or not
    engine::Time since = 0.0;
    double closed_instance_s = 0.0;   // instance-seconds held before `since`
    double closed_billed_s = 0.0;     // instance-seconds billed before `since`
  };

  AccountId open(std::string name, Market market, double usd_per_hour);
  void set_count(AccountId id, engine::Time t, int count);
  void set_committed(AccountId id, engine::Time t, int committed);
  const Account& account(AccountId id) const { return accounts_.at(id); }
  std::size_t accounts() const { return accounts_.size(); }

  // Accrued up to time t (t at or after every account's last change).
  double instance_seconds(AccountId id, engine::Time t) const;  // held
  double billed_seconds(AccountId id, engine::Time t) const;    // max(held, committed)
  double billed_hours(engine::Time t) const;                    // all accounts
  double usd(AccountId id, engine::Time t) const;               // billed x price
  double usd(engine::Time t) const;                        // all accounts
  PerMarket<double> usd_by_market(engine::Time t) const;
  PerMarket<double> instance_hours_by_market(engine::Time t) const;
  PerMarket<int> count_by_market() const;                  // instances held now

 private:
  Account& advance(AccountId id, engine::Time t);
  std::vector<Account> accounts_;
};

}  // namespace cs::fleet
