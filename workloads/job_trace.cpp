#include "workloads/job_trace.hpp"

#include <cmath>
#include <stdexcept>

namespace cs::work {

JobTraceReader::JobTraceReader(std::istream& in) : rows_(in) {
  submit_col_ = rows_.column("submit_time");
  gpus_col_ = rows_.column("gpus");
  duration_col_ = rows_.column("duration");
  queue_col_ = rows_.column("queue");
  class_col_ = rows_.column("class");
  for (const auto& [col, name] : {std::pair{submit_col_, "submit_time"}, std::pair{gpus_col_, "gpus"},
                                  std::pair{duration_col_, "duration"}})
    if (col < 0)
      throw std::invalid_argument(std::string("job trace: the header row must name a '") + name +
                                  "' column (submit_time, gpus, duration; queue and class are optional)");
}

std::optional<JobTraceRecord> JobTraceReader::next() {
  if (!rows_.next()) return std::nullopt;
  JobTraceRecord r;
  r.submit_s = rows_.seconds(submit_col_, "submit_time");
  if (r.submit_s < last_submit_) rows_.fail("submit times must not decrease");
  last_submit_ = r.submit_s;
  r.gpus = rows_.whole(gpus_col_, "gpus", 1, kMaxTraceJobGpus);
  r.duration_s = rows_.seconds(duration_col_, "duration");
  if (queue_col_ >= 0) r.queue = rows_.cell(queue_col_, "queue");
  if (class_col_ >= 0) r.job_class = rows_.cell(class_col_, "class");
  return r;
}

}  // namespace cs::work
