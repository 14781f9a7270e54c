// cli_util.cpp: argument parsing, file IO and model loading for `attn`.
#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <cctype>
#include <cerrno>
#include <cstdio>
#include <cstring>
#include <fstream>

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
        values_[a].push_back(value);
      } else if (flags.count(a) != 0 && !inline_value) {
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
  return positional_[0];
}

AlignedBytes::AlignedBytes(size_t n)
    : p_(static_cast<uint8_t*>(::operator new (n == 0 ? 1 : n, std::align_val_t{16}))), n_(n) {}

std::vector<uint8_t> read_file(const std::string& path) {
  std::ifstream f(path, std::ios::binary);
  if (!f) throw Error(path + ": cannot open (" + std::strerror(errno) + ")");
  // A regular file: its size, then one read (byte by byte through
  // istreambuf_iterator took a tenth of `attn run` on a 16 MB batch).
  f.seekg(0, std::ios::end);
  const std::streamoff size = f.tellg();
  if (f && size >= 0) {
    f.seekg(0, std::ios::beg);
    std::vector<uint8_t> v;
    npy::resize_huge(v, static_cast<size_t>(size));
    if (size > 0 && !f.read(reinterpret_cast<char*>(v.data()), static_cast<std::streamsize>(size)))
      throw Error(path + ": read error");
    return v;
  }
  f.clear();  // not seekable (a pipe): read to the end
  std::vector<uint8_t> v((std::istreambuf_iterator<char>(f)), std::istreambuf_iterator<char>());
  if (f.bad()) throw Error(path + ": read error");
  return v;
}

AlignedBytes read_file_aligned(const std::string& path) {
  const std::vector<uint8_t> v = read_file(path);
  AlignedBytes b(v.size());
  if (!v.empty()) std::memcpy(b.data(), v.data(), v.size());
  return b;
}

namespace {

// n bytes at `offset` of fd into p; false on an error or a short file.
bool pread_all(int fd, void* p, size_t n, size_t offset) {
  auto* d = static_cast<uint8_t*>(p);
  while (n > 0) {
    const ssize_t r = ::pread(fd, d, n, static_cast<off_t>(offset));
    if (r < 0 && errno == EINTR) continue;
    if (r <= 0) return false;
    d += r;
    n -= static_cast<size_t>(r);
    offset += static_cast<size_t>(r);
  }
  return true;
}

}  // namespace

NpyInput read_npy(const std::string& path) {
  const int fd = ::open(path.c_str(), O_RDONLY | O_CLOEXEC);
  if (fd < 0) throw Error(path + ": cannot open (" + std::strerror(errno) + ")");
  struct Close {
    int fd;
    ~Close() { ::close(fd); }
  } closer{fd};
  NpyInput in;
  try {
    struct stat st {};
    if (::fstat(fd, &st) != 0 || !S_ISREG(st.st_mode)) {  // a pipe: the whole stream, then parse it
      std::vector<uint8_t> bytes;
      uint8_t chunk[1 << 16];
      for (ssize_t r; (r = ::read(fd, chunk, sizeof chunk)) != 0;) {
        if (r < 0 && errno == EINTR) continue;
        if (r < 0) throw Error(path + ": read error");
        bytes.insert(bytes.end(), chunk, chunk + r);
      }
      npy::Array a = npy::parse(bytes);
      in.header = npy::parse_header(bytes.data(), bytes.size());
      in.f32.assign(a.f32.begin(), a.f32.end());
      in.ints = std::move(a.ints);
      return in;
    }
    // A regular file: the header, then the data read where it is wanted.
    const size_t size = static_cast<size_t>(st.st_size);
    std::vector<uint8_t> head(std::min<size_t>(size, 4096));
    if (!pread_all(fd, head.data(), head.size(), 0)) throw Error(path + ": read error");
    if (head.size() >= 12) {  // a header longer than 4 KiB: read all of it
      const size_t end =
          head[6] == 1 ? 10 + (static_cast<size_t>(head[8]) | static_cast<size_t>(head[9]) << 8)
                       : 12 + (static_cast<size_t>(head[8]) | static_cast<size_t>(head[9]) << 8 |
                               static_cast<size_t>(head[10]) << 16 | static_cast<size_t>(head[11]) << 24);
      if (end > head.size()) {
        head.resize(std::min(size, end));
        if (!pread_all(fd, head.data(), head.size(), 0)) throw Error(path + ": read error");
      }
    }
    in.header = npy::parse_header(head.data(), head.size());
    npy::check_data_size(in.header, size);
    const size_t n = static_cast<size_t>(in.header.count), at = in.header.data_at;
    if (in.header.descr == "<f4") {
      npy::resize_huge(in.f32, n);
      if (!pread_all(fd, in.f32.data(), n * sizeof(float), at)) throw Error(path + ": read error");
    } else if (in.header.item == 1 || in.header.item == 2) {
      std::vector<uint8_t> raw(n * in.header.item);
      if (!pread_all(fd, raw.data(), raw.size(), at)) throw Error(path + ": read error");
      npy::widen_ints(raw.data(), n, in.header.item, &in.ints);
    }
  } catch (const Error&) {
    throw;
  } catch (const std::runtime_error& e) {
    throw Error(path + ": " + e.what());
  }
  return in;
}

