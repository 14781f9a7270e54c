#!/usr/bin/python3
"""Export PyTorch attention weights to a .attn file (format v1, float32).

Reads torch.nn.MultiheadAttention (packed in_proj_weight, or separate
q/k/v_proj_weight when kdim/vdim differ from E), the self_attn of
nn.TransformerEncoderLayer, and BERT-style self-attention
(...attention.self.query/key/value + ...attention.output.dense), HF Llama
attention (...self_attn.q_proj/k_proj/v_proj/o_proj.weight) and llama2.c /
Meta Llama attention (...attention.wq/wk/wv/wo.weight), both with grouped-query
K/V heads and rotary embeddings, one or several layers into one file, in the order of their names (numbers compared
as numbers). The input is a module, a state_dict, a .pt/.bin checkpoint or a
.safetensors file. `attn import` (C++) reads safetensors with the same rules
and writes the same bytes; include/attn/FORMAT.md describes the file.

Command line (run with /usr/bin/python3, which has torch):
  attn_export.py MODEL.{pt,bin,safetensors} --heads H [--prefix P]
                 [--kv-heads G] [--rope-base B] [--extra NAME=KEY ...] -o OUT.attn

Llama layouts: K/V heads G default to k_proj rows / head_dim (--kv-heads
checks it); the RoPE base defaults to 10000 (--rope-base 0: none). llama2.c
pairs rotary dims (2i, 2i+1); attn pairs (i, i + head_dim/2) as HF Llama, so
its wq/wk rows are permuted per head as HF's conversion script does (scores
are unchanged). --kv-heads and --rope-base apply to the Llama layouts only.

Python:
  from attn_export import export
  export(module_or_state_dict_or_path, "out.attn", heads=None, prefix=None,
         extras={"embedding": "embed.weight"})
"""

import argparse
import json
import os
import re
import struct
import sys
import tempfile
import zlib

import numpy as np

MAGIC = 0x4E545441
VERSION = 1
HEADER_SIZE = 64
BLOCK_SIZE = 64
TENSOR_SIZE = 128
NAME_BYTES = 64
NO_BLOCK = 0xFFFFFFFF
DTYPE_F32 = 1
ROLE = {"wq": 1, "wk": 2, "wv": 3, "wo": 4, "bq": 5, "bk": 6, "bv": 7, "bo": 8, "user": 15}
BLOCK_BIAS = 1


class ExportError(Exception):
    """A problem with the input; the message names it."""


# ----------------------------------------------------------------- reading ---

# Float tensors become float32 when used (F64 rounded to nearest), as in `attn import`;
# integer tensors may be present (e.g. position ids) but cannot be exported.
_ST_DTYPES = {"F32": "<f4", "F64": "<f8", "F16": "<f2", "I64": "<i8", "I32": "<i4", "I16": "<i2",
              "I8": "i1", "U8": "u1", "U16": "<u2", "U32": "<u4", "U64": "<u8", "BOOL": "?"}


