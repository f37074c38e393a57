#include "workloads/csv_rows.hpp"

#include <charconv>
#include <cmath>
#include <stdexcept>

namespace cs::work {
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
    if (cell.size() >= 2 && cell.front() == '"' && cell.back() == '"') cell = cell.substr(1, cell.size() - 2);
    cells.emplace_back(cell);
    if (comma == std::string_view::npos) break;
    start = comma + 1;
  }
}

}  // namespace

CsvRows::CsvRows(std::istream& in) : in_(in) {
  std::string text;
  if (!read_line(text)) return;
  // A byte-order mark, as some editors and spreadsheets write UTF-8.
  if (text.rfind("\xEF\xBB\xBF", 0) == 0) text.erase(0, 3);
  split_csv_line(text, header_);
}

bool CsvRows::read_line(std::string& text) {
  while (std::getline(in_, text)) {
    ++line_;
    if (text.empty() || text[0] == '#' || text.find_first_not_of(" \t\r") == text.npos) continue;
    return true;
  }
  return false;
}

int CsvRows::column(std::string_view name) const {
  int found = -1;
  for (std::size_t i = 0; i < header_.size(); ++i)
    if (header_[i] == name) {
      // Two columns of one name: which one the file meant is not ours to guess.
      if (found >= 0) fail("the header names column " + std::string(name) + " twice");
      found = static_cast<int>(i);
    }
  return found;
}

bool CsvRows::next() {
  std::string text;
  if (!read_line(text)) return false;
  split_csv_line(text, cells_);
  return true;
}

void CsvRows::fail(const std::string& what) const {
  throw std::invalid_argument("trace line " + std::to_string(line_) + ": " + what);
}

const std::string& CsvRows::cell(int col, const char* name) const {
  if (col < 0 || col >= static_cast<int>(cells_.size())) fail(std::string("missing column ") + name);
  return cells_[static_cast<std::size_t>(col)];
}

double CsvRows::number(int col, const char* name) const {
  const std::string& text = cell(col, name);
  double value = 0;
  const char* end = text.data() + text.size();
  const auto [ptr, ec] = std::from_chars(text.data(), end, value);
  if (ec != std::errc() || ptr != end || !std::isfinite(value))
    fail(std::string("column ") + name + ": expected a number, got '" + text + "'");
  return value;
}

double CsvRows::seconds(int col, const char* name) const {
  const double value = number(col, name);
  if (!(value >= 0) || value > kMaxSeconds)
    fail(std::string("column ") + name + ": expected seconds from 0 to 1e12, got '" + cell(col, name) + "'");
  return value;
}

int64_t CsvRows::whole(int col, const char* name, int64_t min, int64_t max) const {
  const double value = number(col, name);
  if (!(value >= static_cast<double>(min)) || !(value <= static_cast<double>(max)) || std::floor(value) != value)
    fail(std::string("column ") + name + ": expected a whole number from " + std::to_string(min) + " to " +
         std::to_string(max) + ", got '" + cell(col, name) + "'");
  return static_cast<int64_t>(value);
}

}  // namespace cs::work
