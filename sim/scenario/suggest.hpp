#pragma once
// Did-you-mean: the candidate nearest to a misspelled word.
#include <cstddef>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

namespace cs::scenario {

// Optimal-string-alignment (Damerau-Levenshtein without substring moves) distance,
// ASCII case-insensitive. Words longer than kMaxSuggestLength are not compared (returns
// a large distance) so hostile input costs nothing.
inline constexpr std::size_t kMaxSuggestLength = 256;
std::size_t edit_distance(std::string_view a, std::string_view b);

// The shortest candidate that starts with `word` (case-insensitive; the first on a tie); else
// the nearest candidate when it is close enough: distance <= max(2, len(word) / 3) and less
// than half the longer word. Ties go to the earlier candidate. nullopt when none is close or
// `word` is a candidate.
std::optional<std::string> nearest(std::string_view word, const std::vector<std::string>& candidates);

// "did you mean \"x\"?" or "" when nothing is close.
std::string did_you_mean(std::string_view word, const std::vector<std::string>& candidates);

// "\"a\", \"b\", \"c\"": the candidates quoted and joined, for "expected one of ...".
std::string quoted_list(const std::vector<std::string>& candidates);

}  // namespace cs::scenario
