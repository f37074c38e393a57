// workload.arrivals: when requests (serving) or jobs (jobs) arrive: poisson, diurnal, bursty,
// or a trace of times, into work::ArrivalSpec (workloads/arrivals.hpp). One parser for both
// workloads, as the contract says ("arrivals (as for serving)").
#include <filesystem>
#include <fstream>
#include <stdexcept>

#include "sim/scenario/load.hpp"
#include "sim/scenario/parse_sections.hpp"
#include "sim/scenario/parse_util.hpp"
#include "workloads/arrivals.hpp"

namespace cs::scenario::detail {

using work::ArrivalProcess;

void refuse_keys(const json& obj, const std::string& at, std::initializer_list<const char*> keys, const std::string& why) {
  for (const char* key : keys)
    if (member(obj, key)) throw InputError(join_path(at, key), "applies only " + why);
}

namespace {

void check_trace(const std::string& file, const std::string& path, double time_scale) {
  namespace fs = std::filesystem;
  std::error_code ec;
  if (!fs::is_regular_file(file, ec))
    throw InputError(path, "expected the path of a readable CSV file of arrivals; '" + file + "' is missing or not a file",
                     std::string(kInputPathHint) + "; columns timestamp (required), prompt_tokens, "
                     "output_tokens, service_time");
  std::ifstream in(file, std::ios::binary);
  if (!in) throw InputError(path, "cannot open '" + file + "' (permissions?)");
  // Read it through once (record by record, nothing kept) so that a malformed row is an input
  // error now rather than a fault in the middle of the run.
  try {
    work::TraceReader reader(in, time_scale);
    int64_t rows = 0;
    while (reader.next()) ++rows;
    if (rows == 0) throw std::invalid_argument("the trace has no request: a header and no row");
  } catch (const std::invalid_argument& e) {
    throw InputError(path, "in '" + file + "': " + e.what(),
                     "a header row naming the columns (timestamp required), then one request per row, "
                     "timestamps non-decreasing");
  }
}

}  // namespace

bool trace_has_column(const work::ArrivalSpec& arrivals, const char* column) {
  if (arrivals.process != ArrivalProcess::trace) return false;
  std::ifstream in(arrivals.trace_path, std::ios::binary);
  const work::TraceReader header(in, arrivals.trace_time_scale);  // parse_arrivals read it whole
  return header.has_column(column);
}

work::ArrivalSpec parse_arrivals(const json& in, const std::string& path) {
  work::ArrivalSpec a;
  a.process = get_choice(in, "process", path, work::kArrivalProcessNames, ArrivalProcess::poisson);
  const bool trace = a.process == ArrivalProcess::trace;
  if (trace) {
    refuse_keys(in, path, {"rate"}, "to generated arrivals: a trace gives its own times");
  } else {
    if (!member(in, "rate")) throw InputError(join_path(path, "rate"), "required: the mean arrival rate, e.g. \"100/s\"");
    a.rate_per_s = get_quantity(in, "rate", path, QuantityKind::rate, Sign::positive, 0.0);
  }
  if (a.process != ArrivalProcess::diurnal)
    refuse_keys(in, path, {"peak_to_mean", "period", "peak_at"}, "to process \"diurnal\"");
  if (a.process != ArrivalProcess::bursty)
    refuse_keys(in, path, {"burst_factor", "burst_duration", "burst_interval"}, "to process \"bursty\"");
  if (!trace) refuse_keys(in, path, {"trace", "time_scale"}, "to process \"trace\"");
  switch (a.process) {
    case ArrivalProcess::poisson: break;
    case ArrivalProcess::diurnal: {
      work::DiurnalProfile& d = a.diurnal;
      d.period_s = get_quantity(in, "period", path, QuantityKind::time, Sign::positive, d.period_s);
      d.peak_to_mean = get_number(in, "peak_to_mean", path, d.peak_to_mean, 1.0, 2.0);
      d.peak_at_s = get_quantity(in, "peak_at", path, QuantityKind::time, Sign::non_negative, d.peak_at_s);
      break;
    }
    case ArrivalProcess::bursty: {
      work::BurstProfile& b = a.bursty;
      b.burst_factor = get_number(in, "burst_factor", path, b.burst_factor, 1.0, 1e6);
      b.burst_duration_s = get_quantity(in, "burst_duration", path, QuantityKind::time, Sign::positive, b.burst_duration_s);
      b.burst_interval_s = get_quantity(in, "burst_interval", path, QuantityKind::time, Sign::positive, b.burst_interval_s);
      break;
    }
    case ArrivalProcess::trace: {
      if (!member(in, "trace"))
        throw InputError(join_path(path, "trace"), "required for process \"trace\": the CSV file of arrivals");
      a.trace_path = get_string(in, "trace", path, "");
      a.trace_time_scale = get_number(in, "time_scale", path, 1.0, 1e-9, 1e9);
      check_trace(a.trace_path, join_path(path, "trace"), a.trace_time_scale);
      break;
    }
  }
  return a;
}

}  // namespace cs::scenario::detail
