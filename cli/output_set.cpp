#include "cli/output_set.hpp"

#include <cstdio>
#include <fstream>
#include <iostream>
#include <system_error>
#include <unistd.h>

#include "sim/scenario/input_error.hpp"

namespace fs = std::filesystem;
using cs::scenario::InputError;

namespace cs::cli {

OutputSet::OutputSet(fs::path dir, std::string dir_key, std::vector<fs::path> inputs)
    : dir_(std::move(dir)), inputs_(std::move(inputs)) {
  std::error_code ec;
  // The directories this set makes (removed again, when empty, if nothing is committed).
  for (fs::path p = fs::absolute(dir_, ec); !ec && !p.empty() && !fs::exists(p, ec); p = p.parent_path()) {
    created_dirs_.push_back(p);
    if (p == p.parent_path()) break;
  }
  fs::create_directories(dir_, ec);
  if (ec || !fs::is_directory(dir_)) {
    discard();
    throw InputError(dir_key, "a directory that can be created or written: " + dir_.string());
  }
}

OutputSet::~OutputSet() {
  if (!committed_) discard();
}

bool OutputSet::is_input(const fs::path& target) const {
  std::error_code ec;
  for (const fs::path& input : inputs_)
    if (fs::equivalent(target, input, ec) && !ec) return true;
  return false;
}

void OutputSet::plan(const std::string& name, const std::string& key) {
  if (name.empty() || name == "." || name == ".." || fs::path(name).filename() != fs::path(name))
    throw InputError(key, "a file name to write in " + dir_.string() + "; got \"" + name + "\"");
  for (const File& f : files_)
    if (f.name == name)
      throw InputError(key, "\"" + name + "\" is also the name of the output that " + f.key +
                                " gives: one would replace the other",
                       "choose another name");
  std::error_code ec;
  const fs::file_status status = fs::status(dir_ / name, ec);
  if (fs::exists(status) && !fs::is_regular_file(status))
    throw InputError(key, (dir_ / name).string() + " exists and is not a file (a directory?): it cannot be replaced");
  if (is_input(dir_ / name))
    throw InputError(key, (dir_ / name).string() + " is a file this run reads: writing it would replace the input",
                     "write the output somewhere else");
  // A temporary per process, so two runs into one directory do not write each other's. It is
  // created now: a directory the device or the permissions refuse is refused before any work.
  File file{name, key, dir_ / ("." + name + "." + std::to_string(::getpid()) + ".tmp"), false};
  const bool created = std::ofstream(file.tmp, std::ios::binary | std::ios::trunc).good();
  files_.push_back(std::move(file));
  if (!created)
    throw InputError(key, "cannot create a file in " + dir_.string() + " (read-only, full, or not a real directory)",
                     "write the output somewhere else");
}

OutputSet::File& OutputSet::find(const std::string& name) {
  for (File& f : files_)
    if (f.name == name) return f;
  throw std::logic_error("OutputSet: " + name + " was not planned");
}

void OutputSet::write(const std::string& name, const std::string& text) {
  File& f = find(name);
  f.written = true;
  std::ofstream out(f.tmp, std::ios::binary | std::ios::trunc);
  out << text;
  out.close();  // close() flushes: a full device fails here at the latest
  if (!out) {
    discard();
    throw OutputError("could not write " + (dir_ / name).string() + " (device full or not writable); no output written");
  }
}

void OutputSet::commit() {
  std::vector<const File*> renamed;
  for (const File& f : files_) {
    if (!f.written) continue;
    std::error_code ec;
    fs::rename(f.tmp, dir_ / f.name, ec);
    if (ec) {
      for (const File* done : renamed) fs::remove(dir_ / done->name, ec);
      discard();
      throw OutputError("could not write " + (dir_ / f.name).string() + ": " + ec.message() + "; no output written");
    }
    renamed.push_back(&f);
  }
  committed_ = true;
  for (const File& f : files_) {
    std::error_code ec;
    if (!f.written) fs::remove(f.tmp, ec);  // planned, but this run had nothing to put there
  }
}

void OutputSet::discard() {
  std::error_code ec;
  for (const File& f : files_) fs::remove(f.tmp, ec);  // every planned one was created
  for (const fs::path& d : created_dirs_)
    if (fs::is_empty(d, ec) && !ec) fs::remove(d, ec);
}

bool stdout_ok() {
  std::cout.flush();
  const bool cpp_ok = static_cast<bool>(std::cout);
  return std::fflush(stdout) == 0 && !std::ferror(stdout) && cpp_ok;
}

}  // namespace cs::cli
