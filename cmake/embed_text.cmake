# Writes OUT: a C++ source defining NAMESPACE::NAME() (default cs::scenario::schema_text) that
# returns the contents of the file IN. Used for scenarios/schema.json, data/prices.json and
# data/nccl_tuning.json (cs::net). The bytes go in as an array, not a string literal: compilers need
# only support literals up to 64 KiB, and the schema is larger.
if(NOT DEFINED NAME)
  set(NAME schema_text)
endif()
if(NOT DEFINED NAMESPACE)
  set(NAMESPACE cs::scenario)
endif()
get_filename_component(in_name "${IN}" NAME)
file(READ "${IN}" hex HEX)
string(REGEX REPLACE "([0-9a-f][0-9a-f])" "0x\\1," bytes "${hex}")
file(WRITE "${OUT}" "// Generated from ${in_name}. Do not edit.\n#include <string_view>\nnamespace ${NAMESPACE} {\nstd::string_view ${NAME}() {\n  static constexpr unsigned char bytes[] = {${bytes}};\n  return {reinterpret_cast<const char*>(bytes), sizeof(bytes)};\n}\n}  // namespace ${NAMESPACE}\n")
