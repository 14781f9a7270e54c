#!/usr/bin/python3
"""Export PyTorch attention weights and whole transformer models to .attn files (float32).

Whole models (format v3): export_model() takes Hugging Face BertModel /
BertFor..., RobertaModel, DistilBertModel, LlamaForCausalLM (MistralForCausalLM, Qwen2ForCausalLM) and
GPT2Model / GPT2LMHeadModel weights with their config (the rules and bytes
of `attn import MODEL.safetensors --config config.json`); export_encoder()
takes an nn.TransformerEncoder with the caller's embedding (and optional
learned positions, final norm, head). Attention blocks (formats v1/v2):

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

Whole models:
  attn_export.py MODEL.{pt,bin,safetensors} --config config.json [--byte-vocab] -o OUT.attn

Python:
  from attn_export import export, export_model, export_encoder
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
# Whole models (format v3): header flag, the 64-byte ModelRecord after the header, layer and model roles.
VERSION_MODEL = 3
HEADER_MODEL = 1
MODEL_RECORD_SIZE = 64
LAYER_ROLE = {"norm1_weight": 28, "norm1_bias": 29, "norm2_weight": 30, "norm2_bias": 31, "ffn_w1": 32,
              "ffn_b1": 33, "ffn_w2": 34, "ffn_b2": 35, "ffn_w3": 36, "ffn_b3": 37}
MODEL_ROLE = {"token_embedding": 64, "position_embedding": 65, "type_embedding": 66,
              "embedding_norm_weight": 67, "embedding_norm_bias": 68, "final_norm_weight": 69,
              "final_norm_bias": 70, "lm_head": 71}
NORM = {"layer_norm": 1, "rms_norm": 2}
ACTIVATION = {"gelu": 1, "gelu_tanh": 2, "relu": 3, "silu": 4}
MODEL_FLAG = {"pre_norm": 1 << 0, "gated_ffn": 1 << 1, "ffn_bias": 1 << 2, "norm_bias": 1 << 3,
              "learned_positions": 1 << 4, "embedding_norm": 1 << 5, "final_norm": 1 << 6, "causal": 1 << 7,
              "head_tied": 1 << 8, "head_untied": 1 << 9, "byte_vocab": 1 << 10}


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


def _write(blocks, tensors, record=None, data_align=16):
    """blocks: [(E, H, head_dim, kdim, vdim, bias, n_kv_heads, rope_base)]; tensors: [(name, role, block,
    array)] in file order; record: the packed 64-byte ModelRecord of a whole model (v3) or None.
    Returns the file's bytes (canonical form)."""
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

    blocks_at = HEADER_SIZE + (MODEL_RECORD_SIZE if record is not None else 0)
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
    version, flags = (VERSION_MODEL, HEADER_MODEL) if record is not None else (VERSION, 0)
    struct.pack_into("<IHHIIQIIIIQQQ", out, 0, MAGIC, version, HEADER_SIZE, 0, flags, file_size, data_align,
                     len(blocks), len(tensors), 0, blocks_at, tensors_at, data_at)
    if record is not None:
        out[HEADER_SIZE:HEADER_SIZE + MODEL_RECORD_SIZE] = record
    for i, (e, h, hd, kdim, vdim, bias, kv, rope) in enumerate(blocks):
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
    records = [(e, h, hd, kdim, vdim, bias, kv, rope) for (e, h, hd, kdim, vdim, bias, _, kv, rope) in blocks]
    return _write(records, tensors, None, data_align)


# ------------------------------------------------------------ whole models ---
#
# A whole model (format v3) is a config (the fields of attn::TransformerConfig,
# below), per-layer arrays and model arrays, written in the canonical order of
# tools/cli/model_writer.h (add_transformer_f32): for each layer its attention
# block (wq wk wv wo, bq bk bv bo) then norm1_weight norm1_bias norm2_weight
# norm2_bias ffn_w1 ffn_b1 ffn_w2 ffn_b2 ffn_w3 ffn_b3 (those present), then the
# model tensors in role order, then user tensors. `attn import` writes the
# same bytes for the same weights.

MAX_DIM, MAX_HEADS, MAX_SEQ, MAX_LAYERS = 4096, 64, 65536, 64  # include/attn/config.h, transformer.h
MAX_VOCAB, MAX_TYPE_VOCAB = 1 << 24, 1 << 16


def _f32(x):
    return float(np.float32(x))


def _layer_tensors(cfg):
    """[(name, role, present, shape)] of one layer, in file order (after the attention block)."""
    e, f = cfg["embed_dim"], cfg["ffn_dim"]
    nb = cfg["norm"] == "layer_norm" and cfg["norm_bias"]
    fb, g = cfg["ffn_bias"], cfg["gated_ffn"]
    return [("norm1_weight", True, (e,)), ("norm1_bias", nb, (e,)), ("norm2_weight", True, (e,)),
            ("norm2_bias", nb, (e,)), ("ffn_w1", True, (f, e)), ("ffn_b1", fb, (f,)), ("ffn_w2", True, (e, f)),
            ("ffn_b2", fb, (e,)), ("ffn_w3", g, (f, e)), ("ffn_b3", g and fb, (f,))]


