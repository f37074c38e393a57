// libFuzzer target: the CSV trace readers, as a run reads a trace file row by row. The first
// byte picks the reader (even: the serving arrival trace, workloads/arrivals.hpp; odd: the job
// trace, workloads/job_trace.hpp), the rest is the file. Every row read must hold values within
// the readers' stated ranges; any exception other than std::invalid_argument (a malformed row,
// named by its line), any crash, hang, leak or sanitizer report is a bug.
#include <cmath>
#include <cstddef>
#include <cstdint>
#include <sstream>
#include <stdexcept>
#include <string>

#include "workloads/arrivals.hpp"
#include "workloads/job_trace.hpp"

namespace {

void require(bool ok) {
  if (!ok) __builtin_trap();  // a row the reader passed with a value outside its stated range
}

void read_arrivals(std::istream& in) {
  cs::work::TraceReader reader(in);
  double last = 0;
  while (const auto r = reader.next()) {
    require(std::isfinite(r->time_s) && r->time_s >= last && r->time_s <= cs::work::kMaxSeconds);
    last = r->time_s;
    require(r->prompt_tokens == -1 || (r->prompt_tokens >= 1 && r->prompt_tokens <= cs::work::kMaxTokens));
    require(r->output_tokens == -1 || (r->output_tokens >= 1 && r->output_tokens <= cs::work::kMaxTokens));
    require(r->service_time_s == -1 || (r->service_time_s >= 0 && r->service_time_s <= cs::work::kMaxSeconds));
  }
}

void read_jobs(std::istream& in) {
  cs::work::JobTraceReader reader(in);
  double last = 0;
  while (const auto r = reader.next()) {
    require(r->submit_s >= last && r->submit_s <= cs::work::kMaxSeconds);
    last = r->submit_s;
    require(r->gpus >= 1 && r->gpus <= cs::work::kMaxTraceJobGpus);
    require(r->duration_s >= 0 && r->duration_s <= cs::work::kMaxSeconds);
  }
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, std::size_t size) {
  if (size == 0) return 0;
  std::istringstream in(std::string(reinterpret_cast<const char*>(data) + 1, size - 1));
  try {
    if (data[0] % 2 == 0) read_arrivals(in);
    else read_jobs(in);
  } catch (const std::invalid_argument&) {
    // expected: a malformed header or row, named by its line
  }
  return 0;
}
