#include "workloads/arrivals.hpp"

#include <charconv>
#include <cmath>
#include <numbers>
#include <stdexcept>
#include <string_view>

namespace cs::work {

namespace {

void require(bool ok, const char* field, const char* what) {
  if (!ok) throw std::invalid_argument(std::string(field) + ": " + what);
}

bool positive_finite(double x) { return std::isfinite(x) && x > 0; }

}  // namespace

double expected_rate_at(const ArrivalSpec& spec, double t_s) {
  switch (spec.process) {
    case ArrivalProcess::poisson: return spec.rate_per_s;
    case ArrivalProcess::diurnal: {
      const DiurnalProfile& d = spec.diurnal;
      const double phase = 2 * std::numbers::pi * (t_s - d.peak_at_s) / d.period_s;
      return spec.rate_per_s * (1 + (d.peak_to_mean - 1) * std::cos(phase));
    }
    case ArrivalProcess::bursty: return mean_rate(spec);
    case ArrivalProcess::trace: return 0;
  }
  return 0;
}

double mean_rate(const ArrivalSpec& spec) {
  switch (spec.process) {
    case ArrivalProcess::poisson:
    case ArrivalProcess::diurnal: return spec.rate_per_s;
    case ArrivalProcess::bursty: {
      const BurstProfile& b = spec.bursty;
      const double burst_share = b.burst_duration_s / (b.burst_duration_s + b.burst_interval_s);
      return spec.rate_per_s * (1 + (b.burst_factor - 1) * burst_share);
    }
    case ArrivalProcess::trace: return 0;
  }
  return 0;
}

void validate_arrivals(const ArrivalSpec& spec) {
  if (spec.process == ArrivalProcess::trace) {
    require(!spec.trace_path.empty(), "trace", "a trace needs a file path");
    require(positive_finite(spec.trace_time_scale), "time_scale", "must be a finite number > 0");
    return;
  }
  require(positive_finite(spec.rate_per_s), "rate", "must be a finite rate > 0");
  if (spec.process == ArrivalProcess::diurnal) {
    require(positive_finite(spec.diurnal.period_s), "diurnal.period", "must be > 0");
    require(spec.diurnal.peak_to_mean >= 1 && spec.diurnal.peak_to_mean <= 2,
            "diurnal.peak_to_mean", "must be in [1, 2] (the trough rate is mean * (2 - peak_to_mean))");
    require(std::isfinite(spec.diurnal.peak_at_s), "diurnal.phase", "must be finite");
  }
  if (spec.process == ArrivalProcess::bursty) {
    require(std::isfinite(spec.bursty.burst_factor) && spec.bursty.burst_factor >= 1,
            "bursty.burst_factor", "must be >= 1");
    require(positive_finite(spec.bursty.burst_duration_s), "bursty.burst_duration", "must be > 0");
    require(positive_finite(spec.bursty.burst_interval_s), "bursty.burst_interval", "must be > 0");
  }
}

// ---- TraceReader ----

namespace {

void split_csv_line(std::string_view line, std::vector<std::string>& cells) {
  cells.clear();
  std::size_t start = 0;
  while (true) {
    const std::size_t comma = line.find(',', start);
    std::string_view cell = line.substr(start, comma == std::string_view::npos ? line.npos : comma - start);
    while (!cell.empty() && (cell.front() == ' ' || cell.front() == '\t')) cell.remove_prefix(1);
    while (!cell.empty() && (cell.back() == ' ' || cell.back() == '\t' || cell.back() == '\r'))
      cell.remove_suffix(1);
    cells.emplace_back(cell);
    if (comma == std::string_view::npos) break;
    start = comma + 1;
  }
}

double parse_number(const std::string& cell, int64_t line, const char* column) {
  double value = 0;
  const char* end = cell.data() + cell.size();
  const auto [ptr, ec] = std::from_chars(cell.data(), end, value);
  if (ec != std::errc() || ptr != end || !std::isfinite(value)) {
    throw std::invalid_argument("trace line " + std::to_string(line) + ": column " + column +
                                ": expected a number, got '" + cell + "'");
  }
  return value;
}

}  // namespace

TraceReader::TraceReader(std::istream& in, double time_scale) : in_(in), time_scale_(time_scale) {
  std::string header;
  while (std::getline(in_, header)) {
    ++line_;
    if (header.empty() || header[0] == '#' || header.find_first_not_of(" \t\r") == header.npos)
      continue;
    split_csv_line(header, cells_);
    for (int i = 0; i < static_cast<int>(cells_.size()); ++i) {
      const std::string& name = cells_[static_cast<std::size_t>(i)];
      if (name == "timestamp") time_col_ = i;
      else if (name == "prompt_tokens") prompt_col_ = i;
      else if (name == "output_tokens") output_col_ = i;
      else if (name == "service_time") service_col_ = i;
    }
    break;
  }
  if (time_col_ < 0) {
    throw std::invalid_argument("trace: the header row must name a 'timestamp' column");
  }
}

std::optional<TraceRecord> TraceReader::next() {
  std::string text;
  while (std::getline(in_, text)) {
    ++line_;
    if (text.empty() || text[0] == '#' || text.find_first_not_of(" \t\r") == text.npos) continue;
    split_csv_line(text, cells_);
    const auto cell = [&](int col, const char* name) -> const std::string& {
      if (col >= static_cast<int>(cells_.size())) {
        throw std::invalid_argument("trace line " + std::to_string(line_) + ": missing column " +
                                    name);
      }
      return cells_[static_cast<std::size_t>(col)];
    };
    TraceRecord r;
    r.time_s = parse_number(cell(time_col_, "timestamp"), line_, "timestamp") * time_scale_;
    if (r.time_s < last_time_) {
      throw std::invalid_argument("trace line " + std::to_string(line_) +
                                  ": timestamps must not decrease");
    }
    last_time_ = r.time_s;
    if (prompt_col_ >= 0)
      r.prompt_tokens = static_cast<int64_t>(parse_number(cell(prompt_col_, "prompt_tokens"), line_, "prompt_tokens"));
    if (output_col_ >= 0)
      r.output_tokens = static_cast<int64_t>(parse_number(cell(output_col_, "output_tokens"), line_, "output_tokens"));
    if (service_col_ >= 0)
      r.service_time_s = parse_number(cell(service_col_, "service_time"), line_, "service_time");
    return r;
  }
  return std::nullopt;
}

}  // namespace cs::work
