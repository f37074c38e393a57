// When a jobs run draws its job stream ahead on a second thread (world::jobs_draw_ahead): a run
// of one replication allowed two threads, unless its caller runs several scenarios at once (a
// sweep's points) and says so with RunOptions::draw_ahead; never in a serial run or beside
// other replications.
#include <catch2/catch.hpp>

#include <string>

#include <tbb/global_control.h>

#include "sim/world/run.hpp"
#include "world_test_support.hpp"

using cs::world::test::load;
using namespace cs::world;

TEST_CASE("A jobs run draws ahead only when its caller leaves it a second thread", "[world][jobs]") {
  const std::string file = CS_SOURCE_DIR "/scenarios/jobs_four_teams.json";
  const cs::scenario::Config one = load(file, {"run.replications=1"});
  tbb::global_control two(tbb::global_control::max_allowed_parallelism, 2);
  RunOptions options;
  CHECK(jobs_draw_ahead(one, options));
  options.threads = 1;
  CHECK_FALSE(jobs_draw_ahead(one, options));
  options.threads = 0;
  options.draw_ahead = false;  // a sweep's points running at once
  CHECK_FALSE(jobs_draw_ahead(one, options));
  CHECK_FALSE(jobs_draw_ahead(load(file, {"run.replications=2"}), RunOptions{}));
  tbb::global_control serial(tbb::global_control::max_allowed_parallelism, 1);
  CHECK_FALSE(jobs_draw_ahead(one, RunOptions{}));
}
