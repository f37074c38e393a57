# Writes OUT: a C++ source defining cs::scenario::NAME() (default schema_text) that returns
# the contents of the JSON file IN. Used for scenarios/schema.json and data/prices.json.
if(NOT DEFINED NAME)
  set(NAME schema_text)
endif()
get_filename_component(in_name "${IN}" NAME)
file(READ "${IN}" content)
file(WRITE "${OUT}" "// Generated from ${in_name}. Do not edit.\n#include <string_view>\nnamespace cs::scenario {\nstd::string_view ${NAME}() {\n  static constexpr char text[] = R\"cs_json(${content})cs_json\";\n  return {text, sizeof(text) - 1};\n}\n}  // namespace cs::scenario\n")
