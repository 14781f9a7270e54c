#!/usr/bin/python3
"""PyTorch (or numpy) weights to .attn files, through `attn import`.

`attn import` (tools/cli) is the one importer: it maps every checkpoint layout
to .attn bytes. This script only does what needs Python: it takes a live
nn.Module, a .pt/.bin checkpoint, a state dict or a .safetensors path, writes
safetensors (+ config.json) to a temporary directory and runs `attn import`.

  export()          attention blocks: the state dict under its own names,
                    `attn import --heads` (the heads of each nn.MultiheadAttention
                    or BERT self-attention module: --heads PREFIX=H)
  export_model()    a whole Hugging Face model with its config: `attn import --config`
  write_model()     a whole model given as attn's own config fields and tensor
                    names: the attn layout (config.json "model_type": "attn",
                    include/attn/FORMAT.md)
  export_encoder()  nn.TransformerEncoder + the caller's embedding, positions,
                    norms, head and extra tensors, renamed into the attn layout

The attn binary: the attn= argument / --attn PATH, else $ATTN_BIN, else
build/host-release/tools/attn. Command line (/usr/bin/python3 has torch):
  attn_export.py MODEL.{pt,bin,safetensors} --heads H|PREFIX=H ... [--prefix P]
                 [--kv-heads G] [--rope-base B] [--extra NAME=KEY ...] -o OUT.attn
  attn_export.py MODEL.{pt,bin,safetensors} --config config.json [--byte-vocab] -o OUT.attn
--heads, --kv-heads, --rope-base and --extra mean what they mean to `attn import`.
"""

import argparse
import json
import os
import shutil
import struct
import subprocess
import sys
import tempfile

import numpy as np

DEFAULT_ATTN = os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "..", "build", "host-release", "tools", "attn")


class ExportError(Exception):
    """A problem with the input; the message names it."""


def find_attn(attn=None):
    """The attn binary: `attn`, else $ATTN_BIN, else the host-release build's."""
    path = attn or os.environ.get("ATTN_BIN") or DEFAULT_ATTN
    if not (os.path.isfile(path) and os.access(path, os.X_OK)):
        raise ExportError(f"no attn binary at {path}: build it (cmake --preset host-release && cmake --build "
                          "--preset host-release --target attn_cli), or give --attn PATH or ATTN_BIN")
    return path


_ST_DTYPE = {"float64": "F64", "float32": "F32", "float16": "F16", "int64": "I64", "int32": "I32",
             "int16": "I16", "int8": "I8", "uint8": "U8", "bool": "BOOL"}


def write_safetensors(path, tensors):
    """{name: numpy array} -> a safetensors file, little-endian, in the dict's order."""
    header, blobs, offset = {}, [], 0
    for name, a in tensors.items():
        a = np.ascontiguousarray(a)
        if str(a.dtype.newbyteorder("=")) not in _ST_DTYPE:
            raise ExportError(f"tensor '{name}' has dtype {a.dtype}, which safetensors does not hold")
        data = a.astype(a.dtype.newbyteorder("<")).tobytes()
        header[name] = {"dtype": _ST_DTYPE[str(a.dtype.newbyteorder("="))], "shape": list(a.shape),
                        "data_offsets": [offset, offset + len(data)]}
        blobs.append(data)
        offset += len(data)
    text = json.dumps(header, separators=(",", ":")).encode("utf-8")
    text += b" " * (-len(text) % 8)
    with open(path, "wb") as f:
        f.write(struct.pack("<Q", len(text)) + text + b"".join(blobs))


def _numpy(v):
    if isinstance(v, np.ndarray):
        return v
    if not hasattr(v, "detach"):
        return np.asarray(v)
    v = v.detach().cpu()
    if str(v.dtype) == "torch.bfloat16":  # numpy has no bfloat16; widening is exact, as attn import's
        v = v.float()
    return v.numpy()


