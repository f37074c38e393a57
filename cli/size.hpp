#pragma once
// `clustersim size`: its --vary and --require options parsed for the sizing search
// (sim/studies/size_search.hpp), which Python's clustersim.size runs too.
#include <string>
#include <string_view>
#include <vector>

#include "sim/studies/size_search.hpp"

namespace cs::cli {

// "PATH=LO..HI" (whole numbers: a range the search bisects) or "PATH=V1,V2,..." (as --grid
// takes them). InputError at --vary otherwise.
studies::SizeAxis parse_vary(std::string_view arg);

// The search on `jobs` threads, its progress on stderr (one line, rewritten after each round,
// when stderr is a terminal; else nothing). Returns the result JSON (SizeSearch::result).
nlohmann::json run_size(const nlohmann::json& base, const std::vector<std::string>& varies,
                        const std::vector<std::string>& requires_, const std::string& minimize, int jobs,
                        std::size_t max_runs, int confirm);

}  // namespace cs::cli
