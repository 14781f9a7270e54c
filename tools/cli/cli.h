// cli.h: what the `attn` subcommands share: errors, arguments, file IO,
// loading a model. One subcommand per cmd_<name>.cpp; main.cpp lists them.
#pragma once

#include <cstddef>
#include <cstdint>
#include <map>
#include <memory>
#include <new>
#include <set>
#include <stdexcept>
#include <string>
#include <utility>
#include <vector>

#include "attn/model.h"
#include "cli/npy.h"

namespace attn {
namespace cli {

// A user-facing problem: main() prints "attn <cmd>: <what>" and exits 1.
// The message names the file (or option) and the problem.
struct Error : std::runtime_error {
  using std::runtime_error::runtime_error;
};

// Command-line options: `valued` take the next argument (--heads 4 or
// --heads=4), `flags` take none; any other "--x" is an error; the rest are
// positional. Repeated valued options keep every value.
class Args {
 public:
  Args(int argc, char** argv, const std::set<std::string>& valued, const std::set<std::string>& flags);
  bool has(const std::string& opt) const { return values_.count(opt) != 0 || flags_.count(opt) != 0; }
  std::string get(const std::string& opt, const std::string& fallback = "") const;
  std::vector<std::string> all(const std::string& opt) const;
  std::string required(const std::string& opt) const;
  // Integer option in [lo, hi]; `fallback` when absent.
  long long get_int(const std::string& opt, long long fallback, long long lo, long long hi) const;
  const std::vector<std::string>& positional() const { return positional_; }
  // Exactly one positional argument (the input file).
  std::string one_input(const char* what) const;
  // The output path: -o or --output (required), through check_output_path.
  std::string output() const;

 private:
  std::map<std::string, std::vector<std::string>> values_;
  std::set<std::string> flags_;
  std::vector<std::string> positional_;
};

// A byte buffer aligned to 16, as the loader wants a blob.
class AlignedBytes {
 public:
  AlignedBytes() = default;
  explicit AlignedBytes(size_t n);
  uint8_t* data() { return p_.get(); }
  const uint8_t* data() const { return p_.get(); }
  size_t size() const { return n_; }

 private:
  struct Free {
    void operator()(uint8_t* p) const { ::operator delete (p, std::align_val_t{16}); }
  };
  std::unique_ptr<uint8_t, Free> p_;
  size_t n_ = 0;
};

// Whole file; Error "PATH: cannot open (reason)" etc. Only regular files:
// a directory, device, FIFO or socket is refused, as is a file larger than
// the machine's memory (memory_limit()). With max_bytes, a larger file is
// refused before it is read: "PATH: N bytes, more than the <max_what>".
std::vector<uint8_t> read_file(const std::string& path);
std::vector<uint8_t> read_file(const std::string& path, uint64_t max_bytes, const char* max_what);
// A regular file mapped read-only: only the pages read are loaded (a
// safetensors header is checked before its tensors are touched). With
// `populate`, every page is read ahead in the one mmap call (MAP_POPULATE),
// for a caller that reads the whole file anyway (a model's CRC): one system
// call instead of a page fault per few pages. A mapping starts on a page
// boundary, more than any alignment the loader asks for. An empty file maps
// nothing: data() is null, size() 0.
class MappedFile {
 public:
  MappedFile() = default;
  explicit MappedFile(const std::string& path, bool populate = false);
  ~MappedFile();
  MappedFile(const MappedFile&) = delete;
  MappedFile& operator=(const MappedFile&) = delete;
  MappedFile(MappedFile&& o) noexcept { swap(o); }
  MappedFile& operator=(MappedFile&& o) noexcept {
    swap(o);
    return *this;
  }
  const uint8_t* data() const { return data_; }
  size_t size() const { return size_; }