def load_state(source):
    """(name -> numpy array or None for a .safetensors path, block prefix -> heads known from modules)."""
    heads = {}
    if isinstance(source, (str, os.PathLike)):
        path = os.fspath(source)
        if not os.path.exists(path):
            raise ExportError(f"{path}: no such file")
        if path.endswith(".safetensors"):
            return None, heads
        import torch
        try:
            source = torch.load(path, map_location="cpu")
        except Exception as e:  # torch raises many kinds
            raise ExportError(f"{path}: cannot load as a PyTorch checkpoint ({e})")
        if isinstance(source, dict) and isinstance(source.get("state_dict"), dict):
            source = source["state_dict"]
    if isinstance(source, dict):
        return {k: _numpy(v) for k, v in source.items() if hasattr(v, "shape")}, heads
    import torch
    if not isinstance(source, torch.nn.Module):
        raise ExportError(f"cannot export from a {type(source).__name__}")
    for name, mod in source.named_modules():
        if isinstance(mod, torch.nn.MultiheadAttention):
            heads[name + "." if name else ""] = mod.num_heads
        if getattr(mod, "num_attention_heads", None) is not None and hasattr(mod, "query"):
            heads[name.rsplit(".", 1)[0] + "." if "." in name else ""] = int(mod.num_attention_heads)  # BERT
    return {k: _numpy(v) for k, v in source.state_dict().items()}, heads


def run_import(source, args, out_path=None, state=None, config=None, attn=None, quiet=True):
    """`attn import` of the safetensors path `source`, or of `state` written to one (with `config`
    written as config.json when a dict). Returns the file's bytes (written to out_path if given)."""
    binary = find_attn(attn)
    tmp = tempfile.mkdtemp(prefix="attn_export.")
    try:
        src = source
        if state is not None:
            src = os.path.join(tmp, "model.safetensors")
            write_safetensors(src, state)
        if isinstance(config, dict):
            with open(os.path.join(tmp, "config.json"), "w") as f:
                json.dump(config, f, default=lambda o: o.item() if hasattr(o, "item") else str(o))
            config = os.path.join(tmp, "config.json")
        out = os.fspath(out_path) if out_path is not None else os.path.join(tmp, "out.attn")
        cmd = [binary, "import", src] + (["--config", os.fspath(config)] if config else []) + args + ["-o", out]
        r = subprocess.run(cmd, capture_output=True, text=True)
        if r.returncode != 0:
            msg = (r.stderr.strip() or f"{binary} exited with {r.returncode}").replace("attn import: ", "", 1)
            msg = msg.replace(src, str(source))
            raise ExportError(msg.replace(os.path.join(tmp, "config.json"), "config"))
        if not quiet:
            print(r.stdout, end="")
        with open(out, "rb") as f:
            return f.read()
    finally:
        shutil.rmtree(tmp, ignore_errors=True)


def _name(source):
    return os.fspath(source) if isinstance(source, (str, os.PathLike)) else type(source).__name__


def export(source, out_path=None, heads=None, prefix=None, extras=None, kv_heads=None, rope_base=None,
           attn=None, quiet=True):
    """The attention blocks of `source` (module, state dict, or path of a .pt/.bin/.safetensors file) to
    `out_path` (if given); returns the bytes. heads: an int for every block, {prefix: heads}, a list of
    `attn import --heads` values, or None to take them from the modules. extras: user tensors,
    {name_in_file: key_in_state} or ['name=key']. kv_heads, rope_base: Llama blocks (default: k_proj's
    rows; 10000)."""
    state, known = load_state(source)
    if heads is None:
        heads = {p: h for p, h in known.items() if prefix is None or p.startswith(prefix)}
    heads = [f"{p}={h}" for p, h in heads.items()] if isinstance(heads, dict) else \
        heads if isinstance(heads, (list, tuple)) else [heads]
    if not heads:
        raise ExportError(f"{_name(source)}: the number of heads is unknown: pass --heads")
    args = [a for h in heads for a in ("--heads", str(h))]
    if prefix is not None:
        args += ["--prefix", prefix]
    if kv_heads is not None:
        args += ["--kv-heads", str(kv_heads)]
    if rope_base is not None:
        args += ["--rope-base", repr(float(rope_base))]
    extras = [f"{n}={k}" for n, k in extras.items()] if isinstance(extras, dict) else extras or []
    args += [a for e in extras for a in ("--extra", e)]
    return run_import(_name(source), args, out_path, state, attn=attn, quiet=quiet)


