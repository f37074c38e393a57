// Simulator: no shared state between instances; same seed, same run.
#include <catch2/catch.hpp>

#include <cstdint>
#include <utility>
#include <vector>

#include "engine_test_support.hpp"
#include "sim/engine/simulator.hpp"

using namespace cs::engine;
using namespace cs::engine::test;

namespace {

// A small stochastic model: each job waits an exponential time, then spawns another with
// probability 0.7, for a bounded number of jobs. Records (time, job) in `seen`.
class Spawner final : public Log {
 public:
  explicit Spawner(Simulator& sim) : Log(sim) {}
  void on_event(uint64_t job) override {
    Log::on_event(job);
    auto& rng = sim_.random("spawner");
    if (next_job_ < 2000 && rng.bernoulli(0.7)) sim_.schedule_in(rng.exponential(0.5), *this, next_job_++);
    if (next_job_ < 2000 && rng.bernoulli(0.7)) sim_.schedule_in(rng.exponential(0.5), *this, next_job_++);
  }
  void start() { sim_.schedule_at(0.0, *this, next_job_++); }

 private:
  uint64_t next_job_ = 0;
};

}  // namespace

TEST_CASE("Two simulators in one process are independent", "[simulator][independence]") {
  Simulator a(1);
  Simulator b(1);
  Spawner sa(a);
  Spawner sb(b);
  sa.start();
  sb.start();
  // Interleave the two runs step by step; each must behave as if alone.
  while (a.pending() != 0 || b.pending() != 0) {
    a.step();
    a.step();
    b.step();
  }
  Simulator alone(1);
  Spawner s_alone(alone);
  s_alone.start();
  alone.run();
  CHECK(sa.seen == s_alone.seen);
  CHECK(sb.seen == s_alone.seen);
  CHECK(sa.seen.size() > 100);
}

TEST_CASE("Different seeds give different runs", "[simulator][independence]") {
  Simulator a(1);
  Simulator b(2);
  Spawner sa(a);
  Spawner sb(b);
  sa.start();
  sb.start();
  a.run();
  b.run();
  CHECK(sa.seen != sb.seen);
}

TEST_CASE("Simulator::random returns one stream per name", "[simulator][random]") {
  Simulator sim(9);
  auto& x = sim.random("x");
  auto& y = sim.random("y");
  CHECK(&x == &sim.random("x"));
  CHECK(&x != &y);
  RandomStream fresh(9, "x");
  CHECK(x.next_u64() == fresh.next_u64());
}
