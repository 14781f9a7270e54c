# attn_matching_symbols(NM_OUTPUT PATTERN OUT_VAR): the symbol names in `nm`
# output ("<address> <type> <name>", or "U <name>" from nm -u) that match
# PATTERN, each once: the link checks' one parser (check_no_heap.cmake,
# tests/cmake/check_no_float.cmake).
function(attn_matching_symbols nm_output pattern out_var)
  string(REPLACE "\n" ";" lines "${nm_output}")
  set(found "")
  foreach(line IN LISTS lines)
    string(STRIP "${line}" name)
    if(name MATCHES "^([0-9a-fA-F]+[ \t]+)?[A-Za-z][ \t]+(.+)$")
      set(name "${CMAKE_MATCH_2}")
    endif()
    if(name MATCHES "${pattern}")
      list(APPEND found "${name}")
    endif()
  endforeach()
  if(found)
    list(REMOVE_DUPLICATES found)
  endif()
  set(${out_var} "${found}" PARENT_SCOPE)
endfunction()