 private:
  void swap(MappedFile& o) noexcept {
    std::swap(data_, o.data_);
    std::swap(size_, o.size_);
  }
  const uint8_t* data_ = nullptr;
  size_t size_ = 0;
};

// The physical memory size: no file or declared data size beyond it is read,
// and no output larger than it is allocated.
uint64_t memory_limit();
// Error "PATH: WHAT of N bytes exceeds this machine's memory (M bytes)" when bytes > memory_limit().
void check_fits(const std::string& path, uint64_t bytes, const char* what);
// Bytes of rows x cols floats, UINT64_MAX when that overflows 64 bits.
uint64_t float_bytes(uint64_t rows, uint64_t cols);

// A .npy input of `attn run`: float32 ('<f4') values read from the file
// straight into `f32` (no copy of the file's bytes), int8 ('|i1') and int16
// ('<i2') ones widened into `ints`; other dtypes have their header only (the
// caller rejects them, naming npy::dtype_name(header.descr)). Error "PATH: reason".
// PATH may be a regular file, a pipe or a FIFO (not a directory or device): the
// data is read only up to what the header declares (a regular file's size must
// agree with it before anything is allocated; a stream must end there).
struct NpyInput {
  npy::Header header;
  npy::BatchVector<float> f32;
  std::vector<int32_t> ints;
};
NpyInput read_npy(const std::string& path);
// A .npy file's bytes, header and data, from a regular file, a pipe or a
// FIFO, read as read_npy reads (only the data the header declares, a longer
// stream refused); for dtypes read_npy does not hold, such as token ids
// ('<i4', '<i8'). A dtype of no plain item size: the header alone.
std::vector<uint8_t> read_npy_bytes(const std::string& path);

// Refuses an empty output name, and an existing PATH that is not a regular
// file (a device, FIFO, directory or socket): outputs are written only as
// regular files, never through to a device. Commands call it before their
// work; write_file_atomic calls it again.
void check_output_path(const std::string& path);

// Write to a new PATH.tmp.XXXXXX beside it (mkstemp: created exclusively, so
// a symlink or FIFO planted there is never followed), then rename over PATH:
// readers never see a partial file, and a failure leaves no file behind.
// Error "PATH: write failed (strerror)" when the disk is full etc.
void write_file_atomic(const std::string& path, const void* data, size_t size);
// The same with the file made of two parts (e.g. a .npy header and the data, uncopied).
void write_file_atomic(const std::string& path, const void* head, size_t head_size, const void* data,
                       size_t size);

// A .attn file mapped read-only and validated in place, as firmware uses one
// in flash: no copy of its bytes (the views of `model` point into the
// mapping). Error "PATH: invalid .attn file: kCrcMismatch (...)".
struct LoadedModel {
  MappedFile file;
  Model model;
};
void load_model(const std::string& path, LoadedModel* out);

// ATTN_RUN_TIMES=1 in the environment: the process's CPU time (user + sys)
// per phase of a command, printed to stderr at the end as
// "attn <command>: CPU ms: start S, <phase> T, ..., total N"; "start" is what
// the process spent before the command began (exec, loading, static
// initialization).
class PhaseTimes {
 public:
  explicit PhaseTimes(const char* command);
  ~PhaseTimes();
  PhaseTimes(const PhaseTimes&) = delete;
  PhaseTimes& operator=(const PhaseTimes&) = delete;
  // The time since the last phase ended, named `phase`.
  void done(const char* phase);

 private:
  bool on_;
  double last_;
};

// A whole model's config and dtype (its model record); throws naming `path`
// where they cannot be read.
struct WholeModel {
  TransformerConfig config;
  DType dtype = DType::kF32;
};
WholeModel whole_model(const Model& m, const std::string& path);

// --capacity C of a whole model: past max_positions is refused
// (kCapacityPastPositions: no position ever reaches those cache rows).
void check_capacity(const TransformerConfig& c, long long capacity);

// `s` with bytes that could move the cursor or drive the terminal (C0/C1
// controls, DEL, invalid UTF-8) written as \xNN and '\' as "\\": names
// read from files are printed through it.
std::string printable(const std::string& s);

// The inputs of attention block `index` (called `name`) against its config:
// x of `width` columns (named x_name) is E wide; with cross-attention inputs
// (`cross`) the K/V inputs kv_path and v_path are kdim and vdim wide; without,
// the block is self-attention (else Error "... pass <kv_flag>").
void check_block_inputs(const AttentionConfig& c, uint32_t index, const std::string& name,
                        const std::string& x_name, int64_t width, bool cross, const std::string& kv_path,
                        int64_t kv_cols, const std::string& v_path, int64_t v_cols, const char* kv_flag);

const char* dtype_name(DType d);
// ", int4 weights: N tensor(s), B bytes (role, role, ...)" for a file with int4
// weight tensors (FORMAT.md "Int4 weights"); empty without.
std::string int4_summary(const Model& m);
// Human explanation of a Status (status_name + a few words).
std::string describe(Status s);

}  // namespace cli

// The subcommands: argc/argv start after the subcommand name.
int cmd_import(int argc, char** argv);
int cmd_info(int argc, char** argv);
int cmd_run(int argc, char** argv);
int cmd_emit_c(int argc, char** argv);
int cmd_verify(int argc, char** argv);
int cmd_quantize(int argc, char** argv);
int cmd_generate(int argc, char** argv);
int cmd_perplexity(int argc, char** argv);
int cmd_tokenize(int argc, char** argv);

}  // namespace attn
