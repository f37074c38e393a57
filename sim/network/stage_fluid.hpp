#pragma once
// The analytical model over time: routed plans (analytical_model.hpp) run on the simulator
// stage by stage, and the stages that move bytes at the same time share the links they cross.
//
// A run waits out its collective's base latency and each stage's latency (StageLatency), then
// moves the stage's bytes. Alone, a stage's bytes take T = its busiest link's load / capacity,
// so a run alone takes exactly AnalyticalModel::estimate (and the flow model's time where
// nothing contends).
//
// Stages that move bytes at once share links as their flows would under max-min fairness,
// with one simplification: a stage moves all its transfers at one pace, so it is one demand.
// At a common per-flow rate theta, a stage's most loaded flows (per byte on a link) get theta
// and the stage uses (its load on the link) x (its flow weight: min over its links of flows
// per unit load) x theta of each link it crosses. Progressive filling raises theta until a
// link is full, fixes the stages on it, and goes on with the others. So a ring (one flow per
// channel on a link) beside an all-to-all (k flows there) gets 1/(k+1) of that link, as in
// the flow model, and identical collectives sharing their bottleneck each get half of it,
// stage after stage. Where a stage's transfers have different bottlenecks, the flow model's
// max-min over the transfers themselves finishes some of them sooner: that is this model's
// approximation, and the price of costing a stage of 10^5 transfers as one demand.
//
// Rates are recomputed once per instant, after everything else that happens then, only when
// a stage starts or stops moving bytes, and only for the stages connected to it through
// shared links. A link only one stage crosses caps that stage where it would cap it alone, so
// progressive filling looks only at shared links and each stage's rate alone: a solve costs
// O(levels x shared links) in that component, levels <= its stages. Units: bytes, bytes/s,
// seconds.
#include <cstdint>
#include <functional>
#include <memory>
#include <vector>

#include "sim/engine/simulator.hpp"
#include "sim/network/analytical_model.hpp"
#include "sim/network/collective_runner.hpp"
#include "sim/network/network.hpp"

namespace cs::net {

class StageFluid final : public engine::EventTarget {
 public:
  explicit StageFluid(Network& network);
  StageFluid(const StageFluid&) = delete;
  StageFluid& operator=(const StageFluid&) = delete;

  // Starts a run of `plan` for `bytes` (> 0, finite) now; on_done is called at the simulated
  // time its last stage ends, and may start and cancel runs. `plan` must come from this
  // model's network and outlive the run. Throws std::invalid_argument on bad bytes or
  // efficiency.
  RunHandle start(const RoutedPlan& plan, double bytes, const CollectiveCosts& costs, std::function<void()> on_done);
  // Stops run `id` now: its stage leaves its links at once (the stages it shared them with
  // re-solve at this instant) and on_done is never called. Returns the payload bytes it had
  // delivered (shares x S of its finished stages, and the moved part of the current one), or
  // -1 when the run is not active.
  double cancel(RunHandle id);
  std::size_t active_runs() const { return active_; }
  // Runs moving bytes now, and those moving bytes across link l.
  std::size_t moving_runs() const { return moving_.size(); }
  std::size_t runs_on(topo::LinkId l) const { return runs_on_[l].size(); }
  // Runs whose current stage crosses link l, moving or still waiting out its latency: what
  // load-aware routing reads (as the flow model counts flows still in flight; in lane crossings
  // under a routing of several lanes, topo::Router::lanes).
  uint32_t runs_assigned(topo::LinkId l) const { return assigned_[l]; }

  // Per topology link, as the flow model defines them (flow_model.hpp), up to now: bytes
  // carried; seconds during which some stage's bytes crossed it. (No peak utilization: that
  // would cost every link of every stage whose rate changes, at every change.)
  std::vector<double> link_bytes() const;
  std::vector<double> link_busy_s() const;

  void on_event(uint64_t tag) override;

 private:
  // A run waits out a latency (an event tagged with its id) or moves its stage's bytes (it is
  // in moving_ and in the lists of the links it crosses); between runs its slot is in free_.
  struct Run {
    const RoutedPlan* plan = nullptr;
    double scale = 0;       // bytes / efficiency: the stage's loads are unit loads x scale
    CollectiveCosts costs;
    std::size_t stage = 0;
    double remaining = 0;   // share of the current stage's bytes still to move, in [0, 1]
    double rate = 0;        // share per second
    double theta = 0;       // per-flow rate (bytes/s) from progressive filling; 0: not fixed
    double cap = 0;         // theta alone: the stage's own links allow no more
    uint32_t mark = 0;      // component search epoch
    uint64_t serial = 0;    // bumped when the slot is freed
    uint32_t changed = 0;   // == change_epoch_: queued in changed_ for the next solve
    std::vector<uint32_t> pos;  // per link of its moving stage: its index in runs_on_ there
    double payload_done = 0;      // payload bytes of the finished stages
    engine::EventId wait_event{};  // pending while it waits out a latency
    std::function<void()> on_done;
  };
  static constexpr uint64_t kUpdate = ~uint64_t{0};  // tag of the update event; else a run

