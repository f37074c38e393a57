// The flow model's bulk exchanges (start_exchange): solved whole while nothing else runs
// (flow_exchange.hpp), turned into flows when anything else starts.
#include <algorithm>
#include <cmath>
#include <limits>
#include <stdexcept>

#include "sim/engine/priority.hpp"
#include "sim/network/flow_model_exchange.hpp"
#include "sim/network/flow_model_state.hpp"

namespace cs::net {

FlowModel::~FlowModel() = default;  // here, where the exchanges' types are whole

std::size_t FlowModel::active_flows() const {
  return active_ + (exchange_ ? exchange_->solved->unfinished(sim_.now() - exchange_->start) : 0);
}

void FlowModel::start_exchange(PairSource& source, double bytes, FlowObserver* observer, uint64_t tag,
                               double latency_s) {
  if (!(bytes > 0) || !std::isfinite(bytes)) throw std::invalid_argument("FlowModel::start_exchange: bytes must be finite and > 0");
  if (!(latency_s >= 0) || !std::isfinite(latency_s))
    throw std::invalid_argument("FlowModel::start_exchange: latency must be finite and >= 0");
  if (source.pairs() == 0) throw std::invalid_argument("FlowModel::start_exchange: no pairs");
  // Groups done, but not one telling its owner now (this call may come from that owner).
  std::erase_if(exchange_flows_, [](const auto& g) { return g->outstanding == 0 && !g->telling; });
  if (exchange_) materialize();
  // Alone: solved whole, its slowest flow's end its one event. Not while a solved exchange is
  // still here (one whose every byte is delivered, its end due at this instant).
  if (active_ == 0 && !exchange_) {
    auto solved = std::make_unique<PairExchange>(source, external_capacity_, bytes, [this] { sim_.poll_interrupt(); });
    stats_.flows_started += source.pairs();
    ++stats_.recomputations;
    stats_.max_component_flows = std::max<uint64_t>(stats_.max_component_flows, source.pairs());
    const engine::Time start = sim_.now() + latency_s;
    exchange_ = std::make_unique<SolvedExchange>(SolvedExchange{std::move(solved), &source, observer, tag, start, {}});
    exchange_->done =
        sim_.schedule_at(start + exchange_->solved->duration_s(), *this, kExchangeEvent, engine::priority::resolve);
    return;
  }
  stats_.flows_started += source.pairs();
  // Kept before its flows start: they name it as their observer, even if starting one throws.
  ExchangeFlows& group = *exchange_flows_.emplace_back(std::make_unique<ExchangeFlows>());
  group.observer = observer;
  group.tag = tag;
  start_flows(group, source, bytes, nullptr, 0, latency_s);
}

void FlowModel::start_flows(ExchangeFlows& group, PairSource& source, double bytes, const PairExchange* solved,
                            double tau, double in_flight_s) {
  const std::size_t n = source.pairs();
  group.flows.assign(n, kNoFlow);
  group.bytes.assign(n, 0.0);
  for (std::size_t i = 0; i < n; ++i) {
    const double left = solved ? solved->left(i, tau) : bytes;
    if (left <= 0) continue;  // done before it became flows
    group.bytes[i] = left;
    ++group.outstanding;
    group.flows[i] = admit(source.route(i), left, &group, i, in_flight_s);
  }
}

void FlowModel::materialize() {
  const engine::Time now = sim_.now();
  const double tau = now - exchange_->start;
  const PairExchange& solved = *exchange_->solved;
  const std::size_t left = solved.unfinished(tau);
  // Every byte delivered (its end is due at this instant): nothing to share; it ends as solved.
  if (left == 0) return;
  const std::unique_ptr<SolvedExchange> ex = std::move(exchange_);
  sim_.cancel(ex->done);
  keep_usage(solved, tau);
  stats_.flows_completed += solved.pairs() - left;
  ExchangeFlows& group = *exchange_flows_.emplace_back(std::make_unique<ExchangeFlows>());
  group.observer = ex->observer;
  group.tag = ex->tag;
  group.delivered = solved.delivered(tau);
  // The pairs not done go on from where they are: in flight until the exchange's start, or
  // sharing now with the bytes they have left (their route's latency is behind them).
  start_flows(group, *ex->source, solved.bytes(), &solved, tau, std::max(0.0, ex->start - now));
}

void FlowModel::finish_exchange() {
  const std::unique_ptr<SolvedExchange> ex = std::move(exchange_);
  keep_usage(*ex->solved, std::numeric_limits<double>::infinity());
  stats_.flows_completed += ex->solved->pairs();
  ex->solved.reset();  // before the owner starts its next stage's exchange
  if (ex->observer) ex->observer->on_flow_done(kNoFlow, ex->tag);
}

void FlowModel::keep_usage(const PairExchange& exchange, double tau) {
  if (exchange_bytes_.empty()) {
    exchange_bytes_.assign(internal_of_.size(), 0.0);
    exchange_busy_s_.assign(internal_of_.size(), 0.0);
    exchange_peak_.assign(internal_of_.size(), 0.0);
  }
  exchange.add_link_bytes(tau, exchange_bytes_);
  exchange.add_link_busy(tau, exchange_busy_s_);
  exchange.max_link_utilization(tau, external_capacity_, exchange_peak_);
}

double FlowModel::cancel_exchange(const FlowObserver* observer, uint64_t tag) {
  if (exchange_ && exchange_->observer == observer && exchange_->tag == tag) {
    const std::unique_ptr<SolvedExchange> ex = std::move(exchange_);
    sim_.cancel(ex->done);
    const double tau = sim_.now() - ex->start;
    keep_usage(*ex->solved, tau);
    const std::size_t left = ex->solved->unfinished(tau);
    stats_.flows_cancelled += left;
    stats_.flows_completed += ex->solved->pairs() - left;
    return ex->solved->delivered(tau);
  }
  for (const auto& group : exchange_flows_) {
    ExchangeFlows& g = *group;
    if (g.cancelled || g.outstanding == 0 || g.observer != observer || g.tag != tag) continue;
    g.cancelled = true;
    double delivered = g.delivered;
    for (std::size_t i = 0; i < g.flows.size(); ++i) {
      if (g.flows[i] == kNoFlow) continue;
      const double wire = cancel(g.flows[i], &g, i);
      if (wire >= 0) {
        delivered += wire;
        --g.outstanding;
      } else {
        delivered += g.bytes[i];  // done at this instant, still to be told (and then ignored)
      }
    }
    g.release();
    return delivered;
  }
  return -1;
}

void FlowModel::ExchangeFlows::release() {
  flows = {};
  bytes = {};
}

void FlowModel::ExchangeFlows::on_flow_done(FlowId /*flow*/, uint64_t pair) {
  --outstanding;
  if (cancelled) return;
  delivered += bytes[pair];
  flows[pair] = kNoFlow;
  if (outstanding > 0) return;
  release();
  // The owner may start its next exchange, which drops done groups but not this one.
  telling = true;
  if (observer) observer->on_flow_done(kNoFlow, tag);
  telling = false;
}

}  // namespace cs::net
