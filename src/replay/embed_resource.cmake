# Embeds a resource file into the build as a C++ char array (no runtime file lookup).
#   cmake -DIN=report_template.html -DOUT=report_template.cc -DNAME=kReportTemplate
#         -DNAMESPACE=phalanx::replay -P embed_resource.cmake
# OUT defines, in NAMESPACE,
#   extern const char NAME[];            the bytes of IN followed by a NUL
#   extern const std::size_t NAME_size;  the number of bytes of IN (without the NUL)
# Run by the build (src/CMakeLists.txt, add_custom_command) whenever IN changes.
file(READ "${IN}" hex HEX)
string(LENGTH "${hex}" hex_len)
math(EXPR size "${hex_len} / 2")
# 16 bytes a line: a newline after every 32 hex digits, then each byte as "0x..,".
string(REPEAT "[0-9a-f]" 32 line_of_hex)
string(REGEX REPLACE "(${line_of_hex})" "\\1\n" hex "${hex}")
string(REGEX REPLACE "([0-9a-f][0-9a-f])" "0x\\1," bytes "${hex}")
get_filename_component(in_name "${IN}" NAME)
file(WRITE "${OUT}.tmp"
  "// Generated from ${in_name} by embed_resource.cmake; do not edit.\n"
  "#include <cstddef>\n\n"
  "namespace ${NAMESPACE} {\n\n"
  "extern const char ${NAME}[];\n"
  "extern const std::size_t ${NAME}_size;\n"
  "const char ${NAME}[] = {\n${bytes}0x00};\n"
  "const std::size_t ${NAME}_size = ${size};\n\n"
  "}  // namespace ${NAMESPACE}\n")
# Only touch OUT when it changed, so that an unchanged resource recompiles nothing.
file(COPY_FILE "${OUT}.tmp" "${OUT}" ONLY_IF_DIFFERENT)
file(REMOVE "${OUT}.tmp")
