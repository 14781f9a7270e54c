# Fails when two ISA groups of the static library LIB define the same weak
# function. On x86-64 each ISA's kernel files are compiled with their own
# flags (*_avx2.cpp, *_avx512vnni.cpp; the rest is baseline): an inline
# function emitted by two groups is one symbol to the linker, which keeps
# one copy, so baseline code could call a copy with AVX2 (or AVX-512) code
# in it and fault on a CPU without that ISA. Data (weak objects) is the same
# bytes whatever the flags and is not checked.
# Run as: cmake -DNM=<nm> -DLIB=<libattn.a> -P check_isa_symbols.cmake
cmake_minimum_required(VERSION 3.20)
execute_process(COMMAND ${NM} -A --defined-only ${LIB} OUTPUT_VARIABLE defined RESULT_VARIABLE rc
                ERROR_QUIET)
if(NOT rc EQUAL 0)
  message(FATAL_ERROR "check_isa_symbols: '${NM} -A --defined-only ${LIB}' failed")
endif()
string(REPLACE "\n" ";" lines "${defined}")
set(seen "")  # "symbol group" pairs
foreach(line IN LISTS lines)
  # libattn.a:object.o: address W symbol
  if(NOT line MATCHES "^[^:]*:([^:]*):[ \t]*[0-9a-fA-F]*[ \t]+W[ \t]+(.*)$")
    continue()
  endif()
  set(object "${CMAKE_MATCH_1}")
  set(symbol "${CMAKE_MATCH_2}")
  set(group baseline)
  if(object MATCHES "_avx2\\.cpp")
    set(group avx2)
  elseif(object MATCHES "_avx512vnni\\.cpp")
    set(group avx512vnni)
  endif()
  list(APPEND seen "${symbol} ${group}")
endforeach()
list(REMOVE_DUPLICATES seen)
set(symbols "")
set(bad "")
foreach(entry IN LISTS seen)
  string(REGEX REPLACE " [^ ]+$" "" symbol "${entry}")
  if(symbol IN_LIST symbols)
    list(APPEND bad "${symbol}")
  endif()
  list(APPEND symbols "${symbol}")
endforeach()
if(bad)
  list(REMOVE_DUPLICATES bad)
  message(FATAL_ERROR "libattn: these inline functions are compiled for two ISAs (give them internal "
                      "linkage or one ISA's namespace): ${bad}")
endif()
