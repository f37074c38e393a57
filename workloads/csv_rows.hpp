#pragma once
// A CSV file read one row at a time (never the whole file): a header row naming the columns,
// then data rows. Blank lines and lines starting with '#' are skipped; cells are trimmed of
// spaces, tabs and a trailing '\r'. No quoting: the traces this reads hold numbers and names.
// Errors throw std::invalid_argument naming the line ("trace line 7: column gpus: ...").
// Used by the serving arrival trace (arrivals.hpp) and the job trace (job_trace.hpp).
#include <cstdint>
#include <istream>
#include <string>
#include <string_view>
#include <vector>

namespace cs::work {

class CsvRows {
 public:
  // Reads the header row (the first line that is not blank or a comment).
  explicit CsvRows(std::istream& in);

  // The index of the column named `name`, -1 when the header has none.
  int column(std::string_view name) const;
  const std::vector<std::string>& header() const { return header_; }
  // Moves to the next data row; false at the end of the file.
  bool next();
  // The current row's cell of column `col` (named `name` in messages); throws when the row is
  // shorter than the header says.
  const std::string& cell(int col, const char* name) const;
  // The cell as a finite number; throws naming the line and column otherwise.
  double number(int col, const char* name) const;
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
