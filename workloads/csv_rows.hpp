#pragma once
// A CSV file read one row at a time (never the whole file): a header row naming the columns,
// then data rows. Blank lines and lines starting with '#' are skipped; cells are trimmed of
// spaces, tabs and a trailing '\r', then of one pair of enclosing double quotes (spreadsheets
// quote headers: "timestamp"); a UTF-8 byte-order mark before the header is skipped. No commas
// inside quotes: the traces this reads hold numbers and names.
// Errors throw std::invalid_argument naming the line ("trace line 7: column gpus: ...").
// Used by the serving arrival trace (arrivals.hpp) and the job trace (job_trace.hpp).
#include <cstdint>
#include <istream>
#include <string>
#include <string_view>
#include <vector>

namespace cs::work {

// Ceilings of a trace's cells, as a scenario's quantities have (sim/scenario/parse_util.cpp):
// far above any real system, so that sums stay finite and a typo is an error, not a result.
inline constexpr double kMaxSeconds = 1e12;             // ~31,700 years
inline constexpr int64_t kMaxTokens = int64_t{1} << 30;  // as request.max_prompt_tokens

class CsvRows {
 public:
  // Reads the header row (the first line that is not blank or a comment).
  explicit CsvRows(std::istream& in);

  // The index of the column named `name`, -1 when the header has none; throws when it names
  // it twice.
  int column(std::string_view name) const;
  const std::vector<std::string>& header() const { return header_; }
  // Moves to the next data row; false at the end of the file.
  bool next();
  // The current row's cell of column `col` (named `name` in messages); throws when the row is
  // shorter than the header says.
  const std::string& cell(int col, const char* name) const;
  // The cell as a finite number; throws naming the line and column otherwise.
  double number(int col, const char* name) const;
  // The cell as seconds: a number from 0 to kMaxSeconds (throws otherwise, naming the column).
  double seconds(int col, const char* name) const;
  // The cell as a whole number from `min` to `max` (throws otherwise, naming the column).
  int64_t whole(int col, const char* name, int64_t min, int64_t max) const;
  // Throws std::invalid_argument "trace line <line>: <what>".
  [[noreturn]] void fail(const std::string& what) const;
  int64_t line() const { return line_; }

 private:
  bool read_line(std::string& text);

  std::istream& in_;
  int64_t line_ = 0;
  std::vector<std::string> header_;
  std::vector<std::string> cells_;
};

}  // namespace cs::work
