#pragma once
// A collective plan run on the flow model: its stages one after another, each stage's
// transfers at once, sharing the fabric with whatever else runs.
//
// A pipeline (transfers with one chain id) runs as one flow over the chained route of its
// edges: every edge moves at the pipeline's single rate, and a link the pipeline crosses m
// times gives it 1/m of its share (flow_model.hpp). An independent transfer runs as its own
// flow on its rank-pair route. Every flow of a stage spends the stage's latency
// (StageLatency, collective_costs.hpp) in flight before it takes
// bandwidth, and the first stage also the collective's base latency. A stage ends when its
// last flow is delivered.
//
// The plan's routes are registered once, when the CollectiveRun is built; any number of runs
// of it may then be active at once (two all-reduces on one group), each with its own size.
// With a load-aware routing (adaptive, UGAL) a stage's routes are chosen instead when it
// starts, flow by flow, seeing the flows in flight and the stage's transfers placed before
// (Network::StagePlacement).
//
// An all-pairs stage (a direct all-to-all's) of at least exchange_pairs pairs runs as one bulk
// exchange (FlowModel::start_exchange): solved whole while nothing else runs, its routes
// computed when needed and never held, its crossings per link those the router's all-pairs
// counter gave when the stage was built, and its pairs' links listed by that counter
// (topo::AllPairsCounter::append_links: the ranks' legs from tables and the fabric hops from
// the router's walk, no Route built), so a 16,384-GPU all-to-all (268 M pairs) fits where a
// flow per pair does not; where anything else runs it becomes those flows.
// Load-aware routings, and routings that cannot compute a route uncached, list the pairs.
//
// Uncontended, a run takes exactly what the analytical model says (analytical_model.hpp).
#include <cstdint>
#include <functional>
#include <memory>
#include <span>
#include <utility>
#include <vector>

#include "sim/network/collective_costs.hpp"
#include "sim/network/collective_runner.hpp"
#include "sim/network/network.hpp"
#include "workloads/collective_plan.hpp"

namespace cs::net {

class CollectiveRun final : public CollectiveRunner, public FlowObserver {
 public:
  // All-pairs stages of at least this many pairs run as one exchange (see above).
  static constexpr std::size_t kExchangePairs = std::size_t{1} << 16;
  // Registers the plan's routes once; `plan` must outlive the run.
  CollectiveRun(Network& network, const work::CollectivePlan& plan, std::size_t exchange_pairs = kExchangePairs);
  CollectiveRun(const CollectiveRun&) = delete;
  CollectiveRun& operator=(const CollectiveRun&) = delete;

  RunHandle start(double bytes, const CollectiveCosts& costs, std::function<void()> on_done) override;
  double cancel(RunHandle run) override;
  std::size_t active_runs() const override { return active_; }
  bool running() const { return active_ > 0; }
  const work::CollectivePlan& plan() const { return plan_; }

  void on_flow_done(FlowId flow, uint64_t tag) override;

 private:
  struct Flight {
    RouteId route;
    double share;
    double wire_latency_s;  // the route's own latency (0 for chained routes)
    double transfers;       // plan transfers it carries: a chain's edges each move its bytes
  };
  // An all-pairs stage's pairs as an exchange's (transfer i of the stage is pair i): their
  // links listed by the counter that counted them (topo::AllPairsCounter::append_links).
  class StagePairs final : public PairSource {
   public:
    // crossings: per model link, the stage's pairs crossing it, as `counter` counted them
    // (Network::count_all_pairs).
    StagePairs(Network& network, const work::Stage& stage, std::unique_ptr<topo::AllPairsCounter> counter,
               std::vector<uint64_t> crossings)
        : network_(network), stage_(stage), counter_(std::move(counter)), crossings_(std::move(crossings)) {}
    std::size_t pairs() const override { return stage_.size(); }
    void links(std::size_t i, std::vector<uint32_t>& out) const override;
    void links_of(std::span<const uint32_t> pairs, std::vector<uint32_t>& out,
                  std::vector<uint32_t>& ends) const override;
    std::span<const uint64_t> crossings() const override { return crossings_; }
    bool pairs_crossing(uint32_t link, std::vector<uint32_t>& out) const override;
    RouteId route(std::size_t i) override;

   private:
    void append(std::size_t i, topo::Route& scratch, std::vector<uint32_t>& out) const;
    Network& network_;
    const work::Stage& stage_;
    std::unique_ptr<topo::AllPairsCounter> counter_;
    std::vector<uint64_t> crossings_;
    mutable std::vector<std::pair<uint32_t, uint32_t>> leg_pairs_;  // pairs_crossing's scratch
  };
  struct StageRoutes {
    std::vector<Flight> flights;  // chains first, then independent transfers
    StageLatency latency;
    std::unique_ptr<StagePairs> exchange;  // instead of flights: an all-pairs stage's exchange
  };
  // The stage as one exchange, or null where it stays flights (see the header comment).
  std::unique_ptr<StageRoutes> exchange_stage(const work::Stage& stage, std::size_t exchange_pairs);
  // The stage's flights over routes `placement` chooses (in plan order: chains' edges, then
  // independent transfers).
  StageRoutes route_stage(const work::Stage& stage, Network::StagePlacement& placement);
  // Every stage's latency under one costs: the plan's runs come with one to three (a
  // protocol's, by size), and pricing a stage walks its pipelines' wires.
  struct PricedStages {
    CollectiveCosts costs;
    std::vector<double> seconds;  // by stage
  };
  // The index in priced_ of `costs`, priced on first use (fixed routes only).
  std::size_t priced(const CollectiveCosts& costs);
  struct Instance {
    std::size_t stage = 0;
    std::size_t priced = 0;  // its costs in priced_ (fixed routes)
    const StageRoutes* routes = nullptr;  // the current stage's: stages_[stage], or `routed`
    std::unique_ptr<StageRoutes> routed;  // chosen at the stage's start (load-aware routing)
    std::size_t outstanding = 0;
    double bytes = 0;
    CollectiveCosts costs;
    double payload_done = 0;         // payload of the flows delivered so far
    std::vector<FlowId> flows;       // the current stage's flows, by flight
    std::vector<uint8_t> delivered;  // per flight of the current stage
    uint64_t serial = 0;
    std::size_t unheard = 0;         // cancelled: completions still to be told (then free)
    bool active = false;
    std::function<void()> on_done;
  };
  // A flow's tag: its instance's slot and the flight's index in its stage.
  static uint64_t tag_of(std::size_t slot, std::size_t flight) { return uint64_t{flight} << 32 | slot; }
  void start_stage(std::size_t slot, double extra_latency_s);
  // The payload the instance's current stage delivers whole, when it is an exchange.
  double payload_of_exchange(const Instance& in) const {
    const work::Stage& stage = plan_.stages[in.stage];
    return stage.pair_share * in.bytes * static_cast<double>(stage.size());
  }
  void release(std::size_t slot);

  Network& network_;
  const work::CollectivePlan& plan_;
  std::vector<StageRoutes> stages_;
  std::vector<PricedStages> priced_;
  std::vector<Instance> instances_;
  std::vector<std::size_t> free_;
  std::size_t active_ = 0;
};

}  // namespace cs::net