def _model_tensors(cfg):
    e, v = cfg["embed_dim"], cfg["vocab_size"]
    nb = cfg["norm"] == "layer_norm" and cfg["norm_bias"]
    return [("token_embedding", True, (v, e)),
            ("position_embedding", cfg["learned_positions"], (cfg["max_positions"], e)),
            ("type_embedding", cfg["type_vocab_size"] > 0, (cfg["type_vocab_size"], e)),
            ("embedding_norm_weight", cfg["embedding_norm"], (e,)),
            ("embedding_norm_bias", cfg["embedding_norm"] and nb, (e,)),
            ("final_norm_weight", cfg["final_norm"], (e,)), ("final_norm_bias", cfg["final_norm"] and nb, (e,)),
            ("lm_head", cfg["head"] == "untied", (v, e))]


def write_model(cfg, layers, model, user=(), byte_vocab=False, data_align=16):
    """cfg: dict of attn::TransformerConfig's fields (norm "layer_norm"/"rms_norm", activation
    "gelu"/"gelu_tanh"/"relu"/"silu", head "none"/"tied"/"untied"); layers: [dict name -> array] with
    wq wk wv wo (bq bk bv bo) and the layer tensors; model: dict name -> array; user: [(name, array)].
    Returns the .attn bytes (v3, canonical)."""
    e, h = cfg["embed_dim"], cfg["num_heads"]
    hd = cfg.get("head_dim") or e // h
    kv = cfg.get("num_kv_heads") or h
    if len(layers) != cfg["num_layers"]:
        raise ExportError(f"{len(layers)} layers given, the config says {cfg['num_layers']}")
    if byte_vocab and cfg["vocab_size"] < 256:
        raise ExportError(f"byte_vocab: the vocabulary has {cfg['vocab_size']} tokens, fewer than the 256 bytes")
    layer_norm = cfg["norm"] == "layer_norm"
    flags = 0
    for k in ("pre_norm", "gated_ffn", "ffn_bias", "learned_positions", "embedding_norm", "final_norm", "causal"):
        if cfg[k]:
            flags |= MODEL_FLAG[k]
    if layer_norm and cfg["norm_bias"]:
        flags |= MODEL_FLAG["norm_bias"]
    if cfg["head"] != "none":
        flags |= MODEL_FLAG["head_" + cfg["head"]]
    if byte_vocab:
        flags |= MODEL_FLAG["byte_vocab"]
    record = struct.pack("<IIIIHBBfI9I", cfg["vocab_size"], cfg["max_positions"], cfg["type_vocab_size"],
                         cfg["ffn_dim"], DTYPE_F32, NORM[cfg["norm"]], ACTIVATION[cfg["activation"]],
                         cfg["norm_eps"], flags, *([0] * 9))
    bias = cfg["attention_bias"]
    rope = _f32(cfg.get("rope_base") or 0.0)
    blocks = [(e, h, hd, e, e, bias, kv, rope)] * len(layers)

    def take(d, name, present, shape, full, block, role):
        a = d.get(name)
        if not present:
            if a is not None:
                raise ExportError(f"'{full}' given but the config has none")
            return
        if a is None:
            raise ExportError(f"missing '{full}'")
        a = np.asarray(a, dtype=np.float32)
        if tuple(a.shape) != tuple(shape):
            raise ExportError(f"'{full}' has shape {list(a.shape)}, expected {list(shape)}")
        tensors.append((full, role, block, a))

    tensors = []
    d, dkv = h * hd, kv * hd
    for i, L in enumerate(layers):
        att = [("wq", (d, e)), ("wk", (dkv, e)), ("wv", (dkv, e)), ("wo", (e, d)), ("bq", (d,)), ("bk", (dkv,)),
               ("bv", (dkv,)), ("bo", (e,))]
        for name, shape in att:
            take(L, name, bias or name[0] == "w", shape, f"block.{i}.{name}", i, ROLE[name])
        for name, present, shape in _layer_tensors(cfg):
            take(L, name, present, shape, f"block.{i}.{name}", i, LAYER_ROLE[name])
    for name, present, shape in _model_tensors(cfg):
        take(model, name, present, shape, f"model.{name}", NO_BLOCK, MODEL_ROLE[name])
    for name, arr in user:
        tensors.append((name, ROLE["user"], NO_BLOCK, np.asarray(arr, dtype=np.float32)))
    return _write(blocks, tensors, record, data_align)


class _Config:
    """config.json fields with the rules of `attn import` (tools/cli/import_model.cpp)."""

    def __init__(self, d, src):
        if not isinstance(d, dict):
            raise ExportError(f"{src}: not a JSON object")
        self.d, self.src = d, src

    def field(self, k):
        return self.d.get(k)

    def bad(self, k, what):
        raise ExportError(f"{self.src}: '{k}' {what}")

    def integer(self, k, lo, hi, fallback=None):
        v = self.field(k)
        if v is None:
            if fallback is None:
                self.bad(k, "is missing")
            return fallback
        if isinstance(v, bool) or not isinstance(v, int):
            self.bad(k, "must be an integer")
        if not lo <= v <= hi:
            self.bad(k, f"= {v} is out of range ({lo} .. {hi})")
        return v

    def number(self, k, fallback):
        v = self.field(k)
        if v is None:
            return fallback
        if isinstance(v, bool) or not isinstance(v, (int, float)):
            self.bad(k, "must be a number")
        return float(v)

    def boolean(self, k, fallback):
        v = self.field(k)
        if v is None:
            return fallback
        if not isinstance(v, bool):
            self.bad(k, "must be true or false")
        return v

    def string(self, k, fallback):
        v = self.field(k)
        if v is None:
            return fallback
        if not isinstance(v, str):
            self.bad(k, "must be a string")
        return v

    def eps(self, k, fallback):
        e = _f32(self.number(k, fallback))
        if not 0.0 < e < 1.0:
            self.bad(k, "must be a number in (0, 1)")
        return e


