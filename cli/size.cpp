// `clustersim size`: --vary and --require -> the sizing search -> its result.
#include "cli/size.hpp"

#include <cstdio>
#include <unistd.h>

#include "cli/sweep.hpp"

namespace cs::cli {

using nlohmann::json;
using scenario::InputError;

studies::SizeAxis parse_vary(std::string_view arg) {
  const std::size_t eq = arg.find('=');
  const std::string given(arg);
  if (eq == std::string_view::npos)
    throw InputError("--vary", "'" + given + "' has no '='; expected PATH=V1,V2,... or PATH=LO..HI",
                     "e.g. fleet.autoscaler.replicas=4..40");
  const std::string path(arg.substr(0, eq));
  if (auto range = studies::integer_range(std::string(arg.substr(eq + 1)), path))
    return {path, std::move(*range)};
  try {
    GridAxis axis = parse_grid(arg);  // the list form, as --grid takes it
    return {axis.path, std::move(axis.values)};
  } catch (const InputError& e) {
    if (e.path() != "--grid") throw;
    throw InputError("--vary", e.expected(), e.hint());
  }
}

json run_size(const json& base, const std::vector<std::string>& varies, const std::vector<std::string>& requires_,
              const std::string& minimize, int jobs, std::size_t max_runs, int confirm) {
  std::vector<studies::SizeAxis> axes;
  for (const auto& v : varies) axes.push_back(parse_vary(v));
  studies::SizeOptions options;
  for (const auto& r : requires_) options.requirements.push_back(studies::parse_requirement(r, "--require"));
  options.minimize = minimize;
  options.max_runs = max_runs;
  options.confirm_replications = confirm;
  const bool bar = isatty(fileno(stderr));
  const json result = studies::size_search(base, std::move(axes), options, jobs, [bar](std::size_t done, std::size_t bound) {
    if (bar) std::fprintf(stderr, "\rsize: %zu runs (at most %zu before confirmations)", done, bound);
  });
  if (bar) std::fprintf(stderr, "\n");
  return result;
}

}  // namespace cs::cli
