#!/usr/bin/python3
"""Hugging Face style checkpoints without the `safetensors` package.

write_safetensors(path, tensors, metadata=None, canonical=True)
    tensors: {name: torch.Tensor or numpy array}, written as little-endian F32.
    The file: an 8-byte little-endian header length N, N bytes of JSON
    ({name: {"dtype": "F32", "shape": [...], "data_offsets": [begin, end]}},
    offsets relative to the first byte after the header, optional
    "__metadata__" of string values), padded with spaces to a multiple of 8,
    then the tensor bytes back to back in the order of the sorted names.
    The same tensors give the same bytes. canonical=False (the test fixtures
    of tools/fixtures/gen_*_fixtures.py): numpy arrays of their own dtype (float32,
    float16, int64) in the dict's order, the header's keys in that order and
    "__metadata__" last.
read_safetensors(path) -> {name: numpy float32 array}   (F32 only; for checks)
write_config(path, config)   config.json, sorted keys, 2-space indent.

Used by tools/train/train_demo_encoder.py, tools/train/train_tiny_llama.py and the
test fixture generators tools/fixtures/gen_format_fixtures.py, tools/fixtures/gen_model_fixtures.py.
"""
import json
import struct

import numpy as np


def _as_f32(t):
    if hasattr(t, "detach"):  # torch.Tensor
        t = t.detach().cpu().contiguous().numpy()
    return np.ascontiguousarray(np.asarray(t, dtype="<f4"))


_TAGS = {"float32": "F32", "float16": "F16", "int64": "I64"}


def write_safetensors(path, tensors, metadata=None, canonical=True):
    header = {}
    blobs = []
    offset = 0
    for name in sorted(tensors) if canonical else tensors:
        if canonical:
            a = _as_f32(tensors[name])
        else:
            a = np.ascontiguousarray(tensors[name])
            a = a.astype(a.dtype.newbyteorder("<"))
        data = a.tobytes()
        header[name] = {"dtype": _TAGS[str(a.dtype.newbyteorder("="))], "shape": list(a.shape),
                        "data_offsets": [offset, offset + len(data)]}
        blobs.append(data)
        offset += len(data)
    if metadata:
        header["__metadata__"] = {str(k): str(v) for k, v in metadata.items()}
    text = json.dumps(header, separators=(",", ":"), sort_keys=canonical).encode("utf-8")
    text += b" " * (-len(text) % 8)
    with open(path, "wb") as f:
        f.write(struct.pack("<Q", len(text)))
        f.write(text)
        for data in blobs:
            f.write(data)
    return 8 + len(text) + offset


def read_safetensors(path):
    with open(path, "rb") as f:
        raw = f.read()
    (n,) = struct.unpack("<Q", raw[:8])
    header = json.loads(raw[8:8 + n].decode("utf-8"))
    base = 8 + n
    out = {}
    for name, d in header.items():
        if name == "__metadata__":
            continue
        if d["dtype"] != "F32":
            raise ValueError(f"{name}: dtype {d['dtype']} (only F32 here)")
        b, e = d["data_offsets"]
        out[name] = np.frombuffer(raw[base + b:base + e], dtype="<f4").reshape(d["shape"])
    return out


def write_config(path, config):
    with open(path, "w", encoding="utf-8") as f:
        json.dump(config, f, indent=2, sort_keys=True)
        f.write("\n")
