#include "sim/network/collective_benchmark.hpp"

#include <algorithm>
#include <string>


namespace cs::net {

std::vector<GroupId> register_groups(Comm& comm, const work::CollectiveSpec& spec) {
  std::vector<std::vector<int>> groups;
  try {
    groups = work::collective_groups(spec, comm.ranks());
  } catch (const std::invalid_argument& e) {
    throw CommError("groups", e.what());
  }
  std::vector<GroupId> ids;
  ids.reserve(groups.size());
  for (const auto& members : groups) ids.push_back(comm.group(members, spec.channels));
  return ids;
}

void check_collective(Comm& comm, const work::CollectiveSpec& spec) {
  for (GroupId g : register_groups(comm, spec))
    for (work::CollectiveAlgorithm a : spec.algorithms) {
      CollectiveOptions options;
      options.algorithm = a;
      comm.choose(g, spec.op, spec.sizes_bytes.front(), options);  // builds the plans it needs
    }
}

BenchmarkResult run_collective_benchmark(Comm& comm, engine::Simulator& sim, const work::CollectiveSpec& spec,
                                         double until_s) {
  BenchmarkResult out;
  const std::vector<GroupId> groups = register_groups(comm, spec);
  out.groups = groups.size();
  out.group_size = static_cast<int>(comm.members(groups.front()).size());
  const double until = until_s > 0 ? until_s : engine::kForever;
  for (work::CollectiveAlgorithm requested : spec.algorithms) {
    for (double bytes : spec.sizes_bytes) {
      if (out.sizes_not_run > 0) {  // until came first: the remaining sizes are not run
        ++out.sizes_not_run;
        continue;
      }
      CollectiveOptions options;
      options.algorithm = requested;
      const CollectiveChoice choice = comm.choose(groups.front(), spec.op, bytes, options);
      const double t0 = sim.now();
      std::size_t done = 0;
      double fastest = engine::kForever;
      for (GroupId g : groups)
        comm.collective(g, spec.op, bytes, [&] {
          fastest = std::min(fastest, sim.now() - t0);
          if (++done == groups.size()) sim.stop();
        }, options);
      sim.run(until);
      if (done < groups.size()) {
        out.sizes_not_run = 1;
        continue;
      }
      const double t = sim.now() - t0;
      sim.recorder().trace_complete(std::string(work::to_string(spec.op)) + " " +
                                        std::string(work::to_string(choice.algorithm)) + " " +
                                        std::to_string(static_cast<long long>(bytes)) + " B",
                                    "collective", 0, 0, t0, t);
      out.rows.push_back({bytes, t, fastest, requested, choice});
    }
  }
  return out;
}

}  // namespace cs::net
