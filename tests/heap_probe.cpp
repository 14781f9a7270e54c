// Not part of attn: a library that uses the heap, to prove that the
// no-heap check (port/cmake/check_no_heap.cmake) catches it.
#include <cstdlib>

namespace attn_probe {

#if defined(ATTN_PROBE_MALLOC)
void* with_malloc(std::size_t n) { return std::malloc(n); }
#else
int* with_new() { return new int(1); }
#endif

}  // namespace attn_probe
