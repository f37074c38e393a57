// workload.arrivals (process, rate, peak_rate, period) into the workload's ArrivalSpec: the
// arrival process of jobs (and of serving requests, which take the same keys).
#include "sim/scenario/parse_sections.hpp"
#include "sim/scenario/parse_util.hpp"

namespace cs::scenario::detail {

work::ArrivalSpec parse_arrivals(const json& arrivals, const std::string& at) {
  work::ArrivalSpec spec;
  spec.process = get_choice<work::ArrivalProcess>(arrivals, "process", at,
                                                  {{"poisson", work::ArrivalProcess::poisson},
                                                   {"diurnal", work::ArrivalProcess::diurnal},
                                                   {"trace", std::nullopt}},
                                                  work::ArrivalProcess::poisson);
  if (!member(arrivals, "rate"))
    throw InputError(join_path(at, "rate"), "required: the mean arrival rate, e.g. \"30/h\"");
  spec.rate_per_s = get_quantity(arrivals, "rate", at, QuantityKind::rate, Sign::positive, 0.0);
  if (spec.process == work::ArrivalProcess::diurnal) {
    spec.diurnal.period_s =
        get_quantity(arrivals, "period", at, QuantityKind::time, Sign::positive, spec.diurnal.period_s);
    if (const json* peak = member(arrivals, "peak_rate")) {
      const double p = quantity_value(*peak, QuantityKind::rate, Sign::positive, join_path(at, "peak_rate"));
      spec.diurnal.peak_to_mean = p / spec.rate_per_s;
      if (spec.diurnal.peak_to_mean < 1.0 || spec.diurnal.peak_to_mean > 2.0)
        throw InputError(join_path(at, "peak_rate"),
                         "expected a peak between the mean rate and twice it (a cosine day never below 0); got " +
                             describe_value(json(spec.diurnal.peak_to_mean)) + " x the mean");
    }
  } else {
    for (const char* key : {"peak_rate", "period"})
      if (member(arrivals, key))
        throw InputError(join_path(at, key), "only a diurnal process has a " + std::string(key),
                         "set \"process\": \"diurnal\"");
  }
  return spec;
}

}  // namespace cs::scenario::detail
