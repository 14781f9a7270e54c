// hf_checkpoint.h: writing Hugging Face safetensors checkpoints for the tests
// that import whole models (cli_model_test.cpp, cli_golden_import_test.cpp).
//
//   hf::write_safetensors(path, {{"model.norm.weight", {8}, values}, ...});
//
// Header-only, standard library only. Tensors are written in the given order,
// F32 (or I64, the values cast to int64), with the header padded to 8 bytes.
#pragma once

#include <cstdint>
#include <cstring>
#include <fstream>
#include <string>
#include <vector>

namespace hf {

struct StTensor {
  std::string name;
  std::vector<int64_t> shape;
  std::vector<float> values;  // written as F32
  std::string dtype = "F32";  // "I64": values written as int64
};

inline void write_safetensors(const std::string& path, const std::vector<StTensor>& ts) {
  std::string h = "{";
  std::vector<uint8_t> data;
  for (const StTensor& t : ts) {
    const size_t b = data.size();
    for (float v : t.values) {
      if (t.dtype == "I64") {
        const int64_t x = static_cast<int64_t>(v);
        data.insert(data.end(), reinterpret_cast<const uint8_t*>(&x),
                    reinterpret_cast<const uint8_t*>(&x) + 8);
      } else {
        data.insert(data.end(), reinterpret_cast<const uint8_t*>(&v),
                    reinterpret_cast<const uint8_t*>(&v) + 4);
      }
    }
    std::string shape;
    for (size_t i = 0; i < t.shape.size(); ++i) shape += (i ? "," : "") + std::to_string(t.shape[i]);
    h += (h.size() > 1 ? "," : "") + std::string("\"") + t.name + "\":{\"dtype\":\"" + t.dtype +
         "\",\"shape\":[" + shape + "],\"data_offsets\":[" + std::to_string(b) + "," +
         std::to_string(data.size()) + "]}";
  }
  h += "}";
  while (h.size() % 8 != 0) h += ' ';
  std::vector<uint8_t> out(8);
  const uint64_t n = h.size();
  std::memcpy(out.data(), &n, 8);
  out.insert(out.end(), h.begin(), h.end());
  out.insert(out.end(), data.begin(), data.end());
  std::ofstream f(path, std::ios::binary);
  f.write(reinterpret_cast<const char*>(out.data()), static_cast<std::streamsize>(out.size()));
}

}  // namespace hf
