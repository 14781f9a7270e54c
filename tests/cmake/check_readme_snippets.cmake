# Compile the README's C++ and C library examples (the first block of each
# language under "Using the library"), so that the code a user copies first
# cannot rot. Run by ctest:
#   cmake -DROOT=<repo> -DOUT=<dir> -DCXX=<c++> -DCC=<cc> -DATTN=<attn tools binary>
#         -P check_readme_snippets.cmake
# The C example includes the header `attn emit-c` writes: made here from an
# s8 decoder fixture, with the --name the example's comment gives.
file(READ ${ROOT}/README.md readme)
# The README stays a front page: at most 200 lines, the rest lives in the guides.
string(REGEX MATCHALL "\n" readme_newlines "${readme}")
list(LENGTH readme_newlines readme_line_count)
if(readme_line_count GREATER 200)
  message(FATAL_ERROR "README.md has ${readme_line_count} lines (at most 200: move detail into a guide)")
endif()
file(MAKE_DIRECTORY ${OUT})
string(REGEX MATCH "#include \"model.h\" /\\* attn emit-c [^*]*--name ([A-Za-z_0-9]+)" emit_line "${readme}")
if(NOT emit_line)
  message(FATAL_ERROR "README.md's C example: no '#include \"model.h\" /* attn emit-c ... --name NAME' line")
endif()
# The fixture has 12 positions: its own call and cache sizes, the README's name.
execute_process(COMMAND ${ATTN} emit-c ${ROOT}/tests/data/int_models/llama1_tied.s8.attn -o ${OUT}/model.h
                        --name ${CMAKE_MATCH_1} --tokens-per-call 4 --capacity 12
                RESULT_VARIABLE rc OUTPUT_VARIABLE out ERROR_VARIABLE err)
if(NOT rc EQUAL 0)
  message(FATAL_ERROR "attn emit-c for README.md's C example failed:\n${out}${err}")
endif()
foreach(lang cpp c)
  # The first fenced block of the language in "Using the library".
  string(FIND "${readme}" "## Using the library" start)
  string(SUBSTRING "${readme}" ${start} -1 section)
  string(FIND "${section}" "```${lang}\n" open)
  if(open EQUAL -1)
    message(FATAL_ERROR "README.md: no ```${lang} block under 'Using the library'")
  endif()
  string(LENGTH "```${lang}\n" fence)
  math(EXPR open "${open} + ${fence}")
  string(SUBSTRING "${section}" ${open} -1 rest)
  string(FIND "${rest}" "```" close)
  string(SUBSTRING "${rest}" 0 ${close} code)
  if(lang STREQUAL "cpp")
    set(src ${OUT}/readme_example.cpp)
    set(cmd ${CXX} -std=c++17 -Wall -Wextra -Werror -I${ROOT}/include -c ${src} -o ${OUT}/readme_cpp.o)
  else()
    set(src ${OUT}/readme_example.c)
    set(cmd ${CC} -std=c99 -Wall -Wextra -Wpedantic -Werror -I${ROOT}/include -I${OUT} -c ${src}
            -o ${OUT}/readme_c.o)
  endif()
  file(WRITE ${src} "${code}")
  execute_process(COMMAND ${cmd} RESULT_VARIABLE rc OUTPUT_VARIABLE out ERROR_VARIABLE err)
  if(NOT rc EQUAL 0)
    message(FATAL_ERROR "README.md's ${lang} example does not compile:\n${out}${err}")
  endif()
  message(STATUS "README.md's ${lang} example compiles")
endforeach()
