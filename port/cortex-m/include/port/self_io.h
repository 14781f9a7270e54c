// port/self_io.h: the I/O of a self-attention forward in the board images:
// query, key and value all read `input` [L, E], the output goes to `output`.
#pragma once

template <typename Io, typename T>
Io port_self_io(const T* input, T* output) {
  Io io;
  io.query = input;
  io.key = input;
  io.value = input;
  io.output = output;
  return io;
}
