# check_umbrella.cmake: attn/attn.hpp includes every public C++ header, so
# that "the whole C++ API" stays true when a header is added. Left out on
# purpose: attn.h (the C API), quantize.h and tokenizer_build.h (host-only
# tooling, the attn_quant target) and the X-macro lists status_list.h and
# role_list.h (through status.h and model.h).
#   cmake -DROOT=<repo> -P check_umbrella.cmake
file(READ ${ROOT}/include/attn/attn.hpp umbrella)
file(GLOB headers RELATIVE ${ROOT}/include ${ROOT}/include/attn/*.h)
set(missing "")
foreach(h IN LISTS headers)
  if(h MATCHES "^attn/(attn|quantize|tokenizer_build|status_list|role_list)\\.h$")
    continue()
  endif()
  string(FIND "${umbrella}" "#include \"${h}\"" at)
  if(at EQUAL -1)
    list(APPEND missing ${h})
  endif()
endforeach()
if(missing)
  message(FATAL_ERROR "include/attn/attn.hpp does not include: ${missing}")
endif()
message(STATUS "include/attn/attn.hpp includes every public C++ header")
