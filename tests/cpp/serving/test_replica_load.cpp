// A replica's load integrals (sim/serving/replica.hpp): every load reported through set_load,
// with or without the KV cache's share, integrated exactly over simulated time, whether the
// load, the share or both change, several times at one instant or not at all, from a replica
// created after the start; and the snapshots an autoscaler's window takes in between.
#include <catch2/catch.hpp>

#include <cstdint>
#include <vector>

#include "sim/engine/simulator.hpp"
#include "sim/serving/replica.hpp"

namespace {

using namespace cs::serving;

struct NoListener final : ReplicaListener {
  void on_complete(Replica&, const Request&) override {}
  void on_slot_free(Replica&) override {}
  void on_drained(Replica&) override {}
};

// A load reported at a time: in service, queued, and (with_kv) the KV cache's share.
struct LoadStep {
  double at_s;
  int in_service, queued;
  double kv_share;
  bool with_kv;
};

// A replica of 4 slots whose load follows a script.
class ScriptedReplica final : public Replica {
 public:
  ScriptedReplica(cs::engine::Simulator& sim, ReplicaListener& listener, std::vector<LoadStep> steps)
      : Replica(sim, listener, 0, 4), steps_(std::move(steps)) {
    for (std::size_t i = 0; i < steps_.size(); ++i) sim.schedule_at(steps_[i].at_s, *this, i);
  }
  void submit(const Request&) override {}
  void take_queued(std::vector<Request>&) override {}
  void abort(std::vector<Request>&) override {}
  void on_event(uint64_t tag) override {
    const LoadStep& s = steps_[tag];
    if (s.with_kv) set_load(s.in_service, s.queued, s.kv_share);
    else set_load(s.in_service, s.queued);
  }

 private:
  std::vector<LoadStep> steps_;
};

}  // namespace

TEST_CASE("A replica's load integrals are exact however its load and KV share are reported", "[serving]") {
  cs::engine::Simulator sim(1);
  sim.run(5.0);  // the replica starts at 5 s: its integrals count from then
  NoListener listener;
  // [5, 10): 2 in service, 1 queued, KV 0.25; [10, 40): 3, 1, 0.5; [40, 100): 0, 2, 0.75.
  ScriptedReplica replica(sim, listener,
                          {{5, 1, 0, 0.25, true},     // at its start: nothing to integrate yet
                           {5, 2, 1, 0.25, true},     // the same instant, the load alone changed
                           {10, 2, 1, 0.5, true},     // the KV share alone changed
                           {10, 3, 1, 0.0, false},    // the same instant, the load alone, without a share
                           {25, 3, 1, 0.5, true},     // nothing changed
                           {40, 0, 0, 0.0, true},     // all stopped
                           {40, 0, 2, 0.75, true}});  // the same instant, everything changed again
  LoadIntegrals at_25;
  sim.schedule_at(25.0, [&] { at_25 = replica.integrals(); });
  sim.run(100.0);
  CHECK(at_25.time_s == 25.0);
  CHECK(at_25.in_service == 2 * 5 + 3 * 15);
  CHECK(at_25.busy == (2 * 5 + 3 * 15) / 4.0);
  CHECK(at_25.queued == 1 * 20);
  CHECK(at_25.kv_usage == 0.25 * 5 + 0.5 * 15);
  const LoadIntegrals end = replica.integrals();
  CHECK(end.time_s == 100.0);
  CHECK(end.in_service == 2 * 5 + 3 * 30);
  CHECK(end.busy == (2 * 5 + 3 * 30) / 4.0);
  CHECK(end.queued == 1 * 5 + 1 * 30 + 2 * 60);
  CHECK(end.kv_usage == 0.25 * 5 + 0.5 * 30 + 0.75 * 60);
  CHECK(replica.in_service() == 0);
  CHECK(replica.queued() == 2);
}
