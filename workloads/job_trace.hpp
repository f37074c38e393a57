#pragma once
// A shared cluster's job trace, as data: one job per row, read record by record as the run
// goes (never the whole file). CSV with a header row naming the columns, in any order:
//   submit_time  seconds from the start of the run (required, non-decreasing, at most 1e12)
//   gpus         GPUs the job asks for, all at once (required, a whole number >= 1)
//   duration     seconds the job runs on a compact placement (required, 0 to 1e12)
//   queue        the queue it is submitted to (optional; absent: the scheduler's first queue)
//   class        a job class of the workload (optional; its placement sensitivity)
// Other columns are ignored, so a published trace's extra fields may stay. Blank lines and
// lines starting with '#' are skipped. Malformed rows throw std::invalid_argument with the
// line number (csv_rows.hpp).
#include <cstdint>
#include <istream>
#include <optional>
#include <string>

#include "workloads/csv_rows.hpp"

namespace cs::work {

// The most GPUs a trace's job may ask for (a cluster's size is checked by who runs it).
inline constexpr int64_t kMaxTraceJobGpus = 1'000'000'000;

struct JobTraceRecord {
  double submit_s = 0;
  int64_t gpus = 1;
  double duration_s = 0;
  std::string queue;      // empty when the trace has no queue column
  std::string job_class;  // empty when the trace has no class column
};

class JobTraceReader {
 public:
  // Reads the header; throws std::invalid_argument naming a missing required column.
  explicit JobTraceReader(std::istream& in);
  std::optional<JobTraceRecord> next();
  int64_t line() const { return rows_.line(); }
  bool has_queue() const { return queue_col_ >= 0; }
  bool has_class() const { return class_col_ >= 0; }

 private:
  CsvRows rows_;
  int submit_col_ = -1, gpus_col_ = -1, duration_col_ = -1, queue_col_ = -1, class_col_ = -1;
  double last_submit_ = 0;
};

}  // namespace cs::work
