// Pipeline bubbles emerge from the simulated timeline: with uniform stages and free
// communication they equal the closed forms of the schedules' papers.
#include "training_support.hpp"

namespace cs::compute::test {
namespace {

using work::Schedule;

double bubble(int p, int m, Schedule s, int v = 1, PassTimes t = {}) {
  auto run = run_step(small_workload(p, m, s, v), {}, t);
  check_accounting(run->analysis);
  CHECK(run->analysis.exposed_s.total() == Approx(0).margin(1e-12));
  return run->analysis.bubble_fraction;
}

TEST_CASE("gpipe and 1f1b bubbles are (p-1)/(m+p-1) with free communication", "[bubble]") {
  for (Schedule s : {Schedule::gpipe, Schedule::one_f_one_b})
    for (int p : {2, 4})
      for (int m : {1, 3, 4, 8}) {
        INFO("schedule " << work::to_string(s) << " p " << p << " m " << m);
        CHECK(bubble(p, m, s) == Approx(double(p - 1) / (m + p - 1)).epsilon(1e-9));
      }
}

TEST_CASE("the interleaved bubble is (p-1)/(v m + p-1)", "[bubble]") {
  for (int p : {2, 4})
    for (int v : {2, 3})
      for (int m : {p, 2 * p, 4 * p}) {
        INFO("p " << p << " v " << v << " m " << m);
        CHECK(bubble(p, m, Schedule::interleaved, v) == Approx(double(p - 1) / (v * m + p - 1)).epsilon(1e-9));
      }
}

TEST_CASE("zb_h1's bubble is below 1f1b's and matches (p-1)(F+B-W) idle per stage", "[bubble]") {
  for (int p : {2, 4})
    for (int m : {4, 8}) {
      INFO("p " << p << " m " << m);
      const double f1b = bubble(p, m, Schedule::one_f_one_b);
      auto run = run_step(small_workload(p, m, Schedule::zb_h1), {});
      check_accounting(run->analysis);
      CHECK(run->analysis.bubble_fraction < f1b);
      // Qi et al.: ZB-H1 idles (p-1)(T_F + T_B - T_W) per stage. Per stage of two layers: two
      // forward and two input-gradient items a layer, one weight-gradient item, 1 s each.
      const double tf = 4, tb = 4, tw = 2;
      CHECK(run->analysis.bubble_s == Approx((p - 1) * (tf + tb - tw)).epsilon(1e-9));
    }
}

TEST_CASE("more micro-batches shrink the bubble", "[bubble]") {
  for (Schedule s : {Schedule::gpipe, Schedule::one_f_one_b, Schedule::zb_h1}) {
    double last = 1;
    for (int m : {2, 4, 8, 16}) {
      const double b = bubble(4, m, s);
      CHECK(b < last);
      last = b;
    }
  }
}

}  // namespace
}  // namespace cs::compute::test