class _Source:
    def __init__(self, state, src):
        self.state, self.src, self.used = state, src, set()

    def get(self, k, shape, why):
        if k not in self.state:
            raise ExportError(f"{self.src}: missing tensor '{k}'")
        a = np.asarray(self.state[k])
        if tuple(a.shape) != tuple(shape):
            raise ExportError(f"{self.src}: '{k}' has shape {list(a.shape)}, expected {list(shape)} ({why})")
        self.used.add(k)
        return _as_f32(a, k, self.src)

    def leftovers(self, layer_prefix, what):
        """Unused float tensors outside the layers, sorted by name; an unused layer key is an error."""
        out = []
        for k, a in self.state.items():
            if k in self.used or k.endswith("rotary_emb.inv_freq"):
                continue
            if k.startswith(layer_prefix):
                raise ExportError(f"{self.src}: '{k}' is not a tensor of {what} (a layer beyond num_hidden_layers, "
                                  "or a layout attn does not know)")
            a = np.asarray(a)
            if a.dtype.kind != "f":
                continue  # e.g. BERT's position_ids buffer
            if not k or len(k.encode("utf-8")) >= NAME_BYTES:
                raise ExportError(f"{self.src}: '{k}' cannot be stored as a user tensor (names have 1..63 bytes)")
            if not 1 <= a.ndim <= 4:
                raise ExportError(f"{self.src}: '{k}' cannot be stored as a user tensor (rank {a.ndim}, not 1..4)")
            out.append((k, a.astype(np.float32)))
        return sorted(out, key=lambda kv: kv[0].encode("utf-8"))


_ARCH_KIND = (("Bert", "bert"), ("Roberta", "roberta"), ("DistilBert", "distilbert"), ("Llama", "llama"),
              ("Mistral", "mistral"), ("Qwen2", "qwen2"), ("GPT2", "gpt2"))
_KINDS = ("bert", "roberta", "distilbert", "llama", "mistral", "qwen2", "gpt2")


def _model_kind(src, c):
    t = c.string("model_type", "")
    if not t:
        for a in c.field("architectures") or []:
            if isinstance(a, str):
                t = next((kind for head, kind in _ARCH_KIND if a.startswith(head)), "")
            if t:
                break
    if not t:
        for k in src.state:
            if k.endswith("embeddings.word_embeddings.weight"):
                t = "bert"
            if k == "model.embed_tokens.weight":
                t = "llama"
            if k in ("wte.weight", "transformer.wte.weight"):
                t = "gpt2"
            if t:
                break
    if not t:
        raise ExportError(f"{c.src}: cannot tell the model type: no 'model_type' or 'architectures', and "
                          f"{src.src} has none of 'embeddings.word_embeddings.weight' (BERT), "
                          "'model.embed_tokens.weight' (Llama), 'wte.weight' (GPT-2)")
    if t not in _KINDS:
        raise ExportError(f"{c.src}: model_type '{t}' is not supported ({', '.join(_KINDS)})")
    return t


_BERT_ACT = {"gelu": "gelu", "gelu_new": "gelu_tanh", "gelu_pytorch_tanh": "gelu_tanh", "relu": "relu"}


# The key names of a post-norm encoder layer (BERT's, or DistilBERT's for the same tensors), and the
# config fields behind E and F for the shape errors (tools/cli/import_model.cpp has the same table).
_BERT_KEYS = dict(layers="encoder.layer.", q="attention.self.query.", k="attention.self.key.",
                  v="attention.self.value.", o="attention.output.dense.", norm1="attention.output.LayerNorm.",
                  w1="intermediate.dense.", w2="output.dense.", norm2="output.LayerNorm.", embed="hidden_size",
                  ffn="intermediate_size")
_DISTILBERT_KEYS = dict(layers="transformer.layer.", q="attention.q_lin.", k="attention.k_lin.", v="attention.v_lin.",
                        o="attention.out_lin.", norm1="sa_layer_norm.", w1="ffn.lin1.", w2="ffn.lin2.",
                        norm2="output_layer_norm.", embed="dim", ffn="hidden_dim")


def _layer_norm(s, p, e, why):
    """LayerNorm weight and bias under p (HF names them weight/bias, older BERT checkpoints gamma/beta)."""
    old = p + "weight" not in s.state and p + "gamma" in s.state
    return s.get(p + ("gamma" if old else "weight"), (e,), why), s.get(p + ("beta" if old else "bias"), (e,), why)


