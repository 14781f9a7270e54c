// cli_util.cpp: argument parsing, file IO and model loading for `attn`.
#include <fcntl.h>
#include <sys/mman.h>
#include <sys/resource.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include <algorithm>
#include <cctype>
#include <cerrno>
#include <cstdio>
#include <cstdlib>
#include <cstring>

#include "cli/cli.h"
#include "cli/npy.h"

namespace attn {
namespace cli {

Args::Args(int argc, char** argv, const std::set<std::string>& valued, const std::set<std::string>& flags) {
  for (int i = 0; i < argc; ++i) {
    std::string a = argv[i];
    if (a.size() > 1 && a[0] == '-' &&
        !(a.size() > 1 && (std::isdigit(static_cast<unsigned char>(a[1])) != 0))) {
      std::string value;
      bool inline_value = false;
      const size_t eq = a.find('=');
      if (eq != std::string::npos) {
        value = a.substr(eq + 1);
        a = a.substr(0, eq);
        inline_value = true;
      }
      if (valued.count(a) != 0) {
        if (!inline_value) {
          if (i + 1 >= argc) throw Error("option " + a + " needs a value");
          value = argv[++i];
        }
        if (value.empty()) throw Error("option " + a + ": empty value");
        values_[a].push_back(value);
      } else if (flags.count(a) != 0) {
        if (inline_value) throw Error("option " + a + " is a flag and takes no value (give " + a + " alone)");
        flags_.insert(a);
      } else {
        throw Error("unknown option " + a);
      }
    } else {
      positional_.push_back(a);
    }
  }
}

std::string Args::get(const std::string& opt, const std::string& fallback) const {
  auto it = values_.find(opt);
  if (it == values_.end()) return fallback;
  if (it->second.size() > 1) throw Error("option " + opt + " given more than once");
  return it->second.front();
}

std::vector<std::string> Args::all(const std::string& opt) const {
  auto it = values_.find(opt);
  return it == values_.end() ? std::vector<std::string>{} : it->second;
}

std::string Args::required(const std::string& opt) const {
  if (values_.count(opt) == 0) throw Error("missing option " + opt);
  return get(opt);
}

long long Args::get_int(const std::string& opt, long long fallback, long long lo, long long hi) const {
  if (values_.count(opt) == 0) return fallback;
  const std::string s = get(opt);
  char* end = nullptr;
  errno = 0;
  const long long v = std::strtoll(s.c_str(), &end, 10);
  if (s.empty() || *end != '\0' || errno != 0 || v < lo || v > hi)
    throw Error("option " + opt + ": '" + s + "' is not an integer in [" + std::to_string(lo) + ", " +
                std::to_string(hi) + "]");
  return v;
}

std::string Args::one_input(const char* what) const {
  if (positional_.empty()) throw Error(std::string("missing the ") + what + " argument");
  if (positional_.size() > 1) throw Error("unexpected argument '" + positional_[1] + "'");
  if (positional_[0].empty()) throw Error(std::string("the ") + what + " argument is an empty file name");
  return positional_[0];
}

std::string Args::output() const {
  const std::string out = has("-o") ? get("-o") : required("--output");
  check_output_path(out);
  return out;
}

AlignedBytes::AlignedBytes(size_t n)
    : p_(static_cast<uint8_t*>(::operator new (n == 0 ? 1 : n, std::align_val_t{16}))), n_(n) {}

uint64_t memory_limit() {
  const long pages = ::sysconf(_SC_PHYS_PAGES), page = ::sysconf(_SC_PAGESIZE);
  uint64_t limit = pages <= 0 || page <= 0 ? uint64_t{1} << 40
                                           : static_cast<uint64_t>(pages) * static_cast<uint64_t>(page);
  // A process limit (ulimit -v, -d) below it is the real bound.
  for (const int resource : {RLIMIT_AS, RLIMIT_DATA}) {
    struct rlimit rl {};
    if (::getrlimit(resource, &rl) == 0 && rl.rlim_cur != RLIM_INFINITY)
      limit = std::min<uint64_t>(limit, static_cast<uint64_t>(rl.rlim_cur));
  }
  return limit;
}

namespace {

struct Fd {
  int fd = -1;
  ~Fd() {
    if (fd >= 0) ::close(fd);
  }
};

// Opens `path` for reading; Error if it cannot be opened or is a directory,
// and, with `regular_only`, if it is not a regular file (a FIFO is opened
// without blocking so that it can be refused).
void open_input(const std::string& path, bool regular_only, Fd* f, struct stat* st) {
  if (path.empty()) throw Error("empty file name");
  f->fd = ::open(path.c_str(), O_RDONLY | O_CLOEXEC | (regular_only ? O_NONBLOCK : 0));
  if (f->fd < 0) throw Error(path + ": cannot open (" + std::strerror(errno) + ")");
  if (::fstat(f->fd, st) != 0) throw Error(path + ": cannot stat (" + std::strerror(errno) + ")");
  if (S_ISDIR(st->st_mode)) throw Error(path + ": is a directory, not a file");
  if (regular_only && !S_ISREG(st->st_mode))
    throw Error(path + ": not a regular file (a device, FIFO or socket); give a file");
  if (regular_only) (void)::fcntl(f->fd, F_SETFL, ::fcntl(f->fd, F_GETFL) & ~O_NONBLOCK);
}

// Up to n bytes from fd's current position into p; the count read (< n only at the end of the file).
size_t read_up_to(const std::string& path, int fd, void* p, size_t n) {
  auto* d = static_cast<uint8_t*>(p);
  size_t got = 0;
  while (got < n) {
    const ssize_t r = ::read(fd, d + got, std::min<size_t>(n - got, size_t{1} << 30));
    if (r < 0 && errno == EINTR) continue;
    if (r < 0) throw Error(path + ": read error (" + std::strerror(errno) + ")");
    if (r == 0) break;
    got += static_cast<size_t>(r);
  }
  return got;
}

}  // namespace

void check_fits(const std::string& path, uint64_t bytes, const char* what) {
  const uint64_t limit = memory_limit();
  if (bytes > limit)
    throw Error(path + ": " + what + " of " + std::to_string(bytes) +
                " bytes exceeds this machine's memory (" + std::to_string(limit) + " bytes)");
}

uint64_t float_bytes(uint64_t rows, uint64_t cols) {
  return cols != 0 && rows > UINT64_MAX / 4 / cols ? UINT64_MAX : rows * cols * 4;
}

std::vector<uint8_t> read_file(const std::string& path) { return read_file(path, UINT64_MAX, ""); }

std::vector<uint8_t> read_file(const std::string& path, uint64_t max_bytes, const char* max_what) {
  Fd f;
  struct stat st {};
  open_input(path, true, &f, &st);
  const auto size = static_cast<uint64_t>(st.st_size);
  if (size > max_bytes) throw Error(path + ": " + std::to_string(size) + " bytes, more than the " + max_what);
  check_fits(path, size, "the file");
  std::vector<uint8_t> v;
  npy::resize_huge(v, static_cast<size_t>(size));
  if (read_up_to(path, f.fd, v.data(), v.size()) != v.size())
    throw Error(path + ": read error (the file shrank while being read)");
  return v;
}

MappedFile::MappedFile(const std::string& path, bool populate) {
  Fd f;
  struct stat st {};
  open_input(path, true, &f, &st);
  if (static_cast<uint64_t>(st.st_size) > SIZE_MAX)
    throw Error(path + ": " + std::to_string(st.st_size) + " bytes, too large to map in this process");
  size_ = static_cast<size_t>(st.st_size);
  if (size_ == 0) return;
  int flags = MAP_PRIVATE;
#if defined(MAP_POPULATE)
  if (populate) flags |= MAP_POPULATE;
#else
  (void)populate;
#endif
  void* p = ::mmap(nullptr, size_, PROT_READ, flags, f.fd, 0);
  if (p == MAP_FAILED) throw Error(path + ": cannot map (" + std::strerror(errno) + ")");
  data_ = static_cast<const uint8_t*>(p);
}

MappedFile::~MappedFile() {
  if (data_ != nullptr) ::munmap(const_cast<uint8_t*>(data_), size_);
}

namespace {

// Opens a .npy input (a regular file, a pipe or a FIFO; a device is refused)
// and reads its header bytes, in order, into *head; *regular tells a
// regular file (whose size the caller checks) from a stream.
void open_npy(const std::string& path, Fd* f, bool* regular, size_t* file_size, std::vector<uint8_t>* head) {
  struct stat st {};
  open_input(path, false, f, &st);
  *regular = S_ISREG(st.st_mode);
  *file_size = static_cast<size_t>(st.st_size);
  if (!*regular && !S_ISFIFO(st.st_mode) && !S_ISSOCK(st.st_mode))
    throw Error(path + ": a device, not a .npy file");
  head->resize(12);
  head->resize(read_up_to(path, f->fd, head->data(), head->size()));
  std::vector<uint8_t>& h = *head;
  if (h.size() >= 10 && h[6] >= 1 && h[6] <= 3) {  // the header length, then the header
    const size_t start = h[6] == 1 ? 10 : 12;
    if (h.size() >= start) {
      size_t hlen = static_cast<size_t>(h[8]) | static_cast<size_t>(h[9]) << 8;
      if (start == 12) hlen |= static_cast<size_t>(h[10]) << 16 | static_cast<size_t>(h[11]) << 24;
      if (hlen <= npy::kMaxHeaderBytes) {
        const size_t have = h.size();
        h.resize(start + hlen);
        if (h.size() > have) h.resize(have + read_up_to(path, f->fd, h.data() + have, h.size() - have));
      }
    }
  }
}

// After the declared data: a stream must end there.
void check_stream_end(const std::string& path, int fd, const npy::Header& h) {
  uint8_t extra = 0;
  if (read_up_to(path, fd, &extra, 1) != 0)
    throw Error(path + ": the stream holds more data than shape " + h.shape_text + " and dtype " + h.descr +
                " declare");
}

// fn(), a std::runtime_error of it (the .npy parser's) named as an Error of `path`.
template <class F>
auto with_path(const std::string& path, F fn) -> decltype(fn()) {
  try {
    return fn();
  } catch (const Error&) {
    throw;
  } catch (const std::runtime_error& e) {
    throw Error(path + ": " + e.what());
  }
}

}  // namespace

std::vector<uint8_t> read_npy_bytes(const std::string& path) {
  Fd f;
  bool regular = false;
  size_t file_size = 0;
  return with_path(path, [&]() {
    std::vector<uint8_t> b;
    open_npy(path, &f, &regular, &file_size, &b);
    const npy::Header h = npy::parse_header(b.data(), b.size());
    // The item size a descr such as '<i8' or '|i1' names; anything else: the header alone.
    const std::string& d = h.descr;
    const size_t item = d.size() == 3 && (d[0] == '<' || d[0] == '|') && d[2] >= '1' && d[2] <= '8'
                            ? static_cast<size_t>(d[2] - '0')
                            : 0;
    if (item == 0) return b;
    npy::Header sized = h;
    sized.item = item;
    if (regular) npy::check_data_size(sized, file_size);
    const uint64_t bytes = static_cast<uint64_t>(h.count) * item;
    check_fits(path, bytes, "the data");
    const size_t at = b.size();
    npy::resize_huge(b, at + static_cast<size_t>(bytes));
    b.resize(at + read_up_to(path, f.fd, b.data() + at, static_cast<size_t>(bytes)));
    if (!regular && b.size() == at + bytes) check_stream_end(path, f.fd, h);
    return b;
  });
}

NpyInput read_npy(const std::string& path) {
  // A regular file, a pipe or a FIFO: read in order, the header first; the
  // data is read only up to the size the header declares (checked against a
  // regular file's size before anything is allocated), and a stream that goes
  // on after it is refused.
  Fd f;
  bool regular = false;
  size_t file_size = 0;
  return with_path(path, [&]() {
    NpyInput in;
    std::vector<uint8_t> head;
    open_npy(path, &f, &regular, &file_size, &head);
    in.header = npy::parse_header(head.data(), head.size());
    if (in.header.item == 0) return in;  // the caller names the dtype
    if (regular) npy::check_data_size(in.header, file_size);
    const size_t n = static_cast<size_t>(in.header.count), bytes = n * in.header.item;
    check_fits(path, bytes, "the data");
    const auto short_read = [&](size_t got) {
      return Error(path + ": data size " + std::to_string(got) + " bytes disagrees with shape " +
                   in.header.shape_text + " and dtype " + in.header.descr);
    };
    if (in.header.descr == "<f4") {
      npy::resize_huge(in.f32, n);
      const size_t got = read_up_to(path, f.fd, in.f32.data(), bytes);
      if (got != bytes) throw short_read(got);
    } else if (in.header.item == 1 || in.header.item == 2) {
      std::vector<uint8_t> raw(bytes);
      const size_t got = read_up_to(path, f.fd, raw.data(), bytes);
      if (got != bytes) throw short_read(got);
      npy::widen_ints(raw.data(), n, in.header.item, &in.ints);
    } else {
      return in;  // float64: header only (the caller refuses it)
    }
    if (!regular) check_stream_end(path, f.fd, in.header);
    return in;
  });
}

void check_output_path(const std::string& path) {
  if (path.empty()) throw Error("the output file name is empty");
  struct stat st {};
  if (::stat(path.c_str(), &st) == 0 && !S_ISREG(st.st_mode))
    throw Error(path +
                ": not a regular file; attn writes its outputs to regular files only (they are "
                "replaced whole, never written through)");
}

void write_file_atomic(const std::string& path, const void* data, size_t size) {
  write_file_atomic(path, data, size, nullptr, 0);
}

void write_file_atomic(const std::string& path, const void* head, size_t head_size, const void* data,
                       size_t size) {
  check_output_path(path);
  // A new file of an unpredictable name, created exclusively (mkstemp:
  // O_CREAT | O_EXCL), so that nothing planted beside the output (a symlink
  // to another file, a FIFO) is followed or written through.
  std::string tmp = path + ".tmp.XXXXXX";
  const int fd = ::mkstemp(&tmp[0]);
  if (fd < 0) throw Error(path + ": cannot write (" + std::strerror(errno) + ")");
  // mkstemp's mode is 0600; give the output the mode a plain create would (0666 less the umask).
  const mode_t mask = ::umask(0);
  ::umask(mask);
  (void)::fchmod(fd, 0666 & ~mask);
  FILE* f = ::fdopen(fd, "wb");
  if (f == nullptr) {
    const int why = errno;
    ::close(fd);
    std::remove(tmp.c_str());
    throw Error(path + ": cannot write (" + std::strerror(why) + ")");
  }
#if defined(__linux__)
  // Allocate the file's blocks in one call before writing: ext4's per-page
  // delayed allocation took about a quarter of the CPU time of writing an
  // 8 MiB output. A hint: where unsupported (EOPNOTSUPP) the writes allocate.
  if (head_size + size >= (size_t{1} << 20))
    (void)::fallocate(fileno(f), 0, 0, static_cast<off_t>(head_size + size));
#endif
  errno = 0;
  bool ok = (head_size == 0 || std::fwrite(head, 1, head_size, f) == head_size) &&
            (size == 0 || std::fwrite(data, 1, size, f) == size) && std::fflush(f) == 0;
  int why = ok ? 0 : errno;
  if (std::fclose(f) != 0 && ok) {
    ok = false;
    why = errno;
  }
  if (!ok) {
    std::remove(tmp.c_str());
    throw Error(path + ": write failed (" + (why != 0 ? std::strerror(why) : "unknown reason") + ")");
  }
  // The target may have been replaced by a device or FIFO since the check above: check again.
  struct stat st {};
  if (::stat(path.c_str(), &st) == 0 && !S_ISREG(st.st_mode)) {
    std::remove(tmp.c_str());
    check_output_path(path);
  }
  if (std::rename(tmp.c_str(), path.c_str()) != 0) {
    const std::string why_rename = std::strerror(errno);
    std::remove(tmp.c_str());
    throw Error(path + ": cannot rename the temporary file into place (" + why_rename + ")");
  }
}

WholeModel whole_model(const Model& m, const std::string& path) {
  WholeModel w;
  format::ModelRecord rec{};
  if (!m.is_model() || m.transformer_config(&w.config) != Status::kOk || m.model_record(&rec) != Status::kOk)
    throw Error(path + ": no readable model record (a whole model's config)");
  w.dtype = static_cast<DType>(rec.dtype);
  return w;
}

void check_capacity(const TransformerConfig& c, long long capacity) {
  if (capacity > c.max_positions)
    throw Error("--capacity " + std::to_string(capacity) + " is past the model's max_positions " +
                std::to_string(c.max_positions) +
                " (kCapacityPastPositions): no position ever reaches the cache rows beyond it; use at most " +
                std::to_string(c.max_positions));
}

std::string printable(const std::string& s) {
  static const char kHex[] = "0123456789abcdef";
  std::string out;
  size_t i = 0;
  const auto escape = [&](unsigned char c) {
    out += "\\x";
    out += kHex[c >> 4];
    out += kHex[c & 15];
  };
  while (i < s.size()) {
    const auto c = static_cast<unsigned char>(s[i]);
    if (c == '\\') {
      out += "\\\\";
      ++i;
    } else if (c >= 0x20 && c < 0x7F) {
      out += static_cast<char>(c);
      ++i;
    } else if (c < 0x80) {
      escape(c);  // C0 controls (ESC, CR, LF, ...) and DEL
      ++i;
    } else {
      // A well-formed UTF-8 sequence of a printable code point (not C1
      // controls U+0080..U+009F) is kept; any other byte is escaped.
      const size_t len = c >= 0xF0 && c <= 0xF4 ? 4 : c >= 0xE0 ? 3 : c >= 0xC2 && c <= 0xDF ? 2 : 0;
      uint32_t cp = len == 2 ? c & 0x1Fu : len == 3 ? c & 0x0Fu : c & 0x07u;
      bool ok = len != 0 && i + len <= s.size();
      for (size_t k = 1; ok && k < len; ++k) {
        const auto b = static_cast<unsigned char>(s[i + k]);
        ok = (b & 0xC0) == 0x80;
        cp = cp << 6 | (b & 0x3Fu);
      }
      const uint32_t min_cp = len == 2 ? 0x80 : len == 3 ? 0x800 : 0x10000;
      ok = ok && cp >= min_cp && cp <= 0x10FFFF && !(cp >= 0xD800 && cp <= 0xDFFF) && cp > 0x9F &&
           cp != 0x2028 && cp != 0x2029;
      if (ok) {
        out.append(s, i, len);
        i += len;
      } else {
        escape(c);
        ++i;
      }
    }
  }
  return out;
}

void load_model(const std::string& path, LoadedModel* out) {
  // The loader reads every byte (the CRC): the pages are read ahead in the mmap call.
  out->file = MappedFile(path, true);
  // An empty file maps nothing; the loader then sees an aligned empty blob and
  // says kTruncated, not kNullArgument.
  alignas(16) static const uint8_t kNothing[16] = {};
  const uint8_t* p = out->file.size() == 0 ? kNothing : out->file.data();
  const Status s = Model::load(p, out->file.size(), &out->model);
  if (s != Status::kOk) throw Error(path + ": invalid .attn file: " + describe(s));
}

PhaseTimes::PhaseTimes(const char* command) : on_(std::getenv("ATTN_RUN_TIMES") != nullptr), last_(0) {
  if (!on_) return;
  timespec ts{};
  (void)::clock_gettime(CLOCK_PROCESS_CPUTIME_ID, &ts);
  last_ = static_cast<double>(ts.tv_sec) + 1e-9 * static_cast<double>(ts.tv_nsec);
  std::fprintf(stderr, "attn %s: CPU ms: start %.2f", command, last_ * 1e3);
}

void PhaseTimes::done(const char* phase) {
  if (!on_) return;
  timespec ts{};
  (void)::clock_gettime(CLOCK_PROCESS_CPUTIME_ID, &ts);
  const double t = static_cast<double>(ts.tv_sec) + 1e-9 * static_cast<double>(ts.tv_nsec);
  std::fprintf(stderr, ", %s %.2f", phase, (t - last_) * 1e3);
  last_ = t;
}

PhaseTimes::~PhaseTimes() {
  if (!on_) return;
  timespec ts{};
  (void)::clock_gettime(CLOCK_PROCESS_CPUTIME_ID, &ts);
  std::fprintf(stderr, ", total %.2f\n",
               (static_cast<double>(ts.tv_sec) + 1e-9 * static_cast<double>(ts.tv_nsec)) * 1e3);
}

void check_block_inputs(const AttentionConfig& c, uint32_t index, const std::string& name,
                        const std::string& x_name, int64_t width, bool cross, const std::string& kv_path,
                        int64_t kv_cols, const std::string& v_path, int64_t v_cols, const char* kv_flag) {
  const std::string block = std::to_string(index);
  if (width != c.embed_dim)
    throw Error(x_name + ": width " + std::to_string(width) + " but block " + block +
                " has E = " + std::to_string(c.embed_dim));
  if (cross) {
    if (kv_cols != c.kdim)
      throw Error(kv_path + ": width " + std::to_string(kv_cols) + " but block " + block +
                  " has kdim = " + std::to_string(c.kdim));
    if (v_cols != c.vdim)
      throw Error(v_path + ": width " + std::to_string(v_cols) + " but block " + block +
                  " has vdim = " + std::to_string(c.vdim));
  } else if (c.kdim != c.embed_dim || c.vdim != c.embed_dim) {
    throw Error(name + " is cross-attention (kdim " + std::to_string(c.kdim) + ", vdim " +
                std::to_string(c.vdim) + "): pass " + kv_flag);
  }
}

const char* dtype_name(DType d) {
  static const char* const kNames[] = {"?", "f32", "s8", "s16", "s32", "s64", "u8", "s4"};  // by DType value
  const auto i = static_cast<size_t>(d);
  return i < sizeof kNames / sizeof kNames[0] ? kNames[i] : "?";
}

std::string int4_summary(const Model& m) {
  uint32_t n = 0;
  uint64_t bytes = 0;
  std::string roles;
  for (uint32_t i = 0; i < m.tensor_count(); ++i) {
    TensorView t;
    if (m.tensor(i, &t) != Status::kOk || t.dtype != DType::kS4) continue;
    ++n;
    bytes += t.byte_size;
    const std::string r = format::role_name(t.role);
    if (roles.find(r) == std::string::npos) roles += (roles.empty() ? "" : " ") + r;
  }
  if (n == 0) return std::string();
  return ", int4 weights: " + std::to_string(n) + " tensor(s), " + std::to_string(bytes) + " bytes (" +
         roles + ")";
}

std::string describe(Status s) {
  const char* what = "";
  switch (s) {
    case Status::kBadMagic:
      what = "not a .attn file (bad magic)";
      break;
    case Status::kUnsupportedVersion:
      what = "format version not supported by this build";
      break;
    case Status::kTruncated:
      what = "file is truncated";
      break;
    case Status::kFileSizeMismatch:
      what = "file size disagrees with the header";
      break;
    case Status::kCrcMismatch:
      what = "checksum mismatch (corrupted file)";
      break;
    case Status::kBadAlignment:
      what = "bad data alignment";
      break;
    case Status::kSizeOverflow:
      what = "a size or offset overflows";
      break;
    case Status::kOffsetOutOfBounds:
      what = "a table or tensor lies outside the file";
      break;
    case Status::kTensorOverlap:
      what = "tensors overlap";
      break;
    case Status::kDimsMismatch:
      what = "tensor dims disagree with the block's hyperparameters";
      break;
    case Status::kMissingTensor:
      what = "a block lacks a required tensor";
      break;
    case Status::kRopePositionOutOfRange:
      what = "a rotary position past the file's cos/sin tables: quantize with a larger --max-positions";
      break;
    case Status::kMaskNotCalibrated:
      what =
          "the block's ranges were calibrated for another mask: quantize again with the mask it runs with "
          "(--causal, --key-length N, or neither), or with --any-mask for every mask";
      break;
    default:
      break;
  }
  std::string r = status_name(s);
  if (*what != '\0') r += std::string(" (") + what + ")";
  return r;
}

}  // namespace cli
}  // namespace attn
