#include "sim/scenario/suggest.hpp"

#include <algorithm>
#include <cctype>
#include <limits>

namespace cs::scenario {
namespace {
char lower(char c) { return static_cast<char>(std::tolower(static_cast<unsigned char>(c))); }
}  // namespace

std::size_t edit_distance(std::string_view a, std::string_view b) {
  if (a.size() > kMaxSuggestLength || b.size() > kMaxSuggestLength)
    return std::numeric_limits<std::size_t>::max() / 2;
  const std::size_t n = a.size(), m = b.size();
  // Three rows: i-2, i-1, i.
  std::vector<std::size_t> prev2(m + 1), prev(m + 1), cur(m + 1);
  for (std::size_t j = 0; j <= m; ++j) prev[j] = j;
  for (std::size_t i = 1; i <= n; ++i) {
    cur[0] = i;
    for (std::size_t j = 1; j <= m; ++j) {
      const std::size_t cost = lower(a[i - 1]) == lower(b[j - 1]) ? 0 : 1;
      cur[j] = std::min({prev[j] + 1, cur[j - 1] + 1, prev[j - 1] + cost});
      if (i > 1 && j > 1 && lower(a[i - 1]) == lower(b[j - 2]) && lower(a[i - 2]) == lower(b[j - 1]))
        cur[j] = std::min(cur[j], prev2[j - 2] + 1);
    }
    std::swap(prev2, prev);
    std::swap(prev, cur);
  }
  return prev[m];
}

std::optional<std::string> nearest(std::string_view word, const std::vector<std::string>& candidates) {
  if (word.size() > kMaxSuggestLength) return std::nullopt;
  for (const auto& c : candidates)
    if (c == word) return std::nullopt;
  // The shortest candidate that extends the word, the first on a tie ("gpu" -> "gpus", "H100"
  // -> "H100-SXM" rather than "H100-PCIe", "link" -> "link_bandwidth").
  const std::string* prefixed = nullptr;
  if (word.size() >= 2)
    for (const auto& c : candidates)
      if (c.size() > word.size() && edit_distance(word, std::string_view(c).substr(0, word.size())) == 0 &&
          (!prefixed || c.size() < prefixed->size()))
        prefixed = &c;
  if (prefixed) return *prefixed;
  // Else the nearest spelling, if close: within max(2, len/3) edits, and fewer edits than
  // half the longer word (so "H100" does not become "B200").
  const std::size_t limit = std::max<std::size_t>(2, word.size() / 3);
  std::optional<std::string> best;
  std::size_t best_distance = limit + 1;
  for (const auto& c : candidates) {
    const std::size_t d = edit_distance(word, c);
    if (d < best_distance && 2 * d < std::max(word.size(), c.size())) {
      best_distance = d;
      best = c;
    }
  }
  return best;
}

std::string did_you_mean(std::string_view word, const std::vector<std::string>& candidates) {
  auto n = nearest(word, candidates);
  return n ? "did you mean \"" + *n + "\"?" : std::string();
}

std::string quoted_list(const std::vector<std::string>& candidates) {
  std::string s;
  for (std::size_t i = 0; i < candidates.size(); ++i) {
    if (i) s += ", ";
    s += "\"" + candidates[i] + "\"";
  }
  return s;
}

}  // namespace cs::scenario
