# Writes OUT: a C++ source defining cs::scenario::NAME() (default schema_text) that returns
# the contents of the file IN. Used for scenarios/schema.json, data/prices.json and
# data/nccl_tuning.json. The bytes go in as an array, not a string literal: compilers need
# only support literals up to 64 KiB, and the schema is larger.
if(NOT DEFINED NAME)
  set(NAME schema_text)
endif()
get_filename_component(in_name "${IN}" NAME)
file(READ "${IN}" hex HEX)
string(REGEX REPLACE "([0-9a-f][0-9a-f])" "0x\\1," bytes "${hex}")
file(WRITE "${OUT}" "// Generated from ${in_name}. Do not edit.\n#include <string_view>\nnamespace cs::scenario {\nstd::string_view ${NAME}() {\n  static constexpr unsigned char bytes[] = {${bytes}};\n  return {reinterpret_cast<const char*>(bytes), sizeof(bytes)};\n}\n}  // namespace cs::scenario\n")
