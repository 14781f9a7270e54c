/* main.c: one int8 attention forward in C firmware. The model is the header
 * `attn emit-c` wrote (the .attn file as a const array in flash, and
 * MODEL_ARENA_BYTES); the input is made here; the output bytes and the stack
 * this used are printed. */
#include "attn/attn.h"
#include "model.h" /* generated: attn emit-c MODEL.attn -o model.h --name model --max-L ROWS */

#ifndef ROWS
#define ROWS 16 /* query rows (= keys: self-attention); the Makefile passes the same to --max-L */
#endif
#define MAX_E 64 /* widest block this firmware takes */

void board_write(const char* s);                /* startup.c */
extern uint32_t __stack_limit[], __stack_top[]; /* link.ld */

static ATTN_ALIGNED_ARENA uint8_t arena[MODEL_ARENA_BYTES];
static int8_t x[ROWS * MAX_E], y[ROWS * MAX_E];
static attn_model handle; /* handles are storage you own */

/* Bytes of stack used so far: startup.c painted it with 0xC0DEC0DE. */
static uint32_t stack_used(void) {
  const uint32_t* p = __stack_limit;
  while (p < __stack_top && *p == 0xC0DEC0DEu) ++p;
  return (uint32_t)((const uint8_t*)__stack_top - (const uint8_t*)p);
}

static void write_u32(uint32_t v) {
  char buf[11];
  int i = 10;
  buf[i] = 0;
  do {
    buf[--i] = (char)('0' + v % 10u);
    v /= 10u;
  } while (v != 0u);
  board_write(buf + i);
}

/* One line per row: "NAME ROW: b0 b1 ..." with each int8 as two hex digits. */
static void write_rows(const char* name, const int8_t* v, int32_t rows, int32_t cols) {
  char line[3 * MAX_E + 2];
  for (int32_t r = 0; r < rows; ++r) {
    char* p = line;
    for (int32_t c = 0; c < cols; ++c) {
      const uint8_t b = (uint8_t)v[r * cols + c];
      *p++ = ' ';
      *p++ = "0123456789abcdef"[b >> 4];
      *p++ = "0123456789abcdef"[b & 15u];
    }
    *p++ = '\n';
    *p = 0;
    board_write(name);
    board_write(" ");
    write_u32((uint32_t)r);
    board_write(":");
    board_write(line);
  }
}

static attn_status run(void) {
  attn_block_info info;
  attn_weights_s8 w;
  attn_plan plan;
  attn_mask mask = {0};
  attn_io_s8 io;
  attn_kernel_set_info kernels;
  size_t need;
  uint32_t state = 12345u;
  int32_t i, n;

  ATTN_CHECK(attn_model_load(&handle, model, MODEL_SIZE)); /* checks the whole blob once */
  ATTN_CHECK(attn_model_block(&handle, 0, &info));
  if (info.dtype != ATTN_DTYPE_S8 || info.config.embed_dim > MAX_E) return ATTN_ERR_BAD_DTYPE;
  ATTN_CHECK(attn_model_block_weights_s8(&handle, 0, &w)); /* pointers into the blob */
  ATTN_CHECK(attn_plan_init(&plan, &info.config, ATTN_DTYPE_S8, ROWS, ROWS, 0));
  ATTN_CHECK(attn_plan_arena_bytes(&plan, &need));
  if (need > sizeof arena) return ATTN_ERR_ARENA_TOO_SMALL;

  /* The input: int8 in the block's query quantization (attn_model_block_io
   * gives its scale and zero point; attn_quantize_s8 converts float data).
   * Here a fixed pseudo-random sequence in [-64, 63]. */
  n = ROWS * info.config.embed_dim;
  for (i = 0; i < n; ++i) {
    state = state * 1664525u + 1013904223u;
    x[i] = (int8_t)((int32_t)(state >> 25) - 64);
  }
  io.query = x;
  io.key = x;
  io.value = x; /* self-attention */
  io.output = y;
  io.query_position = 0;
  mask.causal = 1;
  ATTN_CHECK(attn_forward_s8(&plan, &w, &mask, &io, arena, sizeof arena));

  ATTN_CHECK(attn_kernel_set(ATTN_DTYPE_S8, &kernels));
  board_write("attn c-firmware: L=S=");
  write_u32(ROWS);
  board_write(" E=");
  write_u32((uint32_t)info.config.embed_dim);
  board_write(" causal, arena ");
  write_u32((uint32_t)need);
  board_write(" of ");
  write_u32((uint32_t)sizeof arena);
  board_write(" bytes, model ");
  write_u32(MODEL_SIZE);
  board_write(" bytes, kernels ");
  board_write(kernels.linear);
  board_write("\n");
  write_rows("x", x, ROWS, info.config.embed_dim);
  write_rows("y", y, ROWS, info.config.embed_dim);
  return ATTN_OK;
}

int main(void) {
  const attn_status st = run();
  const uint32_t stack = stack_used(); /* the deepest point so far: in the forward */
  if (st != ATTN_OK) {
    board_write("attn c-firmware: ");
    board_write(attn_status_name(st));
    board_write("\n");
    return 1;
  }
  board_write("stack: ");
  write_u32(stack);
  board_write(" bytes\n");
  return 0;
}
