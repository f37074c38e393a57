# Writes OUT: a C++ source defining cs::scenario::schema_text() with the contents of IN.
file(READ "${IN}" content)
file(WRITE "${OUT}" "// Generated from scenarios/schema.json. Do not edit.\n#include <string_view>\nnamespace cs::scenario {\nstd::string_view schema_text() {\n  static constexpr char text[] = R\"cs_schema(${content})cs_schema\";\n  return {text, sizeof(text) - 1};\n}\n}  // namespace cs::scenario\n")
