# Writes OUT: a C++ source defining NAMESPACE::NAME() that returns the contents of the file IN
# (the scenario layer's embed_schema.cmake, with the namespace as a parameter so that a library
# other than cs_scenario can embed its data). The bytes go in as an array, not a string literal:
# compilers need only support literals up to 64 KiB.
get_filename_component(in_name "${IN}" NAME)
file(READ "${IN}" hex HEX)
string(REGEX REPLACE "([0-9a-f][0-9a-f])" "0x\\1," bytes "${hex}")
file(WRITE "${OUT}" "// Generated from ${in_name}. Do not edit.\n#include <string_view>\nnamespace ${NAMESPACE} {\nstd::string_view ${NAME}() {\n  static constexpr unsigned char bytes[] = {${bytes}};\n  return {reinterpret_cast<const char*>(bytes), sizeof(bytes)};\n}\n}  // namespace ${NAMESPACE}\n")