def export_model(source, out_path=None, config=None, byte_vocab=False, attn=None, quiet=True):
    """A whole Hugging Face model (those `attn import --config` reads) to format v3. source: a module,
    a state dict or the path of a .pt/.bin/.safetensors file; config: a dict, the path of
    config.json, or None for a module's own .config. Returns the bytes (written to out_path if given)."""
    if config is None and hasattr(getattr(source, "config", None), "to_dict"):
        config = source.config.to_dict()
    if config is None:
        raise ExportError("a whole model needs its config (config.json)")
    state, _ = load_state(source)
    return run_import(_name(source), ["--byte-vocab"] if byte_vocab else [], out_path, state, config, attn, quiet)


def write_model(cfg, layers, model, user=(), byte_vocab=False, out_path=None, attn=None):
    """A whole model in the attn layout. cfg: attn::TransformerConfig's fields (norm "layer_norm" /
    "rms_norm", activation "gelu" / "gelu_tanh" / "relu" / "silu", head "none" / "tied" / "untied");
    layers: [{role: array}] (wq wk wv wo bq bk bv bo norm1_weight ... ffn_b3); model: {role: array}
    (token_embedding ... lm_head); user: [(name, array)], kept in that order. Returns the .attn bytes."""
    state = {f"block.{i}.{k}": v for i, L in enumerate(layers) for k, v in L.items()}
    state.update({"model." + k: v for k, v in model.items()})
    state.update(user)
    state = {k: np.asarray(_numpy(v), dtype=np.float32) for k, v in state.items()}
    config = dict(cfg, model_type="attn", user_tensors=[n for n, _ in user])
    return run_import("the attn layout", ["--byte-vocab"] if byte_vocab else [], out_path, state, config, attn)


def _f32(t):
    return None if t is None else np.asarray(_numpy(getattr(t, "weight", t)), dtype=np.float32)


def export_encoder(encoder, embedding, out_path=None, positions=None, max_positions=None, embedding_norm=None,
                   causal=False, head="none", lm_head=None, extras=None, byte_vocab=False, attn=None):
    """An nn.TransformerEncoder (nn.TransformerEncoderLayer layers, norm_first either way, activation
    relu or gelu (exact or tanh), encoder.norm as the final norm if set) with the caller's token
    embedding (nn.Embedding or [V, E]), optional learned positions ([P, E]; otherwise max_positions
    bounds the sequence), optional embedding_norm (nn.LayerNorm), causal mask, head "none", "tied" or
    "untied" (with lm_head [V, E] or nn.Linear), extras {name: array} as user tensors."""
    import torch
    import torch.nn.functional as F
    layers_in = list(encoder.layers)
    if not layers_in:
        raise ExportError("the encoder has no layers")
    first = layers_in[0]
    if not first.self_attn._qkv_same_embed_dim:
        raise ExportError("self-attention with kdim/vdim other than E is not a TransformerEncoderLayer attn runs")
    tok, pos = _f32(embedding), _f32(positions)
    if pos is None and max_positions is None:
        raise ExportError("give positions ([P, E] learned positions) or max_positions")

    def activation(layer):  # what TransformerEncoderLayer's forward (and its fast path) applies
        a, code = layer.activation, getattr(layer, "activation_relu_or_gelu", 0)
        if a is F.relu or isinstance(a, torch.nn.ReLU) or (code == 1 and not isinstance(a, torch.nn.Module)):
            return "relu"
        if isinstance(a, torch.nn.GELU):
            return "gelu_tanh" if getattr(a, "approximate", "none") == "tanh" else "gelu"
        if a is F.gelu or code == 2:
            return "gelu"
        raise ExportError(f"activation {a} is not supported (relu, gelu)")

    norms = [n for L in layers_in for n in (L.norm1, L.norm2)] + [n for n in (encoder.norm, embedding_norm) if n]
    if any(not isinstance(n, torch.nn.LayerNorm) or np.float32(n.eps) != np.float32(first.norm1.eps)
           for n in norms):
        raise ExportError("every norm must be an nn.LayerNorm with the same eps")
    e, acts = first.self_attn.embed_dim, {activation(L) for L in layers_in}
    if len(acts) != 1 or len({bool(L.norm_first) for L in layers_in}) != 1:
        raise ExportError("every layer must have the same norm placement and activation")
    cfg = dict(vocab_size=tok.shape[0], embed_dim=e, num_layers=len(layers_in), num_heads=first.self_attn.num_heads,
               ffn_dim=first.linear1.out_features, max_positions=pos.shape[0] if pos is not None else max_positions,
               norm="layer_norm", norm_eps=float(np.float32(first.norm1.eps)), activation=acts.pop(), head=head,
               pre_norm=bool(first.norm_first), attention_bias=first.self_attn.in_proj_bias is not None,
               ffn_bias=first.linear1.bias is not None, norm_bias=first.norm1.bias is not None,
               learned_positions=pos is not None, embedding_norm=embedding_norm is not None,
               final_norm=encoder.norm is not None, causal=bool(causal))
    layers = []
    for L in layers_in:
        a = L.self_attn
        w, b = _f32(a.in_proj_weight), _f32(a.in_proj_bias)
        d = {"wq": w[:e], "wk": w[e:2 * e], "wv": w[2 * e:], "wo": a.out_proj.weight,
             "norm1_weight": L.norm1.weight, "norm1_bias": L.norm1.bias, "norm2_weight": L.norm2.weight,
             "norm2_bias": L.norm2.bias, "ffn_w1": L.linear1.weight, "ffn_b1": L.linear1.bias,
             "ffn_w2": L.linear2.weight, "ffn_b2": L.linear2.bias}
        if b is not None:
            d.update(bq=b[:e], bk=b[e:2 * e], bv=b[2 * e:], bo=a.out_proj.bias)
        layers.append({k: _f32(v) for k, v in d.items() if v is not None})
    model = {"token_embedding": tok, "position_embedding": pos, "lm_head": _f32(lm_head)}
    for name, norm in (("embedding_norm", embedding_norm), ("final_norm", encoder.norm)):
        if norm is not None:
            model.update({name + "_weight": _f32(norm.weight), name + "_bias": _f32(norm.bias)})
    model = {k: v for k, v in model.items() if v is not None}
    user = [(k, _f32(v)) for k, v in (extras or {}).items()]
    return write_model(cfg, layers, model, user, byte_vocab, out_path, attn)