def _encoder_layers(s, prefix, keys, n, e, f):
    E, F, EF = keys["embed"], f"{keys['ffn']}, {keys['embed']}", f"{keys['embed']}, {keys['ffn']}"
    layers = []
    for i in range(n):
        p = f"{prefix}{keys['layers']}{i}."
        L = {}
        for w in "qkvo":
            L["w" + w] = s.get(p + keys[w] + "weight", (e, e), E)
        for w in "qkvo":
            L["b" + w] = s.get(p + keys[w] + "bias", (e,), E)
        L["norm1_weight"], L["norm1_bias"] = _layer_norm(s, p + keys["norm1"], e, E)
        L["ffn_w1"] = s.get(p + keys["w1"] + "weight", (f, e), F)
        L["ffn_b1"] = s.get(p + keys["w1"] + "bias", (f,), keys["ffn"])
        L["ffn_w2"] = s.get(p + keys["w2"] + "weight", (e, f), EF)
        L["ffn_b2"] = s.get(p + keys["w2"] + "bias", (e,), E)
        L["norm2_weight"], L["norm2_bias"] = _layer_norm(s, p + keys["norm2"], e, E)
        layers.append(L)
    return layers


def _embeddings_prefix(s, what):
    """The prefix of the one `embeddings.word_embeddings.weight` in the state ("" or "bert.", ...)."""
    emb = "embeddings.word_embeddings.weight"
    prefix = None
    for k in s.state:
        if k.endswith(emb):
            p = k[:-len(emb)]
            if p and not p.endswith("."):
                continue
            if prefix is not None and p != prefix:
                raise ExportError(f"{s.src}: two models in one file ('{prefix}{emb}' and '{k}')")
            prefix = p
    if prefix is None:
        raise ExportError(f"{s.src}: missing tensor '{emb}' ({what}'s token embedding)")
    return prefix


def _hf_bert(s, c, roberta=False):
    """BertModel; roberta: RobertaModel, BERT's keys with positions that start after pad_token_id."""
    prefix = _embeddings_prefix(s, "a RobertaModel" if roberta else "a BertModel")
    e = c.integer("hidden_size", 1, MAX_DIM)
    n = c.integer("num_hidden_layers", 1, MAX_LAYERS)
    h = c.integer("num_attention_heads", 1, MAX_HEADS)
    if e % h:
        c.bad("num_attention_heads", f"= {h} does not divide hidden_size {e}")
    f = c.integer("intermediate_size", 1, MAX_DIM)
    act = c.string("hidden_act", "gelu")
    if act not in _BERT_ACT:
        c.bad("hidden_act", f"= '{act}' is not supported (gelu, gelu_new, gelu_pytorch_tanh, relu)")
    eps = c.eps("layer_norm_eps", 1e-12)
    pos = c.integer("max_position_embeddings", 1, MAX_SEQ)
    first = c.integer("pad_token_id", 0, MAX_SEQ, 1) + 1 if roberta else 0
    if first >= pos:
        c.bad("max_position_embeddings", f"= {pos} leaves no position after pad_token_id + 1 = {first}")
    types = c.integer("type_vocab_size", 0, MAX_TYPE_VOCAB, 2)
    v = c.integer("vocab_size", 1, MAX_VOCAB)
    pe = c.string("position_embedding_type", "absolute")
    if pe != "absolute":
        c.bad("position_embedding_type", f"= '{pe}' is not supported (absolute)")
    cfg = dict(vocab_size=v, embed_dim=e, num_layers=n, num_heads=h, num_kv_heads=0, head_dim=e // h, ffn_dim=f,
               max_positions=pos - first, type_vocab_size=types, norm="layer_norm", norm_eps=eps,
               activation=_BERT_ACT[act],
               head="none", rope_base=0.0, pre_norm=False, gated_ffn=False, attention_bias=True, ffn_bias=True,
               norm_bias=True, learned_positions=True, embedding_norm=True, final_norm=False, causal=False)

    pp = prefix + "embeddings."
    model = {"token_embedding": s.get(pp + "word_embeddings.weight", (v, e), "vocab_size, hidden_size"),
             "position_embedding": s.get(pp + "position_embeddings.weight", (pos, e),
                                         "max_position_embeddings, hidden_size")[first:]}
    if types > 0:
        model["type_embedding"] = s.get(pp + "token_type_embeddings.weight", (types, e), "type_vocab_size, hidden_size")
    model["embedding_norm_weight"], model["embedding_norm_bias"] = _layer_norm(s, pp + "LayerNorm.", e, "hidden_size")
    layers = _encoder_layers(s, prefix, _BERT_KEYS, n, e, f)
    user = s.leftovers(prefix + _BERT_KEYS["layers"],
                       f"a {'RobertaModel' if roberta else 'BertModel'} with num_hidden_layers = {n}")
    return cfg, layers, model, user


def _clamp_to_window(c, key, pos):
    """max_positions held at or below a sliding window of w keys, which changes nothing up to w tokens."""
    return min(pos, c.integer(key, 1, 2**31 - 1, 2**31 - 1))


