#include "sim/network/background_load.hpp"

#include "sim/network/collective_benchmark.hpp"

namespace cs::net {

void BackgroundLoad::add_collective(const work::CollectiveSpec& spec) {
  auto loop = std::make_unique<Loop>();
  loop->spec = spec;
  check_collective(comm_, spec);
  loop->groups = register_groups(comm_, spec);
  loop->next.assign(loop->groups.size(), 0);
  loops_.push_back(std::move(loop));
}

void BackgroundLoad::add_traffic(std::vector<work::FlowSpec> flows) {
  traffic_.push_back(std::make_unique<TrafficRun>(comm_, sim_, std::move(flows)));
}

void BackgroundLoad::start() {
  for (auto& t : traffic_) t->start();
  for (auto& loop : loops_)
    for (std::size_t g = 0; g < loop->groups.size(); ++g) launch(*loop, g);
}

void BackgroundLoad::launch(Loop& loop, std::size_t g) {
  const auto& sizes = loop.spec.sizes_bytes;
  const double bytes = sizes[loop.next[g]++ % sizes.size()];
  const double t0 = sim_.now();
  CollectiveOptions options;
  options.algorithm = loop.spec.algorithms.front();
  comm_.collective(loop.groups[g], loop.spec.op, bytes, [this, &loop, g, t0] {
    ++loop.completed;
    loop.time_sum += sim_.now() - t0;
    if (!stopped_) launch(loop, g);
  }, options);
}

std::vector<BackgroundLoad::LoopStats> BackgroundLoad::collectives() const {
  std::vector<LoopStats> out;
  for (const auto& loop : loops_)
    out.push_back({loop->spec.op, loop->groups.size(), loop->completed,
                   loop->completed ? loop->time_sum / static_cast<double>(loop->completed) : 0.0});
  return out;
}

}  // namespace cs::net