def main(argv=None):
    ap = argparse.ArgumentParser(description="PyTorch weights to a .attn file (float32), through `attn import`.")
    ap.add_argument("model", help=".pt/.bin checkpoint (a state_dict) or .safetensors file")
    ap.add_argument("--heads", action="append", help="heads of every block (H) or of one (PREFIX=H)")
    ap.add_argument("--prefix", help="only the blocks whose names start with this")
    ap.add_argument("--kv-heads", type=int, help="K/V heads of Llama blocks (default: k_proj rows / head_dim)")
    ap.add_argument("--rope-base", type=float, help="RoPE base of Llama blocks (default 10000; 0: none)")
    ap.add_argument("--extra", action="append", default=[], metavar="NAME=KEY",
                    help="also store tensor KEY of the checkpoint as user tensor NAME")
    ap.add_argument("--config", help="a whole Hugging Face model with its config.json")
    ap.add_argument("--byte-vocab", action="store_true",
                    help="whole models: token ids 0..255 are the bytes (the file carries that tokenizer)")
    ap.add_argument("--attn", help=f"the attn binary (default: $ATTN_BIN, else {os.path.relpath(DEFAULT_ATTN)})")
    ap.add_argument("-o", "--output", required=True, help="the .attn file to write")
    a = ap.parse_args(argv)
    try:
        if a.config is not None:
            if a.heads or a.prefix or a.kv_heads is not None or a.rope_base is not None or a.extra:
                raise ExportError("--heads, --prefix, --kv-heads, --rope-base and --extra are for attention "
                                  "blocks; a whole model takes its shape from --config")
            export_model(a.model, a.output, a.config, a.byte_vocab, a.attn, quiet=False)
        elif a.byte_vocab:
            raise ExportError("--byte-vocab is for whole models (--config)")
        else:
            export(a.model, a.output, a.heads, a.prefix, a.extra, a.kv_heads, a.rope_base, a.attn, quiet=False)
    except (ExportError, OSError) as e:
        print(f"attn_export: {e}", file=sys.stderr)
        return 1
    return 0


if __name__ == "__main__":
    sys.exit(main())