def _hf_distilbert(s, c):
    """DistilBertModel: BERT's post-norm layer under other names and config keys, no token types, eps 1e-12."""
    prefix = _embeddings_prefix(s, "a DistilBertModel")
    e = c.integer("dim", 1, MAX_DIM)
    n = c.integer("n_layers", 1, MAX_LAYERS)
    h = c.integer("n_heads", 1, MAX_HEADS)
    if e % h:
        c.bad("n_heads", f"= {h} does not divide dim {e}")
    f = c.integer("hidden_dim", 1, MAX_DIM)
    act = c.string("activation", "gelu")
    if act not in ("gelu", "relu"):
        c.bad("activation", f"= '{act}' is not supported (gelu, relu)")
    pos = c.integer("max_position_embeddings", 1, MAX_SEQ)
    v = c.integer("vocab_size", 1, MAX_VOCAB)
    cfg = dict(vocab_size=v, embed_dim=e, num_layers=n, num_heads=h, num_kv_heads=0, head_dim=e // h, ffn_dim=f,
               max_positions=pos, type_vocab_size=0, norm="layer_norm", norm_eps=_f32(1e-12), activation=act,
               head="none", rope_base=0.0, pre_norm=False, gated_ffn=False, attention_bias=True, ffn_bias=True,
               norm_bias=True, learned_positions=True, embedding_norm=True, final_norm=False, causal=False)
    pp = prefix + "embeddings."
    model = {"token_embedding": s.get(pp + "word_embeddings.weight", (v, e), "vocab_size, dim"),
             "position_embedding": s.get(pp + "position_embeddings.weight", (pos, e), "max_position_embeddings, dim")}
    model["embedding_norm_weight"], model["embedding_norm_bias"] = _layer_norm(s, pp + "LayerNorm.", e, "dim")
    layers = _encoder_layers(s, prefix, _DISTILBERT_KEYS, n, e, f)
    user = s.leftovers(prefix + _DISTILBERT_KEYS["layers"], f"a DistilBertModel with n_layers = {n}")
    return cfg, layers, model, user


