/* syscalls.c: the libc heap. attn and the port never allocate, but
 * newlib-nano's stdio does (buffers, %f), so images keep a small heap between
 * __heap_start and __heap_end (sections.ld) for libc alone. This _sbrk
 * replaces rdimon's, which trusts a heap limit the debugger would set. */
#include <errno.h>
#include <stddef.h>
#include <stdint.h>

extern char __heap_start[], __heap_end[];

void* _sbrk(ptrdiff_t increment) {
  static char* brk = __heap_start;
  if (increment > __heap_end - brk || increment < __heap_start - brk) {
    errno = ENOMEM;
    return (void*)-1;
  }
  char* old = brk;
  brk += increment;
  return old;
}
