# Writes OUT, a C++ file defining `const char NAME[]` (NUL-terminated) and
# `const unsigned long NAME_size` with the bytes of IN: a file the binary serves.
file(READ "${IN}" hex HEX)
string(REGEX REPLACE "([0-9a-f][0-9a-f])" "0x\\1," bytes "${hex}")
string(REGEX REPLACE "(0x..,0x..,0x..,0x..,0x..,0x..,0x..,0x..,0x..,0x..,0x..,0x..,0x..,0x..,0x..,0x..,)" "\\1\n" bytes "${bytes}")
string(LENGTH "${hex}" n)
math(EXPR n "${n} / 2")
file(WRITE "${OUT}.tmp" "// Generated from ${IN} by cmake/embed.cmake.\nextern const char ${NAME}[];\nextern const unsigned long ${NAME}_size;\nconst char ${NAME}[] = {\n${bytes}0x00};\nconst unsigned long ${NAME}_size = ${n};\n")
file(COPY_FILE "${OUT}.tmp" "${OUT}" ONLY_IF_DIFFERENT)
file(REMOVE "${OUT}.tmp")