def _hf_llama(s, c, family="llama"):
    """LlamaForCausalLM, MistralForCausalLM (a sliding window), Qwen2ForCausalLM (q/k/v biases, no o_proj bias)."""
    qwen2 = family == "qwen2"
    e = c.integer("hidden_size", 1, MAX_DIM)
    n = c.integer("num_hidden_layers", 1, MAX_LAYERS)
    h = c.integer("num_attention_heads", 1, MAX_HEADS)
    kv = c.integer("num_key_value_heads", 1, h, h)
    if h % kv:
        c.bad("num_key_value_heads", f"= {kv} does not divide num_attention_heads {h}")
    if c.field("head_dim") is None and e % h:
        c.bad("num_attention_heads", f"= {h} does not divide hidden_size {e}")
    hd = c.integer("head_dim", 1, MAX_DIM // h, e // h)
    f = c.integer("intermediate_size", 1, MAX_DIM)
    act = c.string("hidden_act", "silu")
    if act != "silu":
        c.bad("hidden_act", f"= '{act}' is not supported for Llama (silu)")
    eps = c.eps("rms_norm_eps", 1e-6)
    theta = _f32(c.number("rope_theta", 10000.0))
    if not 0.0 < theta <= _f32(1e30):
        c.bad("rope_theta", "must be a number in (0, 1e30]")
    if hd % 2:
        c.bad("head_dim", f"= {hd} is odd: rotary embeddings need it even")
    if c.field("rope_scaling") is not None:
        c.bad("rope_scaling", "is not supported (only plain RoPE: null)")
    pos = c.integer("max_position_embeddings", 1, MAX_SEQ)
    v = c.integer("vocab_size", 1, MAX_VOCAB)
    if family == "mistral":
        pos = _clamp_to_window(c, "sliding_window", pos)
    if qwen2 and c.boolean("use_sliding_window", False):
        pos = _clamp_to_window(c, "sliding_window", pos)
    att_bias = qwen2 or c.boolean("attention_bias", False)
    mlp_bias = not qwen2 and c.boolean("mlp_bias", False)
    tied = c.boolean("tie_word_embeddings", False)
    cfg = dict(vocab_size=v, embed_dim=e, num_layers=n, num_heads=h, num_kv_heads=kv, head_dim=hd, ffn_dim=f,
               max_positions=pos, type_vocab_size=0, norm="rms_norm", norm_eps=eps, activation="silu",
               head="tied" if tied else "untied", rope_base=theta, pre_norm=True, gated_ffn=True,
               attention_bias=att_bias, ffn_bias=mlp_bias, norm_bias=False, learned_positions=False,
               embedding_norm=False, final_norm=True, causal=True)
    d, dkv = h * hd, kv * hd
    model = {"token_embedding": s.get("model.embed_tokens.weight", (v, e), "vocab_size, hidden_size")}
    layers = []
    for i in range(n):
        p = f"model.layers.{i}."
        a = p + "self_attn."
        heads, kvs = "num_attention_heads * head_dim, hidden_size", "num_key_value_heads * head_dim, hidden_size"
        L = {"wq": s.get(a + "q_proj.weight", (d, e), heads), "wk": s.get(a + "k_proj.weight", (dkv, e), kvs),
             "wv": s.get(a + "v_proj.weight", (dkv, e), kvs),
             "wo": s.get(a + "o_proj.weight", (e, d), "hidden_size, num_attention_heads * head_dim")}
        if att_bias:
            why = "Qwen2 has q/k/v biases" if qwen2 else "attention_bias"
            for name, key, shape in (("bq", "q", d), ("bk", "k", dkv), ("bv", "v", dkv), ("bo", "o", e)):
                if qwen2 and key == "o":  # Qwen2's o_proj has no bias: a zero one adds nothing
                    L[name] = np.zeros(e, np.float32)
                else:
                    L[name] = s.get(a + key + "_proj.bias", (shape,), why)
        L["norm1_weight"] = s.get(p + "input_layernorm.weight", (e,), "hidden_size")
        L["norm2_weight"] = s.get(p + "post_attention_layernorm.weight", (e,), "hidden_size")
        L["ffn_w1"] = s.get(p + "mlp.gate_proj.weight", (f, e), "intermediate_size, hidden_size")
        L["ffn_w3"] = s.get(p + "mlp.up_proj.weight", (f, e), "intermediate_size, hidden_size")
        L["ffn_w2"] = s.get(p + "mlp.down_proj.weight", (e, f), "hidden_size, intermediate_size")
        if mlp_bias:
            L["ffn_b1"] = s.get(p + "mlp.gate_proj.bias", (f,), "mlp_bias")
            L["ffn_b3"] = s.get(p + "mlp.up_proj.bias", (f,), "mlp_bias")
            L["ffn_b2"] = s.get(p + "mlp.down_proj.bias", (e,), "mlp_bias")
        layers.append(L)
    model["final_norm_weight"] = s.get("model.norm.weight", (e,), "hidden_size")
    if not tied:
        model["lm_head"] = s.get("lm_head.weight", (v, e), "vocab_size, hidden_size; tie_word_embeddings is false")
    elif "lm_head.weight" in s.state:
        if not np.array_equal(s.get("lm_head.weight", (v, e), "vocab_size, hidden_size"), model["token_embedding"]):
            raise ExportError(f"{s.src}: 'lm_head.weight' differs from 'model.embed_tokens.weight' but {c.src} "
                              "says tie_word_embeddings")
    arch = {"llama": "LlamaForCausalLM", "mistral": "MistralForCausalLM", "qwen2": "Qwen2ForCausalLM"}[family]
    user = s.leftovers("model.layers.", f"a {arch} with num_hidden_layers = {n}")
    return cfg, layers, model, user


_GPT2_ACT = {"gelu_new": "gelu_tanh", "gelu_pytorch_tanh": "gelu_tanh", "gelu_fast": "gelu_tanh", "gelu": "gelu",
             "relu": "relu"}


def _hf_gpt2(s, c):
    """GPT2Model (last hidden state after ln_f) or GPT2LMHeadModel (keys under "transformer.", tied head)."""
    lm = "transformer.wte.weight" in s.state
    prefix = "transformer." if lm else ""
    if not lm and "wte.weight" not in s.state:
        raise ExportError(f"{s.src}: missing tensor 'wte.weight' or 'transformer.wte.weight' (GPT-2's token "
                          "embedding)")
    e = c.integer("n_embd", 1, MAX_DIM)
    n = c.integer("n_layer", 1, MAX_LAYERS)
    h = c.integer("n_head", 1, MAX_HEADS)
    if e % h:
        c.bad("n_head", f"= {h} does not divide n_embd {e}")
    f = c.integer("n_inner", 1, MAX_DIM, 4 * e)
    if f > MAX_DIM:
        c.bad("n_inner", f"is missing, and 4 * n_embd is beyond {MAX_DIM}")
    act = c.string("activation_function", "gelu_new")
    if act not in _GPT2_ACT:
        c.bad("activation_function", f"= '{act}' is not supported (gelu_new, gelu_pytorch_tanh, gelu, relu)")
    eps = c.eps("layer_norm_epsilon", 1e-5)
    if not c.boolean("scale_attn_weights", True):
        c.bad("scale_attn_weights", "is false: attn always scales the scores by 1/sqrt(head_dim)")
    if c.boolean("scale_attn_by_inverse_layer_idx", False):
        c.bad("scale_attn_by_inverse_layer_idx", "is true: not supported")
    pos = c.integer("n_positions", 1, MAX_SEQ)
    v = c.integer("vocab_size", 1, MAX_VOCAB)
    tied = c.boolean("tie_word_embeddings", True)
    head = "none" if not lm else "tied" if tied else "untied"
    cfg = dict(vocab_size=v, embed_dim=e, num_layers=n, num_heads=h, num_kv_heads=0, head_dim=e // h, ffn_dim=f,
               max_positions=pos, type_vocab_size=0, norm="layer_norm", norm_eps=eps, activation=_GPT2_ACT[act],
               head=head, rope_base=0.0, pre_norm=True, gated_ffn=False, attention_bias=True, ffn_bias=True,
               norm_bias=True, learned_positions=True, embedding_norm=False, final_norm=True, causal=True)
    model = {"token_embedding": s.get(prefix + "wte.weight", (v, e), "vocab_size, n_embd"),
             "position_embedding": s.get(prefix + "wpe.weight", (pos, e), "n_positions, n_embd")}
    layers = []
    for i in range(n):
        p = f"{prefix}h.{i}."
        qkv = s.get(p + "attn.c_attn.weight", (e, 3 * e), "n_embd, 3 * n_embd").T  # Conv1D: [in, out]
        qkv_b = s.get(p + "attn.c_attn.bias", (3 * e,), "3 * n_embd")
        L = {"wq": qkv[:e], "wk": qkv[e:2 * e], "wv": qkv[2 * e:],
             "bq": qkv_b[:e], "bk": qkv_b[e:2 * e], "bv": qkv_b[2 * e:],
             "wo": s.get(p + "attn.c_proj.weight", (e, e), "n_embd").T,
             "bo": s.get(p + "attn.c_proj.bias", (e,), "n_embd"),
             "norm1_weight": s.get(p + "ln_1.weight", (e,), "n_embd"),
             "norm1_bias": s.get(p + "ln_1.bias", (e,), "n_embd"),
             "norm2_weight": s.get(p + "ln_2.weight", (e,), "n_embd"),
             "norm2_bias": s.get(p + "ln_2.bias", (e,), "n_embd"),
             "ffn_w1": s.get(p + "mlp.c_fc.weight", (e, f), "n_embd, n_inner").T,
             "ffn_b1": s.get(p + "mlp.c_fc.bias", (f,), "n_inner"),
             "ffn_w2": s.get(p + "mlp.c_proj.weight", (f, e), "n_inner, n_embd").T,
             "ffn_b2": s.get(p + "mlp.c_proj.bias", (e,), "n_embd")}
        for buffer in ("attn.bias", "attn.masked_bias"):  # causal-mask buffers: attn is causal by itself
            if p + buffer in s.state:
                s.used.add(p + buffer)
        layers.append({k: np.ascontiguousarray(a) for k, a in L.items()})
    model["final_norm_weight"] = s.get(prefix + "ln_f.weight", (e,), "n_embd")
    model["final_norm_bias"] = s.get(prefix + "ln_f.bias", (e,), "n_embd")
    if head == "untied":
        model["lm_head"] = s.get("lm_head.weight", (v, e), "vocab_size, n_embd; tie_word_embeddings is false")
    elif head == "tied" and "lm_head.weight" in s.state:
        if not np.array_equal(s.get("lm_head.weight", (v, e), "vocab_size, n_embd"), model["token_embedding"]):
            raise ExportError(f"{s.src}: 'lm_head.weight' differs from '{prefix}wte.weight' but {c.src} "
                              "says tie_word_embeddings")
    user = s.leftovers(prefix + "h.", f"a {'GPT2LMHeadModel' if lm else 'GPT2Model'} with n_layer = {n}")
    return cfg, layers, model, user


def export_model(source, out_path=None, config=None, byte_vocab=False, data_align=16):
    """Export a whole Hugging Face model (BertModel / BertFor..., RobertaModel, DistilBertModel, LlamaForCausalLM,
    MistralForCausalLM, Qwen2ForCausalLM, GPT2Model, GPT2LMHeadModel) to format v3, as
    `attn import MODEL.safetensors --config config.json` does. source: a module, a state_dict or the path
    of a .pt/.bin/.safetensors file; config: a dict, the path of config.json, or None for a module's
    own .config. Returns the bytes (and writes out_path if given)."""
    src = os.fspath(source) if isinstance(source, (str, os.PathLike)) else type(source).__name__
    cfg_src = "config"
    if config is None and hasattr(source, "config") and hasattr(source.config, "to_dict"):
        config = source.config.to_dict()
    if isinstance(config, (str, os.PathLike)):
        cfg_src = os.fspath(config)
        try:
            with open(config, "rb") as fh:
                config = json.loads(fh.read().decode("utf-8"))
        except (OSError, UnicodeDecodeError, json.JSONDecodeError) as e:
            raise ExportError(f"{cfg_src}: {e}")
    if config is None:
        raise ExportError("a whole model needs its config (config.json)")
    state, _ = load_state(source)
    s, c = _Source(state, src), _Config(config, cfg_src)
    kind = _model_kind(s, c)
    if kind in ("bert", "roberta"):
        cfg, layers, model, user = _hf_bert(s, c, kind == "roberta")
    elif kind == "distilbert":
        cfg, layers, model, user = _hf_distilbert(s, c)
    elif kind == "gpt2":
        cfg, layers, model, user = _hf_gpt2(s, c)
    else:
        cfg, layers, model, user = _hf_llama(s, c, kind)
    data = write_model(cfg, layers, model, user, byte_vocab, data_align)
    if out_path is not None:
        write_file_atomic(out_path, data)
    return data


def _np(t):
    return None if t is None else _to_numpy(t).astype(np.float32)


def export_encoder(encoder, embedding, out_path=None, positions=None, max_positions=None, embedding_norm=None,
                   causal=False, head="none", lm_head=None, extras=None, byte_vocab=False, data_align=16):
    """Export an nn.TransformerEncoder (its layers nn.TransformerEncoderLayer, norm_first either way,
    activation relu or gelu (exact or tanh), encoder.norm as the final norm if set) with the caller's
    token embedding (nn.Embedding or [V, E] array) and optional learned positions ([P, E]; otherwise
    max_positions bounds the sequence), optional embedding_norm (nn.LayerNorm), causal mask, head "none",
    "tied" or "untied" (with lm_head [V, E] or nn.Linear), extras {name: array} as user tensors."""
    import torch
    import torch.nn.functional as F
    layers_in = list(encoder.layers)
    if not layers_in:
        raise ExportError("the encoder has no layers")
    tok = _np(embedding.weight if hasattr(embedding, "weight") else embedding)
    first = layers_in[0]
    e, h = first.self_attn.embed_dim, first.self_attn.num_heads
    if not first.self_attn._qkv_same_embed_dim:
        raise ExportError("self-attention with kdim/vdim other than E is not a TransformerEncoderLayer attn runs")
    ffn = first.linear1.out_features
    pos = _np(positions.weight if hasattr(positions, "weight") else positions)
    if pos is None and max_positions is None:
        raise ExportError("give positions ([P, E] learned positions) or max_positions")
    p = pos.shape[0] if pos is not None else max_positions
    if head not in ("none", "tied", "untied") or (head == "untied") != (lm_head is not None):
        raise ExportError("head is 'none', 'tied' or 'untied' (the last with lm_head)")

    def activation(layer):
        a = layer.activation
        code = getattr(layer, "activation_relu_or_gelu", 0)
        if a is F.relu or isinstance(a, torch.nn.ReLU) or (code == 1 and not isinstance(a, torch.nn.Module)):
            return "relu"
        if isinstance(a, torch.nn.GELU):
            return "gelu_tanh" if getattr(a, "approximate", "none") == "tanh" else "gelu"
        if a is F.gelu or code == 2:
            return "gelu"
        raise ExportError(f"activation {a} is not supported (relu, gelu)")

    norms = [first.norm1, first.norm2] + ([encoder.norm] if encoder.norm is not None else [])
    if embedding_norm is not None:
        norms.append(embedding_norm)
    eps = _f32(first.norm1.eps)
    for nm in norms:
        if not isinstance(nm, torch.nn.LayerNorm) or _f32(nm.eps) != eps:
            raise ExportError("every norm must be an nn.LayerNorm with the same eps")
    norm_bias = first.norm1.bias is not None
    cfg = dict(vocab_size=tok.shape[0], embed_dim=e, num_layers=len(layers_in), num_heads=h, num_kv_heads=0,
               head_dim=e // h, ffn_dim=ffn, max_positions=p, type_vocab_size=0, norm="layer_norm", norm_eps=eps,
               activation=activation(first), head=head, rope_base=0.0, pre_norm=bool(first.norm_first),
               gated_ffn=False, attention_bias=first.self_attn.in_proj_bias is not None,
               ffn_bias=first.linear1.bias is not None, norm_bias=norm_bias, learned_positions=pos is not None,
               embedding_norm=embedding_norm is not None, final_norm=encoder.norm is not None, causal=bool(causal))
    layers = []
    for layer in layers_in:
        if (layer.self_attn.embed_dim, layer.self_attn.num_heads, layer.linear1.out_features,
                bool(layer.norm_first), activation(layer)) != (e, h, ffn, cfg["pre_norm"], cfg["activation"]):
            raise ExportError("every layer must have the same shape, norm placement and activation")
        w = _np(layer.self_attn.in_proj_weight)
        L = {"wq": w[:e], "wk": w[e:2 * e], "wv": w[2 * e:], "wo": _np(layer.self_attn.out_proj.weight)}
        if cfg["attention_bias"]:
            b = _np(layer.self_attn.in_proj_bias)
            L.update(bq=b[:e], bk=b[e:2 * e], bv=b[2 * e:], bo=_np(layer.self_attn.out_proj.bias))
        L.update(norm1_weight=_np(layer.norm1.weight), norm2_weight=_np(layer.norm2.weight),
                 ffn_w1=_np(layer.linear1.weight), ffn_w2=_np(layer.linear2.weight))
        if norm_bias:
            L.update(norm1_bias=_np(layer.norm1.bias), norm2_bias=_np(layer.norm2.bias))
        if cfg["ffn_bias"]:
            L.update(ffn_b1=_np(layer.linear1.bias), ffn_b2=_np(layer.linear2.bias))
        layers.append(L)
    model = {"token_embedding": tok}
    if pos is not None:
        model["position_embedding"] = pos
    if embedding_norm is not None:
        model["embedding_norm_weight"] = _np(embedding_norm.weight)
        if norm_bias:
            model["embedding_norm_bias"] = _np(embedding_norm.bias)
    if encoder.norm is not None:
        model["final_norm_weight"] = _np(encoder.norm.weight)
        if norm_bias:
            model["final_norm_bias"] = _np(encoder.norm.bias)
    if lm_head is not None:
        model["lm_head"] = _np(lm_head.weight if hasattr(lm_head, "weight") else lm_head)
    user = [(k, _np(v)) for k, v in (extras or {}).items()]
    data = write_model(cfg, layers, model, user, byte_vocab, data_align)
    if out_path is not None:
        write_file_atomic(out_path, data)
    return data


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
    ap.add_argument("--config", help="a whole Hugging Face model (BERT, Llama) with its config.json")
    ap.add_argument("--byte-vocab", action="store_true", help="whole models: token ids 0..255 are the bytes")
    ap.add_argument("-o", "--output", required=True, help="the .attn file to write")
    args = ap.parse_args(argv)
    try:
        if args.config is not None:
            for opt in ("heads", "prefix", "kv_heads", "rope_base"):
                if getattr(args, opt) is not None:
                    raise ExportError(f"--{opt.replace('_', '-')} is for attention blocks; a whole model takes "
                                      "its shape from --config")
            if args.extra:
                raise ExportError("--extra is for attention blocks; a whole model keeps its other tensors")
            data = export_model(args.model, args.output, config=args.config, byte_vocab=args.byte_vocab)
        else:
            if args.byte_vocab:
                raise ExportError("--byte-vocab is for whole models (--config)")
            data = export(args.model, args.output, heads=args.heads, prefix=args.prefix, extras=args.extra,
                          kv_heads=args.kv_heads, rope_base=args.rope_base)
    except (ExportError, OSError) as e:
        print(f"attn_export: {e}", file=sys.stderr)
        return 1
    print(f"attn_export: wrote {args.output} ({len(data)} bytes)")
    return 0


if __name__ == "__main__":
    sys.exit(main())