def read_safetensors(path):
    """name -> numpy array (little-endian, as stored; BF16 widened to f32)."""
    with open(path, "rb") as f:
        blob = f.read()
    if len(blob) < 8:
        raise ExportError(f"{path}: not a safetensors file (shorter than 8 bytes)")
    (n,) = struct.unpack_from("<Q", blob, 0)
    if n > len(blob) - 8:
        raise ExportError(f"{path}: header length {n} runs past the end of the file")
    try:
        header = json.loads(blob[8:8 + n].decode("utf-8"))
    except (UnicodeDecodeError, json.JSONDecodeError) as e:
        raise ExportError(f"{path}: bad JSON header ({e})")
    if not isinstance(header, dict):
        raise ExportError(f"{path}: header is not a JSON object")
    data = memoryview(blob)[8 + n:]
    out = {}
    for name, info in header.items():
        if name == "__metadata__":
            continue
        try:
            dtype, shape, (b, e) = info["dtype"], [int(d) for d in info["shape"]], info["data_offsets"]
        except (KeyError, TypeError, ValueError):
            raise ExportError(f"{path}: tensor '{name}' has a malformed entry")
        if not (0 <= b <= e <= len(data)):
            raise ExportError(f"{path}: tensor '{name}' lies outside the data section")
        count = int(np.prod(shape)) if shape else 1
        if dtype == "BF16":
            raw = np.frombuffer(data[b:e], dtype="<u2")
            if raw.size != count:
                raise ExportError(f"{path}: tensor '{name}' has {e - b} bytes for shape {shape}")
            arr = (raw.astype(np.uint32) << 16).view(np.float32).reshape(shape)
        elif dtype in _ST_DTYPES:
            dt = np.dtype(_ST_DTYPES[dtype])
            if e - b != count * dt.itemsize:
                raise ExportError(f"{path}: tensor '{name}' has {e - b} bytes for shape {shape}")
            arr = np.frombuffer(data[b:e], dtype=dt).reshape(shape)
        else:
            raise ExportError(f"{path}: tensor '{name}' has unsupported dtype {dtype}")
        out[name] = arr
    return out


def _to_numpy(v):
    if isinstance(v, np.ndarray):
        return v
    v = v.detach().cpu()
    if str(v.dtype) == "torch.bfloat16":  # numpy has no bfloat16; widening is exact
        v = v.float()
    return v.numpy()


def load_state(source):
    """(state: name -> numpy array, heads: prefix -> num_heads known from modules)."""
    heads = {}
    if isinstance(source, (str, os.PathLike)):
        path = os.fspath(source)
        if not os.path.exists(path):
            raise ExportError(f"{path}: no such file")
        if path.endswith(".safetensors"):
            return read_safetensors(path), heads
        import torch
        try:
            obj = torch.load(path, map_location="cpu")
        except Exception as e:  # torch raises many kinds
            raise ExportError(f"{path}: cannot load as a PyTorch checkpoint ({e})")
        if isinstance(obj, dict) and "state_dict" in obj and isinstance(obj["state_dict"], dict):
            obj = obj["state_dict"]
        source = obj
    if isinstance(source, dict):
        return {k: _to_numpy(v) for k, v in source.items() if hasattr(v, "shape")}, heads
    import torch
    if isinstance(source, torch.nn.Module):
        for name, mod in source.named_modules():
            if isinstance(mod, torch.nn.MultiheadAttention):
                heads[name + "." if name else ""] = mod.num_heads
            n_bert = getattr(mod, "num_attention_heads", None)
            if n_bert is not None and hasattr(mod, "query"):  # BERT's SelfAttention: prefix is its parent
                parent = name.rsplit(".", 1)[0] + "." if "." in name else ""
                heads[parent] = int(n_bert)
        return {k: _to_numpy(v) for k, v in source.state_dict().items()}, heads
    raise ExportError(f"cannot export from a {type(source).__name__}")


# --------------------------------------------------------------- detection ---

def natural_key(s):
    """Digit runs compare as numbers: layers.2 < layers.10."""
    return [(0, int(t), "") if t.isdigit() else (1, 0, t) for t in re.findall(r"\d+|\D+", s)]


_SUFFIXES = (("in_proj_weight", "mha_packed"), ("q_proj_weight", "mha_separate"),
             ("self.query.weight", "bert"), ("self_attn.q_proj.weight", "llama_hf"),
             ("attention.wq.weight", "llama2c"))
_LOOKED_FOR = ("*in_proj_weight, *q_proj_weight, *self.query.weight, *self_attn.q_proj.weight, "
               "*attention.wq.weight")


