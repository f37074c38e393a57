#pragma once
// When requests arrive, as data: the arrival process of a serving workload.
//
//   poisson  rate `rate_per_s`, exponential gaps.
//   diurnal  a non-homogeneous Poisson process with a daily (or any `period_s`) cosine
//            profile: rate(t) = rate_per_s * (1 + (peak_to_mean - 1) * cos(2 pi (t - peak_at_s)
//            / period_s)); its mean over a period is rate_per_s, its peak rate_per_s *
//            peak_to_mean at t = peak_at_s (mod period), its trough rate_per_s * (2 -
//            peak_to_mean). 1 <= peak_to_mean <= 2 keeps the rate >= 0.
//   bursty   a two-state Markov-modulated Poisson process (MMPP-2): a calm state at rate_per_s
//            and a burst state at rate_per_s * burst_factor; calm periods last Exp(mean
//            burst_interval_s), bursts Exp(mean burst_duration_s). Mean rate:
//            rate_per_s * (1 + (burst_factor - 1) * burst_duration_s / (burst_duration_s +
//            burst_interval_s)).
//   trace    replay of a CSV file (TraceReader below), read record by record as the run goes.
//
// The runtime (sim/fleet/arrival_source.hpp) draws the times; nothing here is expanded into
// events up front. Units: seconds, requests per second.
#include <array>
#include <cstdint>
#include <istream>
#include <optional>
#include <string>
#include <unordered_map>
#include <vector>

#include "common/enum_table.hpp"
#include "workloads/csv_rows.hpp"

namespace cs::work {

enum class ArrivalProcess : uint8_t { poisson, diurnal, bursty, trace };
// workload.arrivals.process.
inline constexpr auto kArrivalProcessNames = std::to_array<EnumName<ArrivalProcess>>({
    {"poisson", ArrivalProcess::poisson, "exponential gaps at a constant rate"},
    {"diurnal", ArrivalProcess::diurnal, "a Poisson process with a daily cosine rate profile"},
    {"bursty", ArrivalProcess::bursty, "a two-state Markov-modulated Poisson process: calm and bursts"},
    {"trace", ArrivalProcess::trace, "replay of a CSV file of request times"},
});
static_assert(names_every_value<kArrivalProcessNames>());

struct DiurnalProfile {
  double period_s = 86400;   // > 0
  double peak_to_mean = 2;   // in [1, 2]
  double peak_at_s = 14 * 3600.0;  // time of the daily peak (mod period); 2 pm by default
};

struct BurstProfile {
  double burst_factor = 5;          // burst rate / calm rate, >= 1
  double burst_duration_s = 60;     // mean length of a burst, > 0
  double burst_interval_s = 3600;   // mean calm time between bursts, > 0
};

struct ArrivalSpec {
  ArrivalProcess process = ArrivalProcess::poisson;
  double rate_per_s = 1;       // poisson, diurnal (mean), bursty (calm state); > 0
  DiurnalProfile diurnal;
  BurstProfile bursty;
  std::string trace_path;      // trace: CSV file (see TraceReader)
  double trace_time_scale = 1; // trace: arrival times are multiplied by this (> 0; 0.5 = twice as fast)
};

// Expected arrival rate at time t (1/s); for bursty the long-run mean, for trace 0 (unknown).
double expected_rate_at(const ArrivalSpec& spec, double t_s);
// Long-run mean arrival rate (1/s); 0 for trace.
double mean_rate(const ArrivalSpec& spec);
// Throws std::invalid_argument naming the offending field ("rate", "diurnal.peak_to_mean", ...).
void validate_arrivals(const ArrivalSpec& spec);

// One row of an arrival trace. Token counts and service time are -1 when the file has no
// such column (the request distribution then supplies them).
struct TraceRecord {
  double time_s = 0;
  int64_t prompt_tokens = -1;
  int64_t output_tokens = -1;
  double service_time_s = -1;
  int64_t prefix_id = -1;      // requests with the same id share their first prefix_tokens
  int64_t prefix_tokens = -1;  // (a system prompt, a document): -1 when not given
};

// Reads an arrival trace one record at a time (never the whole file). CSV with a header row
// naming the columns, in any order: `timestamp` (seconds, required, non-decreasing),
// `prompt_tokens`, `output_tokens` (whole numbers from 1 to kMaxTokens), `service_time`
// (seconds), `prefix_id` and `prefix_tokens` (a shared prompt prefix: an id >= 1, 0 for none,
// and its length, up to kMaxTokens and the row's prompt; the two columns go together; an id has
// one length wherever it appears); times
// from 0 to kMaxSeconds (csv_rows.hpp); other columns are ignored; a column named twice is an
// error.
// Blank lines and lines starting with '#' are skipped. Malformed rows throw
// std::invalid_argument with the line number.
class TraceReader {
 public:
  explicit TraceReader(std::istream& in, double time_scale = 1.0);
  std::optional<TraceRecord> next();
  int64_t line() const { return rows_.line(); }
  bool has_column(std::string_view name) const { return rows_.column(name) >= 0; }

 private:
  CsvRows rows_;
  double time_scale_;
  int time_col_ = -1, prompt_col_ = -1, output_col_ = -1, service_col_ = -1, prefix_id_col_ = -1,
      prefix_tokens_col_ = -1;
  double last_time_ = 0;
  struct PrefixSeen {
    int64_t tokens, line;
  };
  std::unordered_map<int64_t, PrefixSeen> prefixes_;  // by prefix_id: its length where first seen
};

}  // namespace cs::work
