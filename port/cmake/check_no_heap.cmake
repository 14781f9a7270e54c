# Fails when the static library LIB references a heap or exception symbol.
# Run as: cmake -DNM=<nm> -DLIB=<libattn.a> -P check_no_heap.cmake
execute_process(COMMAND ${NM} -u ${LIB} OUTPUT_VARIABLE undefined RESULT_VARIABLE rc)
if(NOT rc EQUAL 0)
  message(FATAL_ERROR "check_no_heap: '${NM} -u ${LIB}' failed")
endif()
# malloc family, C++ operator new/delete (Itanium mangling: _Znw*, _Zna*, _Zdl*, _Zda*),
# exceptions, and the iostream/printf machinery.
set(pattern "(^|[ \t])(malloc|calloc|realloc|free|aligned_alloc|posix_memalign|_Znw[jm].*|_Zna[jm].*|_Zdl[Pv].*|_Zda[Pv].*|__cxa_throw|__cxa_allocate_exception|__cxa_begin_catch|printf|puts|fopen|_ZSt4cout|_ZNSt8ios_base4InitC1Ev)$")
include(${CMAKE_CURRENT_LIST_DIR}/symbols.cmake)
attn_matching_symbols("${undefined}" "${pattern}" bad)
if(bad)
  message(FATAL_ERROR "libattn must not use the heap, exceptions or stdio, but references: ${bad}")
endif()