def find_blocks(state, prefix=None):
    """[(prefix, kind)] sorted by natural order of prefix."""
    found = {}
    for key in state:
        for suffix, kind in _SUFFIXES:
            if key.endswith(suffix):
                p = key[:-len(suffix)]
                if p and not p.endswith("."):
                    continue
                if p in found and found[p] != kind:
                    raise ExportError(f"'{p}' holds both {found[p]} and {kind} weights")
                found[p] = kind
    blocks = sorted(((p, k) for p, k in found.items() if prefix is None or p.startswith(prefix)),
                    key=lambda pk: natural_key(pk[0]))
    if not blocks:
        where = f" under prefix '{prefix}'" if prefix else ""
        raise ExportError(f"no attention weights found{where} (looked for {_LOOKED_FOR})")
    return blocks


def _as_f32(a, key, src):
    a = np.asarray(a)
    if a.dtype.kind != "f":
        raise ExportError(f"{src}: tensor '{key}' has dtype {a.dtype}, not a float type")
    return a.astype(np.float32)


def _get(state, key, src):
    if key not in state:
        raise ExportError(f"{src}: missing tensor '{key}'")
    return _as_f32(state[key], key, src)


def _shape(a, want, key, src):
    if tuple(a.shape) != tuple(want):
        raise ExportError(f"{src}: '{key}' has shape {list(a.shape)}, expected {list(want)}")


LLAMA_ROPE_BASE = 10000.0