void write_file_atomic(const std::string& path, const void* data, size_t size) {
  write_file_atomic(path, data, size, nullptr, 0);
}

void write_file_atomic(const std::string& path, const void* head, size_t head_size, const void* data,
                       size_t size) {
  const std::string tmp = path + ".tmp." + std::to_string(::getpid());
  FILE* f = std::fopen(tmp.c_str(), "wb");
  if (f == nullptr) throw Error(path + ": cannot write (" + std::strerror(errno) + ")");
#if defined(__linux__)
  // Allocate the file's blocks in one call before writing: ext4's per-page
  // delayed allocation took about a quarter of the CPU time of writing an
  // 8 MiB output. A hint: where unsupported (EOPNOTSUPP) the writes allocate.
  if (head_size + size >= (size_t{1} << 20))
    (void)::fallocate(fileno(f), 0, 0, static_cast<off_t>(head_size + size));
#endif
  const bool ok = (head_size == 0 || std::fwrite(head, 1, head_size, f) == head_size) &&
                  (size == 0 || std::fwrite(data, 1, size, f) == size) && std::fflush(f) == 0;
  const bool closed = std::fclose(f) == 0;
  if (!ok || !closed) {
    std::remove(tmp.c_str());
    throw Error(path + ": write failed");
  }
  if (std::rename(tmp.c_str(), path.c_str()) != 0) {
    const std::string why = std::strerror(errno);
    std::remove(tmp.c_str());
    throw Error(path + ": cannot rename the temporary file into place (" + why + ")");
  }
}

void load_model(const std::string& path, LoadedModel* out) {
  out->bytes = read_file_aligned(path);
  const Status s = Model::load(out->bytes.data(), out->bytes.size(), &out->model);
  if (s != Status::kOk) throw Error(path + ": invalid .attn file: " + describe(s));
}

const char* role_name(format::Role r) {
  switch (r) {
    case format::Role::kWq:
      return "Wq";
    case format::Role::kWk:
      return "Wk";
    case format::Role::kWv:
      return "Wv";
    case format::Role::kWo:
      return "Wo";
    case format::Role::kBq:
      return "bq";
    case format::Role::kBk:
      return "bk";
    case format::Role::kBv:
      return "bv";
    case format::Role::kBo:
      return "bo";
    case format::Role::kUser:
      return "user";
    case format::Role::kQMultiplier:
      return "q_mult";
    case format::Role::kQShift:
      return "q_shift";
    case format::Role::kKMultiplier:
      return "k_mult";
    case format::Role::kKShift:
      return "k_shift";
    case format::Role::kVMultiplier:
      return "v_mult";
    case format::Role::kVShift:
      return "v_shift";
    case format::Role::kOMultiplier:
      return "o_mult";
    case format::Role::kOShift:
      return "o_shift";
    case format::Role::kQuantParams:
      return "qparams";
    case format::Role::kIoScale:
      return "io_scale";
    case format::Role::kRopeCos:
      return "rope_cos";
    case format::Role::kRopeSin:
      return "rope_sin";
  }
  return "?";
}

const char* dtype_name(DType d) {
  switch (d) {
    case DType::kF32:
      return "f32";
    case DType::kS8:
      return "s8";
    case DType::kS16:
      return "s16";
    case DType::kS32:
      return "s32";
    case DType::kS64:
      return "s64";
    case DType::kU8:
      return "u8";
  }
  return "?";
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
    default:
      break;
  }
  std::string r = status_name(s);
  if (*what != '\0') r += std::string(" (") + what + ")";
  return r;
}

}  // namespace cli
}  // namespace attn
