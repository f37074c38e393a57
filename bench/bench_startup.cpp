// What every command pays before it starts: `clustersim validate` of a small scenario, and `run`
// of a small one (a 1 MiB all-reduce on one 8-GPU node), as whole processes, as a user runs
// them. Each is run `reps` times; the median wall time, the median CPU time (user + system, from
// the child's rusage: the steadier figure on a shared machine, where a busy core stretches the
// wall time) and the largest peak RSS are printed.
//
// Usage: bench_startup [--cli PATH] [--reps N]   (default: the clustersim beside bench/)
#include <fcntl.h>
#include <spawn.h>
#include <sys/resource.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <string>
#include <vector>

#include "bench/bench_util.hpp"

extern char** environ;

namespace {

struct Sample {
  double wall_s = 0;
  double cpu_s = 0;
  double peak_rss_mb = 0;
  int status = 0;
};

// One run of `argv` with stdout and stderr to /dev/null.
Sample run_once(const std::vector<std::string>& args) {
  std::vector<char*> argv;
  for (const std::string& a : args) argv.push_back(const_cast<char*>(a.c_str()));
  argv.push_back(nullptr);
  posix_spawn_file_actions_t actions;
  posix_spawn_file_actions_init(&actions);
  posix_spawn_file_actions_addopen(&actions, 1, "/dev/null", O_WRONLY, 0);
  posix_spawn_file_actions_addopen(&actions, 2, "/dev/null", O_WRONLY, 0);
  Sample s;
  const double start = cs::bench::wall_s();
  pid_t pid = 0;
  if (posix_spawn(&pid, argv[0], &actions, nullptr, argv.data(), environ) != 0) {
    std::perror("posix_spawn");
    std::exit(1);
  }
  rusage usage{};
  wait4(pid, &s.status, 0, &usage);
  s.wall_s = cs::bench::wall_s() - start;
  const auto seconds = [](const timeval& t) { return static_cast<double>(t.tv_sec) + 1e-6 * static_cast<double>(t.tv_usec); };
  s.cpu_s = seconds(usage.ru_utime) + seconds(usage.ru_stime);
  s.peak_rss_mb = static_cast<double>(usage.ru_maxrss) / 1024.0;
  posix_spawn_file_actions_destroy(&actions);
  return s;
}

void measure(const char* what, const std::vector<std::string>& args, int reps) {
  std::vector<double> wall, cpu;
  double rss = 0;
  for (int i = 0; i < reps; ++i) {
    const Sample s = run_once(args);
    if (!WIFEXITED(s.status) || WEXITSTATUS(s.status) != 0) {
      std::fprintf(stderr, "%s: exit status %d\n", what, s.status);
      std::exit(1);
    }
    wall.push_back(s.wall_s);
    cpu.push_back(s.cpu_s);
    rss = std::max(rss, s.peak_rss_mb);
  }
  std::printf("%-34s median %8.2f ms, CPU %7.2f ms   peak RSS %7.1f MB   (%d runs)\n", what,
              1e3 * cs::bench::median(wall), 1e3 * cs::bench::median(cpu), rss, reps);
  cs::bench::figure(std::string("startup/") + what, cs::bench::median(wall), "s", cs::bench::Better::lower);
  cs::bench::figure(std::string("startup/") + what + "/cpu", cs::bench::median(cpu), "s", cs::bench::Better::lower);
  cs::bench::figure(std::string("startup/") + what + "/peak_rss", rss, "MB", cs::bench::Better::lower);
}

}  // namespace

int main(int argc, char** argv) {
  std::string self = argv[0];
  std::string cli = self.substr(0, self.rfind('/') + 1) + "../clustersim";
  int reps = 21;
  for (int i = 1; i < argc; ++i) {
    if (std::strcmp(argv[i], "--cli") == 0 && i + 1 < argc) cli = argv[++i];
    else if (std::strcmp(argv[i], "--reps") == 0 && i + 1 < argc) reps = std::max(1, std::atoi(argv[++i]));
    else {
      std::fprintf(stderr, "usage: bench_startup [--cli PATH] [--reps N]\n");
      return 2;
    }
  }
  const std::string scenario = std::string(CS_SOURCE_DIR) + "/scenarios/single_node_allreduce.json";
  std::printf("startup of %s (single_node_allreduce.json)\n", cli.c_str());
  measure("clustersim schema", {cli, "schema"}, reps);
  measure("clustersim validate", {cli, "validate", scenario}, reps);
  measure("clustersim run --json", {cli, "run", scenario, "--json", "--set", "workload.sizes=[1048576]"}, reps);
  return 0;
}