def _interleaved_to_half_split(w, heads):
    """Rows of each head reordered (2i, 2i+1) -> (i, i + hd/2), as HF's convert_llama_weights_to_hf."""
    rows, cols = w.shape
    hd = rows // heads
    return np.ascontiguousarray(w.reshape(heads, hd // 2, 2, cols).transpose(0, 2, 1, 3).reshape(rows, cols))


def llama_block(state, p, kind, heads, kv_heads, rope_base, src):
    """A Llama attention block (no bias unless all four are present)."""
    if kind == "llama_hf":
        names = [p + "self_attn." + n + "_proj.weight" for n in ("q", "k", "v", "o")]
        bias_keys = [p + "self_attn." + n + "_proj.bias" for n in ("q", "k", "v", "o")]
    else:
        names = [p + "attention." + n + ".weight" for n in ("wq", "wk", "wv", "wo")]
        bias_keys = [p + "attention." + n + ".bias" for n in ("wq", "wk", "wv", "wo")]
    wq, wk, wv, wo = (_get(state, k, src) for k in names)
    if wq.ndim != 2:
        raise ExportError(f"{src}: '{names[0]}' must be 2-D")
    d, e = wq.shape
    if heads is None or heads <= 0:
        raise ExportError(f"{src}: number of heads unknown for '{p}': pass --heads")
    if d % heads != 0:
        raise ExportError(f"{src}: {heads} heads do not divide the width {d} of '{p}'")
    hd = d // heads
    if wk.ndim != 2 or wk.shape[1] != e or wk.shape[0] % hd != 0:
        raise ExportError(f"{src}: '{names[1]}' has shape {list(wk.shape)}, expected [n_kv_heads * {hd}, {e}]")
    kv = wk.shape[0] // hd
    if kv_heads is not None and kv_heads != kv:
        raise ExportError(f"{src}: --kv-heads {kv_heads} but '{names[1]}' has {wk.shape[0]} rows = {kv} heads of {hd}")
    if heads % kv != 0:
        raise ExportError(f"{src}: {kv} K/V heads do not divide the {heads} heads of '{p}'")
    _shape(wv, (kv * hd, e), names[2], src)
    _shape(wo, (e, d), names[3], src)
    if rope_base is None:
        rope_base = LLAMA_ROPE_BASE
    rope = float(np.float32(rope_base))
    if rope != 0.0:
        if not (0.0 < rope <= float(np.float32(1e30))):
            raise ExportError(f"--rope-base {rope_base}: must be > 0 and <= 1e30 (0: no rotary embedding)")
        if hd % 2 != 0:
            raise ExportError(f"{src}: rotary embeddings need an even head_dim, '{p}' has {hd}")
    present = [k in state for k in bias_keys]
    if any(present) and not all(present):
        missing = [k for k, h in zip(bias_keys, present) if not h]
        raise ExportError(f"{src}: '{p}' has some biases but not {missing}")
    bias = all(present)
    if kind == "llama2c" and rope != 0.0:
        wq, wk = _interleaved_to_half_split(wq, heads), _interleaved_to_half_split(wk, kv)
    tensors = [wq, wk, wv, wo]
    if bias:
        bq, bk, bv, bo = (_get(state, k, src) for k in bias_keys)
        for a, k, n in zip((bq, bk, bv, bo), bias_keys, (d, kv * hd, kv * hd, e)):
            _shape(a, (n,), k, src)
        if kind == "llama2c" and rope != 0.0:
            bq = _interleaved_to_half_split(bq[:, None], heads)[:, 0]
            bk = _interleaved_to_half_split(bk[:, None], kv)[:, 0]
        tensors += [bq, bk, bv, bo]
    return e, heads, hd, e, e, bias, tensors, kv, rope


def block_weights(state, p, kind, heads, src, kv_heads=None, rope_base=None):
    """(E, H, head_dim, kdim, vdim, bias, [wq, wk, wv, wo, (bq, bk, bv, bo)], n_kv_heads, rope_base)."""
    if kind in ("llama_hf", "llama2c"):
        return llama_block(state, p, kind, heads, kv_heads, rope_base, src)
    if kind == "bert":
        names = [p + "self.query.weight", p + "self.key.weight", p + "self.value.weight",
                 p + "output.dense.weight"]
        wq, wk, wv, wo = (_get(state, k, src) for k in names)
        if wq.ndim != 2:
            raise ExportError(f"{src}: '{names[0]}' must be 2-D")
        d, e = wq.shape
        kdim = vdim = e
        for a, k, want in zip((wk, wv, wo), names[1:], ((d, e), (d, e), (e, d))):
            _shape(a, want, k, src)
        bias_keys = [p + "self.query.bias", p + "self.key.bias", p + "self.value.bias", p + "output.dense.bias"]
    else:
        if p + "bias_k" in state or p + "bias_v" in state:
            raise ExportError(f"{src}: '{p}' uses add_bias_kv, which attn does not support")
        wo = _get(state, p + "out_proj.weight", src)
        if wo.ndim != 2 or wo.shape[0] != wo.shape[1]:
            raise ExportError(f"{src}: '{p}out_proj.weight' must be square [E, E]")
        e = d = wo.shape[0]
        if kind == "mha_packed":
            w = _get(state, p + "in_proj_weight", src)
            _shape(w, (3 * e, e), p + "in_proj_weight", src)
            wq, wk, wv = w[:e], w[e:2 * e], w[2 * e:]
            kdim = vdim = e
        else:
            wq = _get(state, p + "q_proj_weight", src)
            wk = _get(state, p + "k_proj_weight", src)
            wv = _get(state, p + "v_proj_weight", src)
            _shape(wq, (e, e), p + "q_proj_weight", src)
            if wk.ndim != 2 or wk.shape[0] != e:
                raise ExportError(f"{src}: '{p}k_proj_weight' must be [E, kdim] with E = {e}")
            if wv.ndim != 2 or wv.shape[0] != e:
                raise ExportError(f"{src}: '{p}v_proj_weight' must be [E, vdim] with E = {e}")
            kdim, vdim = wk.shape[1], wv.shape[1]
        bias_keys = [p + "in_proj_bias", p + "out_proj.bias"]
    present = [k in state for k in bias_keys]
    if any(present) and not all(present):
        missing = [k for k, h in zip(bias_keys, present) if not h]
        raise ExportError(f"{src}: '{p}' has some biases but not {missing}")
    bias = all(present)
    tensors = [wq, wk, wv, wo]
    if bias:
        if kind == "bert":
            bq, bk, bv, bo = (_get(state, k, src) for k in bias_keys)
        else:
            b = _get(state, bias_keys[0], src)
            _shape(b, (3 * d,), bias_keys[0], src)
            bq, bk, bv = b[:d], b[d:2 * d], b[2 * d:]
            bo = _get(state, bias_keys[1], src)
        for a, k, n in zip((bq, bk, bv, bo), ("bq", "bk", "bv", "bo"), (d, d, d, e)):
            _shape(a, (n,), p + k, src)
        tensors += [bq, bk, bv, bo]
    if heads is None or heads <= 0:
        raise ExportError(f"{src}: number of heads unknown for '{p}': pass --heads")
    if d % heads != 0:
        raise ExportError(f"{src}: {heads} heads do not divide the width {d} of '{p}'")
    return e, heads, d // heads, kdim, vdim, bias, tensors, heads, 0.0


# ----------------------------------------------------------------- writing ---

def _align_up(n, a):
    return (n + a - 1) // a * a


def write_attn(blocks, user_tensors, data_align=16):
    """blocks: [(E, H, head_dim, kdim, vdim, bias, [f32 arrays], n_kv_heads, rope_base)];
    user_tensors: [(name, array)]. Returns the file's bytes (canonical form)."""
    tensors = []  # (name, role, block, f32 array)
    for i, (e, h, hd, kdim, vdim, bias, ws, _, _) in enumerate(blocks):
        roles = ["wq", "wk", "wv", "wo"] + (["bq", "bk", "bv", "bo"] if bias else [])
        for role, w in zip(roles, ws):
            tensors.append((f"block.{i}.{role}", ROLE[role], i, w))
    for name, arr in user_tensors:
        tensors.append((name, ROLE["user"], NO_BLOCK, arr))
    seen = set()
    for name, _, _, arr in tensors:
        raw = name.encode("utf-8")
        if not raw or len(raw) >= NAME_BYTES or b"\0" in raw:
            raise ExportError(f"tensor name '{name}' must have 1..{NAME_BYTES - 1} bytes")
        if name in seen:
            raise ExportError(f"tensor name '{name}' used twice")
        seen.add(name)
        if not 1 <= arr.ndim <= 4 or 0 in arr.shape:
            raise ExportError(f"tensor '{name}' has shape {list(arr.shape)}: rank must be 1..4, no zero dims")

    blocks_at = HEADER_SIZE
    tensors_at = blocks_at + BLOCK_SIZE * len(blocks)
    data_at = _align_up(tensors_at + TENSOR_SIZE * len(tensors), data_align)
    offsets, cursor = [], 0
    payloads = []
    for _, _, _, arr in tensors:
        cursor = _align_up(cursor, data_align)
        offsets.append(cursor)
        raw = np.ascontiguousarray(arr, dtype="<f4").tobytes()
        payloads.append(raw)
        cursor += len(raw)
    file_size = data_at + cursor
    out = bytearray(file_size)
    struct.pack_into("<IHHIIQIIIIQQQ", out, 0, MAGIC, VERSION, HEADER_SIZE, 0, 0, file_size, data_align,
                     len(blocks), len(tensors), 0, blocks_at, tensors_at, data_at)
    for i, (e, h, hd, kdim, vdim, bias, _, kv, rope) in enumerate(blocks):
        # Canonical: n_kv_heads 0 when K/V have all H heads; rope as float32 bits, 0 for none.
        struct.pack_into("<IIIIIHHIf8I", out, blocks_at + i * BLOCK_SIZE, e, h, hd, kdim, vdim, DTYPE_F32,
                         BLOCK_BIAS if bias else 0, 0 if kv == h else kv, rope, *([0] * 8))
    for i, (name, role, blk, arr) in enumerate(tensors):
        dims = list(arr.shape) + [0] * (4 - arr.ndim)
        struct.pack_into("<64sHHHHII4IQQ2Q", out, tensors_at + i * TENSOR_SIZE, name.encode("utf-8"), role,
                         DTYPE_F32, 0, arr.ndim, blk, 0, *dims, offsets[i], len(payloads[i]), 0, 0)
        out[data_at + offsets[i]:data_at + offsets[i] + len(payloads[i])] = payloads[i]
    struct.pack_into("<I", out, 8, zlib.crc32(bytes(out[12:])) & 0xFFFFFFFF)
    return bytes(out)


def write_file_atomic(path, data):
    """Write to a temporary file beside `path`, then rename: no partial file."""
    d = os.path.dirname(os.path.abspath(path))
    fd, tmp = tempfile.mkstemp(prefix=".attn_export.", dir=d)
    try:
        with os.fdopen(fd, "wb") as f:
            f.write(data)
        umask = os.umask(0)
        os.umask(umask)
        os.chmod(tmp, 0o666 & ~umask)  # mkstemp makes 0600; give what open() would
        os.replace(tmp, path)
    except BaseException:
        if os.path.exists(tmp):
            os.unlink(tmp)
        raise


def parse_extras(items):
    """['name=key', ...] or {name: key} -> [(name, key)]."""
    if items is None:
        return []
    if isinstance(items, dict):
        return list(items.items())
    out = []
    for it in items:
        if "=" not in it:
            raise ExportError(f"--extra '{it}': expected NAME=KEY")
        name, key = it.split("=", 1)
        out.append((name, key))
    return out


def export(source, out_path=None, heads=None, prefix=None, extras=None, data_align=16, kv_heads=None,
           rope_base=None):
    """Export the attention blocks of `source` (module, state_dict, or path of
    a .pt/.bin/.safetensors file) to `out_path` (if given); returns the bytes.
    heads: an int for every block, or None to take it from the modules.
    extras: user tensors to add, {name_in_file: key_in_state} or ['name=key'].
    kv_heads, rope_base: for Llama blocks (default: from k_proj's rows; 10000)."""
    src = os.fspath(source) if isinstance(source, (str, os.PathLike)) else type(source).__name__
    state, known_heads = load_state(source)
    blocks = []
    for p, kind in find_blocks(state, prefix):
        h = heads if heads is not None else known_heads.get(p)
        blocks.append(block_weights(state, p, kind, h, src, kv_heads, rope_base))
    users = []
    for name, key in parse_extras(extras):
        if key not in state:
            raise ExportError(f"{src}: --extra {name}={key}: no tensor '{key}'")
        users.append((name, _as_f32(state[key], key, src)))
    data = write_attn(blocks, users, data_align)
    if out_path is not None:
        write_file_atomic(out_path, data)
    return data


def main(argv=None):
    ap = argparse.ArgumentParser(description="Export PyTorch attention weights to a .attn file (float32).")
    ap.add_argument("model", help=".pt/.bin checkpoint (a state_dict) or .safetensors file")
    ap.add_argument("--heads", type=int, help="number of heads of every block")
    ap.add_argument("--prefix", help="only the layers whose names start with this")
    ap.add_argument("--kv-heads", type=int, help="K/V heads of Llama blocks (default: k_proj rows / head_dim)")
    ap.add_argument("--rope-base", type=float, help="RoPE base of Llama blocks (default 10000; 0: none)")
    ap.add_argument("--extra", action="append", default=[], metavar="NAME=KEY",
                    help="also store tensor KEY of the checkpoint as user tensor NAME")
    ap.add_argument("-o", "--output", required=True, help="the .attn file to write")
    args = ap.parse_args(argv)
    try:
        data = export(args.model, args.output, heads=args.heads, prefix=args.prefix, extras=args.extra,
                      kv_heads=args.kv_heads, rope_base=args.rope_base)
    except (ExportError, OSError) as e:
        print(f"attn_export: {e}", file=sys.stderr)
        return 1
    print(f"attn_export: wrote {args.output} ({len(data)} bytes)")
    return 0


if __name__ == "__main__":
    sys.exit(main())
