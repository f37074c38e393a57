#pragma once
// The files of `clustersim run --out DIR` (and sweep's and plan's --out), written whole or not
// at all: every name is checked before the run (two outputs with one name, a name that is a
// directory, a file the run reads, a directory that cannot be written: an InputError at the key
// that gave it; its temporary is created then, so a write the device refuses is refused before
// any work), each file is written to its temporary, and only when every one was written
// completely are they renamed into place, as a set. Any failure (a full device, a closed
// descriptor, an interrupt) removes every temporary, the files already renamed by this set and
// the directories the set created (when empty), and throws OutputError naming the file.
#include <filesystem>
#include <stdexcept>
#include <string>
#include <vector>

namespace cs::cli {

// A write that failed (exit 1, not a user's input error).
class OutputError : public std::runtime_error {
 public:
  using std::runtime_error::runtime_error;
};

class OutputSet {
 public:
  // `dir` is created if missing; an InputError at `dir_key` if it cannot be or is not a directory.
  // `inputs`: the files the run reads (the scenario and what it references), never written over.
  OutputSet(std::filesystem::path dir, std::string dir_key, std::vector<std::filesystem::path> inputs = {});
  OutputSet(const OutputSet&) = delete;
  OutputSet& operator=(const OutputSet&) = delete;
  ~OutputSet();  // removes the temporaries unless commit() succeeded

  // Declares an output before the run: `name` (a file name in dir, no directory part) given by
  // `key` ("--out", "run.trace"). InputError at `key` when the name is empty or a directory
  // part, another output already has it, dir/name exists and is not a regular file or is one
  // of the inputs, or its temporary cannot be created in dir.
  void plan(const std::string& name, const std::string& key);
  // Writes `text` to the temporary of a planned output (OutputError on any failure).
  void write(const std::string& name, const std::string& text);
  // Renames every written temporary into place (OutputError on failure, after undoing).
  void commit();

 private:
  struct File {
    std::string name, key;
    std::filesystem::path tmp;
    bool written = false;
  };
  bool is_input(const std::filesystem::path& target) const;
  File& find(const std::string& name);
  void discard();

  std::filesystem::path dir_;
  std::vector<std::filesystem::path> inputs_;
  std::vector<std::filesystem::path> created_dirs_;  // by the constructor, deepest first
  std::vector<File> files_;
  bool committed_ = false;
};

// Flushes stdout (C and C++ streams): false when anything written to it was lost (a full
// device, a closed descriptor).
bool stdout_ok();

}  // namespace cs::cli
