#include "sim/fleet/replications.hpp"

#include <stdexcept>

namespace cs::fleet {

std::vector<NamedStat> summarize(const std::vector<NamedNumbers>& replications) {
  std::vector<NamedStat> out;
  if (replications.empty()) return out;
  const NamedNumbers& first = replications.front();
  std::vector<double> values(replications.size());
  for (std::size_t k = 0; k < first.size(); ++k) {
    for (std::size_t r = 0; r < replications.size(); ++r) {
      const NamedNumbers& rep = replications[r];
      if (rep.size() != first.size() || rep[k].first != first[k].first)
        throw std::invalid_argument("summarize: replication " + std::to_string(r) +
                                    " has different numbers than replication 0");
      values[r] = rep[k].second;
    }
    out.push_back({first[k].first, engine::mean_ci95(values)});
  }
  return out;
}

std::vector<TrainingRunResult> run_training_replications(const TrainingRunConfig& config,
                                                         std::size_t replications, uint64_t seed,
                                                         int threads) {
  config.validate();  // once, in the caller's thread, before any replication starts
  return run_replications(replications, seed, threads,
                          [&config](uint64_t s) { return run_training(config, s); });
}

std::vector<NamedStat> summarize(const std::vector<TrainingRunResult>& results) {
  std::vector<NamedNumbers> numbers;
  numbers.reserve(results.size());
  for (const TrainingRunResult& r : results) numbers.push_back(r.summary_numbers());
  return summarize(numbers);
}

}  // namespace cs::fleet