  void wait_for_stage(std::size_t run, double extra_latency_s);
  void begin_moving(std::size_t run);
  // Books the moved share of its stage's bytes, leaves its links; neighbours re-solve.
  void stop_moving(std::size_t run, double moved_share = 1);
  void release(std::size_t run);  // the slot is free
  void end_stage(std::size_t run);
  void request_update();
  void advance();  // moving runs' progress from last_update_ to now
  void finish_due();
  void solve();    // new rates for the stages connected to a change, and the next finish
  // Calls f(link, demand) for each link run r's stage crosses; demand is its use of the link
  // per unit of theta.
  template <class F>
  void for_each_link(const Run& r, F&& f) const;

  engine::Simulator& sim_;
  std::vector<double> capacity_Bps_;  // by topology link id
  double min_capacity_Bps_ = 1;
  std::vector<Run> runs_;
  std::vector<std::size_t> free_;
  std::vector<std::size_t> moving_;   // runs moving their stage's bytes
  std::size_t active_ = 0;
  bool in_update_ = false;
  engine::EventId update_event_{};
  bool update_scheduled_ = false;
  double update_at_ = 0;

  // Per link: the moving runs on it. Usage is kept without touching every busy link at every
  // event: bytes are booked when a stage ends (link_bytes() adds what moving stages have
  // delivered), busy time when a link's last stage leaves it (busy_since_: when its first came).
  struct OnLink {
    uint32_t run, hop;  // the run, and which of its stage's links this is
  };
  std::vector<std::vector<OnLink>> runs_on_;
  std::vector<double> bytes_, busy_s_, busy_since_;
  double last_update_ = 0;  // when moving runs' remaining was last brought up to date
  // Runs whose rates a change touched: their component is solved at the next update.
  std::vector<std::size_t> changed_;
  uint32_t change_epoch_ = 1;
  void mark_changed(std::size_t run);
  // Links that stages left since the last changed_neighbours(), which marks the stages still
  // on them as changed.
  std::vector<topo::LinkId> touched_;
  std::vector<uint32_t> link_touched_;
  uint32_t touch_epoch_ = 1;
  void changed_neighbours();
  uint32_t epoch_ = 0;
  // Progressive filling scratch by link id: capacity left, demand of unfixed stages per unit
  // of theta, and how many unfixed stages cross the link.
  std::vector<double> left_Bps_, demand_Bps_;
  std::vector<uint32_t> unfixed_;
  std::vector<uint32_t> assigned_;  // per link, see runs_assigned
  int lanes_;                       // the routing's (Network::lanes)
  void assign(const Run& r, int delta);  // its current stage's links +delta
};

// A plan on the stage fluid: the analytical model's CollectiveRunner. Runs `routed`; with a
// load-aware routing (adaptive, UGAL) each run is routed afresh when it starts, seeing the
// stages in flight (as the flow model routes each stage's flows when they start).
class FluidCollectiveRun final : public CollectiveRunner {
 public:
  // `plan` and `routed` (its routing, made with nothing in flight where `routed_on_idle`)
  // must outlive this.
  FluidCollectiveRun(StageFluid& fluid, Network& network, const work::CollectivePlan& plan, const RoutedPlan& routed,
                     bool routed_on_idle)
      : fluid_(fluid), network_(network), plan_(plan), routed_(routed), routed_on_idle_(routed_on_idle) {}
  RunHandle start(double bytes, const CollectiveCosts& costs, std::function<void()> on_done) override {
    ++active_;
    // A load-aware routing sees the runs in flight; with none, it would choose as it did for
    // routed_ on the idle fabric (a 16,384-GPU all-to-all's stage placed twice took half the
    // run's CPU).
    if (!network_.load_aware() || (routed_on_idle_ && fluid_.active_runs() == 0))
      return fluid_.start(routed_, bytes, costs, [this, done = std::move(on_done)] {
        --active_;
        if (done) done();
      });
    // The run's own routing lives as long as its callback: the fluid drops that when the run
    // ends or is cancelled.
    auto fresh = std::make_shared<RoutedPlan>(network_, plan_);
    const RoutedPlan& routing = *fresh;
    return fluid_.start(routing, bytes, costs, [this, done = std::move(on_done), keep = std::move(fresh)] {
      (void)keep;
      --active_;
      if (done) done();
    });
  }
  double cancel(RunHandle run) override {
    const double delivered = fluid_.cancel(run);
    if (delivered >= 0) --active_;
    return delivered;
  }
  std::size_t active_runs() const override { return active_; }

 private:
  StageFluid& fluid_;
  Network& network_;
  const work::CollectivePlan& plan_;
  const RoutedPlan& routed_;
  bool routed_on_idle_;
  std::size_t active_ = 0;
};

}  // namespace cs::net
