#!/usr/bin/python3
"""Generate the golden whole-model vectors in tests/data/golden_models/.

Run with Debian's python3 (numpy; torch only for the optional cross-check):

    /usr/bin/python3 tools/gen_transformer_golden.py           # writes tests/data/golden_models/<case>/
    /usr/bin/python3 tools/gen_transformer_golden.py --check   # regenerate in memory, compare with the files
    /usr/bin/python3 tools/gen_transformer_golden.py --torch   # also cross-check against torch modules

Each case draws its weights and tokens from numpy with a fixed seed, rounds
the weights to float32 and stores them as float32. The expected output is
computed in float64 numpy from those float32 values, written from the
published equations (not from attn):

  * HF BERT (BertModel's last hidden state): token + learned position + token
    type 0 embeddings, embedding LayerNorm, post-norm layers
    x = LN1(x + Attn(x)); x = LN2(x + W2 gelu(W1 x + b1) + b2), erf GELU.
  * torch nn.TransformerEncoderLayer: post-norm (norm_first=False) or
    pre-norm (norm_first=True) x = x + Attn(LN1(x)); x = x + FFN(LN2(x)),
    relu or gelu, optionally the encoder's final norm.
  * HF Llama (LlamaForCausalLM logits): RMSNorm x / sqrt(mean(x^2) + eps) * w,
    rotate_half RoPE at positions 0..n-1 with rope_theta, grouped-query
    attention (GQA / MQA / MHA), causal, SiLU-gated FFN
    W2 (silu(W1 x) * (W3 x)) without biases, final norm, tied or untied head.
  * GPT-2-like: pre-norm LayerNorm with biases, learned positions, causal,
    tanh GELU, final norm, tied head.

The encoders' expected output is the last hidden state [n, E]; the
decoders' the logits [n, vocab].

Layout of a case directory (read by tests/transformer_golden.h):
  config.txt     one `key value` per line: every TransformerConfig field
                 (attn/transformer.h), and n (tokens)
  tokens.npy     int32 [n]
  expected.npy   float64 [n, output_dim]
  <tensor>.npy   float32, named as the format's canonical names without the
                 dots: token_embedding, position_embedding, type_embedding,
                 embedding_norm_weight / _bias, final_norm_weight / _bias,
                 lm_head, and per layer i: block<i>_wq, _wk, _wv, _wo, _bq, _bk,
                 _bv, _bo, _norm1_weight, _norm1_bias, _norm2_weight,
                 _norm2_bias, _ffn_w1, _ffn_b1, _ffn_w2, _ffn_b2, _ffn_w3, _ffn_b3
                 (only those the config has).

The script asserts that a float32 evaluation of every case stays well inside
the C++ tests' bound (max|got - want| <= 1e-4 max|want|), so a failing test
means a wrong library, not an ill-conditioned case; with --torch, that
torch's nn.TransformerEncoderLayer (encoders) and a torch transcription of HF
Llama's modules (decoders), in float64, agree with the numpy reference.
"""

import argparse
import io
import math
import os
import sys

import numpy as np

OUT_DIR = os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "tests", "data", "golden_models")
REL = 1e-4  # the tests' bound: max|got - want| <= REL * max|want|
F32_MARGIN = 0.1  # a float32 evaluation must stay within this fraction of it

DEFAULTS = dict(
    vocab_size=0, embed_dim=0, num_layers=0, num_heads=0, num_kv_heads=0, head_dim=0, ffn_dim=0,
    max_positions=0, type_vocab_size=0, norm="layer", norm_eps=1e-5, activation="gelu", head="none",
    rope_base=0.0, pre_norm=False, gated_ffn=False, attention_bias=True, ffn_bias=True, norm_bias=True,
    learned_positions=False, embedding_norm=False, final_norm=False, causal=False)

CASES = [
    # name, config overrides, tokens n, seed
    ("bert_e32_h4_l2", dict(vocab_size=32, embed_dim=32, num_layers=2, num_heads=4, ffn_dim=48,
                            max_positions=16, type_vocab_size=2, norm_eps=1e-12, learned_positions=True,
                            embedding_norm=True), 11, 1),
    ("bert_gelutanh_e24_h3_l1", dict(vocab_size=40, embed_dim=24, num_layers=1, num_heads=3, ffn_dim=40,
                                     max_positions=8, type_vocab_size=1, norm_eps=1e-6, activation="gelu_tanh",
                                     learned_positions=True, embedding_norm=True), 8, 2),
    ("encoder_postnorm_relu_e16_h2_l3", dict(vocab_size=32, embed_dim=16, num_layers=3, num_heads=2, ffn_dim=32,
                                             max_positions=12, activation="relu", learned_positions=True), 9, 3),
    ("encoder_prenorm_gelu_e32_h8_l2", dict(vocab_size=32, embed_dim=32, num_layers=2, num_heads=8, ffn_dim=40,
                                            max_positions=12, pre_norm=True, final_norm=True), 12, 4),
    ("llama_mha_tied_e32_h4_l2", dict(vocab_size=32, embed_dim=32, num_layers=2, num_heads=4, ffn_dim=40,
                                      max_positions=16, norm="rms", norm_eps=1e-5, activation="silu", head="tied",
                                      rope_base=10000.0, pre_norm=True, gated_ffn=True, attention_bias=False,
                                      ffn_bias=False, final_norm=True, causal=True), 10, 5),
    ("llama_gqa_untied_e32_h4_kv2_l2", dict(vocab_size=40, embed_dim=32, num_layers=2, num_heads=4,
                                            num_kv_heads=2, ffn_dim=40, max_positions=12, norm="rms",
                                            norm_eps=1e-6, activation="silu", head="untied",
                                            rope_base=500000.0, pre_norm=True, gated_ffn=True,
                                            attention_bias=False, ffn_bias=False, final_norm=True,
                                            causal=True), 12, 6),
    ("llama_mqa_hd8_e24_h4_kv1_l3", dict(vocab_size=36, embed_dim=24, num_layers=3, num_heads=4, num_kv_heads=1,
                                         head_dim=8, ffn_dim=40, max_positions=10, norm="rms", norm_eps=1e-5,
                                         activation="silu", head="untied", rope_base=10000.0, pre_norm=True,
                                         gated_ffn=True, attention_bias=False, ffn_bias=False, final_norm=True,
                                         causal=True), 9, 7),
    ("gpt2_causal_e24_h2_l2", dict(vocab_size=40, embed_dim=24, num_layers=2, num_heads=2, ffn_dim=48,
                                   max_positions=10, norm_eps=1e-5, activation="gelu_tanh", head="tied",
                                   pre_norm=True, learned_positions=True, final_norm=True, causal=True), 8, 8),
    # Qwen2: Llama with q/k/v biases and no o_proj bias (zero_bo: bo is written, all zero)
    ("qwen2_qkvbias_e32_h4_kv2_l2", dict(vocab_size=40, embed_dim=32, num_layers=2, num_heads=4, num_kv_heads=2,
                                         ffn_dim=40, max_positions=12, norm="rms", norm_eps=1e-6,
                                         activation="silu", head="tied", rope_base=1000000.0, pre_norm=True,
                                         gated_ffn=True, attention_bias=True, ffn_bias=False, final_norm=True,
                                         causal=True, zero_bo=True), 11, 9),
]


# ---- the reference, float64 numpy, from the published equations ------------------------------
def layer_norm(x, w, b, eps):
    m = x.mean(-1, keepdims=True)
    var = ((x - m) ** 2).mean(-1, keepdims=True)  # biased, as torch
    y = (x - m) / np.sqrt(var + eps) * w
    return y + b if b is not None else y


def rms_norm(x, w, eps):
    return x / np.sqrt((x * x).mean(-1, keepdims=True) + eps) * w


_erf = np.vectorize(math.erf)


def activation(name, x):
    if name == "gelu":
        return 0.5 * x * (1.0 + _erf(x / math.sqrt(2.0)))
    if name == "gelu_tanh":
        return 0.5 * x * (1.0 + np.tanh(math.sqrt(2.0 / math.pi) * (x + 0.044715 * x ** 3)))
    if name == "relu":
        return np.maximum(x, 0.0)
    if name == "silu":
        return x / (1.0 + np.exp(-x))
    raise ValueError(name)


def rope(x, heads, hd, theta, dt):
    """HF Llama: inv_freq = 1 / theta^(2i/hd); q * cos + rotate_half(q) * sin per head."""
    n = x.shape[0]
    inv = 1.0 / (theta ** (np.arange(0, hd, 2, dtype=np.float64) / hd))
    ang = np.arange(n, dtype=np.float64)[:, None] * inv[None, :]
    cos = np.concatenate([np.cos(ang), np.cos(ang)], axis=1).astype(dt)
    sin = np.concatenate([np.sin(ang), np.sin(ang)], axis=1).astype(dt)
    x = x.reshape(n, heads, hd)
    rot = np.concatenate([-x[..., hd // 2:], x[..., :hd // 2]], axis=-1)
    return (x * cos[:, None, :] + rot * sin[:, None, :]).reshape(n, heads * hd)


def attention(cfg, t, i, x, dt):
    H, hd = cfg["num_heads"], head_dim(cfg)
    kv = cfg["num_kv_heads"] or H
    p = "block%d_" % i

    def proj(w, b, inp):
        y = inp @ t[p + w].astype(dt).T
        return y + t[p + b].astype(dt) if cfg["attention_bias"] else y

    q, k, v = proj("wq", "bq", x), proj("wk", "bk", x), proj("wv", "bv", x)
    if cfg["rope_base"]:
        q, k = rope(q, H, hd, cfg["rope_base"], dt), rope(k, kv, hd, cfg["rope_base"], dt)
    n = x.shape[0]
    o = np.zeros((n, H * hd), dtype=dt)
    for h in range(H):
        g = h // (H // kv)
        s = q[:, h * hd:(h + 1) * hd] @ k[:, g * hd:(g + 1) * hd].T / np.sqrt(dt(hd))
        if cfg["causal"]:
            s = np.where(np.tril(np.ones((n, n), dtype=bool)), s, -np.inf)
        s = np.exp(s - s.max(-1, keepdims=True))
        o[:, h * hd:(h + 1) * hd] = (s / s.sum(-1, keepdims=True)) @ v[:, g * hd:(g + 1) * hd]
    return proj("wo", "bo", o)


def norm(cfg, t, name, x, dt):
    w = t[name + "_weight"].astype(dt)
    if cfg["norm"] == "rms":
        return rms_norm(x, w, dt(cfg["norm_eps"]))
    b = t[name + "_bias"].astype(dt) if cfg["norm_bias"] else None
    return layer_norm(x, w, b, dt(cfg["norm_eps"]))


def ffn(cfg, t, i, x, dt):
    p = "block%d_ffn_" % i
    u = x @ t[p + "w1"].astype(dt).T
    if cfg["ffn_bias"]:
        u = u + t[p + "b1"].astype(dt)
    u = activation(cfg["activation"], u)
    if cfg["gated_ffn"]:
        g = x @ t[p + "w3"].astype(dt).T
        u = u * (g + t[p + "b3"].astype(dt) if cfg["ffn_bias"] else g)
    y = u @ t[p + "w2"].astype(dt).T
    return y + t[p + "b2"].astype(dt) if cfg["ffn_bias"] else y


def model(cfg, t, tokens, dt=np.float64):
    n = len(tokens)
    x = t["token_embedding"].astype(dt)[tokens]
    if cfg["learned_positions"]:
        x = x + t["position_embedding"].astype(dt)[:n]
    if cfg["type_vocab_size"]:
        x = x + t["type_embedding"].astype(dt)[0]
    if cfg["embedding_norm"]:
        x = norm(cfg, t, "embedding_norm", x, dt)
    for i in range(cfg["num_layers"]):
        p = "block%d_" % i
        if cfg["pre_norm"]:
            x = x + attention(cfg, t, i, norm(cfg, t, p + "norm1", x, dt), dt)
            x = x + ffn(cfg, t, i, norm(cfg, t, p + "norm2", x, dt), dt)
        else:
            x = norm(cfg, t, p + "norm1", x + attention(cfg, t, i, x, dt), dt)
            x = norm(cfg, t, p + "norm2", x + ffn(cfg, t, i, x, dt), dt)
    if cfg["final_norm"]:
        x = norm(cfg, t, "final_norm", x, dt)
    if cfg["head"] == "tied":
        return x @ t["token_embedding"].astype(dt).T
    if cfg["head"] == "untied":
        return x @ t["lm_head"].astype(dt).T
    return x


# ---- weights ----------------------------------------------------------------------------
def head_dim(cfg):
    return cfg["head_dim"] or cfg["embed_dim"] // cfg["num_heads"]


def make_tensors(cfg, rng):
    E, F, V = cfg["embed_dim"], cfg["ffn_dim"], cfg["vocab_size"]
    H, hd = cfg["num_heads"], head_dim(cfg)
    D, Dkv = H * hd, (cfg["num_kv_heads"] or H) * hd
    t = {}

    def f32(*shape, scale=1.0):
        return (rng.standard_normal(shape) * scale).astype(np.float32)

    def norm_tensors(name):
        t[name + "_weight"] = (1.0 + f32(E, scale=0.2)).astype(np.float32)
        if cfg["norm"] == "layer" and cfg["norm_bias"]:
            t[name + "_bias"] = f32(E, scale=0.2)

    t["token_embedding"] = f32(V, E)
    if cfg["learned_positions"]:
        t["position_embedding"] = f32(cfg["max_positions"], E, scale=0.5)
    if cfg["type_vocab_size"]:
        t["type_embedding"] = f32(cfg["type_vocab_size"], E, scale=0.5)
    if cfg["embedding_norm"]:
        norm_tensors("embedding_norm")
    for i in range(cfg["num_layers"]):
        p = "block%d_" % i
        for w, rows, cols in (("wq", D, E), ("wk", Dkv, E), ("wv", Dkv, E), ("wo", E, D)):
            t[p + w] = f32(rows, cols, scale=1.0 / math.sqrt(cols))
        if cfg["attention_bias"]:
            for b, rows in (("bq", D), ("bk", Dkv), ("bv", Dkv), ("bo", E)):
                t[p + b] = f32(rows, scale=0.1)
            if cfg.get("zero_bo"):
                t[p + "bo"] = np.zeros(E, np.float32)
        norm_tensors(p + "norm1")
        norm_tensors(p + "norm2")
        t[p + "ffn_w1"] = f32(F, E, scale=1.0 / math.sqrt(E))
        t[p + "ffn_w2"] = f32(E, F, scale=1.0 / math.sqrt(F))
        if cfg["gated_ffn"]:
            t[p + "ffn_w3"] = f32(F, E, scale=1.0 / math.sqrt(E))
        if cfg["ffn_bias"]:
            t[p + "ffn_b1"] = f32(F, scale=0.1)
            t[p + "ffn_b2"] = f32(E, scale=0.1)
            if cfg["gated_ffn"]:
                t[p + "ffn_b3"] = f32(F, scale=0.1)
    if cfg["final_norm"]:
        norm_tensors("final_norm")
    if cfg["head"] == "untied":
        t["lm_head"] = f32(V, E, scale=1.0 / math.sqrt(E))
    return t


def build(name, overrides, n, seed):
    cfg = dict(DEFAULTS)
    cfg.update(overrides)
    rng = np.random.default_rng(seed)
    t = make_tensors(cfg, rng)
    tokens = rng.integers(0, cfg["vocab_size"], size=n).astype(np.int32)
    want = model(cfg, t, tokens)
    got32 = model(cfg, t, tokens, np.float32)
    err = np.abs(got32.astype(np.float64) - want).max() / np.abs(want).max()
    assert err < F32_MARGIN * REL, "%s: a float32 evaluation is off by %.3g of max|y|" % (name, err)
    return cfg, t, tokens, want, err


def config_text(cfg, n):
    lines = []
    for k in DEFAULTS:
        v = cfg[k]
        if isinstance(v, bool):
            v = int(v)
        elif isinstance(v, float):
            v = repr(v)
        lines.append("%s %s" % (k, v))
    lines.append("n %d" % n)
    return "\n".join(lines) + "\n"


def npy_bytes(a):
    buf = io.BytesIO()
    np.save(buf, a, allow_pickle=False)
    return buf.getvalue()


def files_of(cfg, t, tokens, want, n):
    files = {"config.txt": config_text(cfg, n).encode(), "tokens.npy": npy_bytes(tokens),
             "expected.npy": npy_bytes(want.astype(np.float64))}
    for k, v in t.items():
        files[k + ".npy"] = npy_bytes(v)
    return files


# ---- optional: torch cross-check -----------------------------------------------------------
def torch_check(cfg, t, tokens, want):
    import torch

    torch.set_default_dtype(torch.float64)
    T = {k: torch.from_numpy(v.astype(np.float64)) for k, v in t.items()}
    tok = torch.from_numpy(tokens.astype(np.int64))
    n, E, H = len(tokens), cfg["embed_dim"], cfg["num_heads"]
    with torch.no_grad():
        x = T["token_embedding"][tok]
        if cfg["learned_positions"]:
            x = x + T["position_embedding"][:n]
        if cfg["type_vocab_size"]:
            x = x + T["type_embedding"][0]
        if cfg["embedding_norm"]:
            x = torch.nn.functional.layer_norm(x, (E,), T["embedding_norm_weight"], T["embedding_norm_bias"],
                                               cfg["norm_eps"])
        if cfg["norm"] == "layer" and not cfg["rope_base"] and not cfg["gated_ffn"] and head_dim(cfg) * H == E:
            # nn.TransformerEncoderLayer (causal: an additive mask)
            act = {"gelu": "gelu", "relu": "relu", "gelu_tanh": lambda v: torch.nn.functional.gelu(
                v, approximate="tanh")}[cfg["activation"]]
            mask = torch.triu(torch.full((n, n), float("-inf")), 1) if cfg["causal"] else None
            x = x[None]
            for i in range(cfg["num_layers"]):
                p = "block%d_" % i
                layer = torch.nn.TransformerEncoderLayer(E, H, cfg["ffn_dim"], dropout=0.0, activation=act,
                                                         layer_norm_eps=cfg["norm_eps"], batch_first=True,
                                                         norm_first=cfg["pre_norm"]).eval()
                sa = layer.self_attn
                sa.in_proj_weight.copy_(torch.cat([T[p + "wq"], T[p + "wk"], T[p + "wv"]]))
                sa.in_proj_bias.copy_(torch.cat([T[p + "bq"], T[p + "bk"], T[p + "bv"]]))
                sa.out_proj.weight.copy_(T[p + "wo"])
                sa.out_proj.bias.copy_(T[p + "bo"])
                layer.linear1.weight.copy_(T[p + "ffn_w1"])
                layer.linear1.bias.copy_(T[p + "ffn_b1"])
                layer.linear2.weight.copy_(T[p + "ffn_w2"])
                layer.linear2.bias.copy_(T[p + "ffn_b2"])
                for k in ("1", "2"):
                    getattr(layer, "norm" + k).weight.copy_(T[p + "norm%s_weight" % k])
                    getattr(layer, "norm" + k).bias.copy_(T[p + "norm%s_bias" % k])
                x = layer(x, src_mask=mask)
            x = x[0]
            if cfg["final_norm"]:
                x = torch.nn.functional.layer_norm(x, (E,), T["final_norm_weight"], T["final_norm_bias"],
                                                   cfg["norm_eps"])
        else:
            # HF Llama's modules, transcribed (LlamaRMSNorm, LlamaRotaryEmbedding + apply_rotary_pos_emb,
            # repeat_kv, LlamaMLP)
            hd, kv = head_dim(cfg), cfg["num_kv_heads"] or H
            inv = 1.0 / (cfg["rope_base"] ** (torch.arange(0, hd, 2).double() / hd))
            freqs = torch.outer(torch.arange(n).double(), inv)
            emb = torch.cat((freqs, freqs), dim=-1)
            cos, sin = emb.cos(), emb.sin()

            def rot_half(v):
                return torch.cat((-v[..., hd // 2:], v[..., :hd // 2]), dim=-1)

            def rms(v, w):
                return w * (v * torch.rsqrt(v.pow(2).mean(-1, keepdim=True) + cfg["norm_eps"]))

            for i in range(cfg["num_layers"]):
                p = "block%d_" % i
                h = rms(x, T[p + "norm1_weight"])
                def lin(w, inp):  # nn.Linear, with the bias where the config has one
                    y = inp @ T[p + "w" + w].T
                    return y + T[p + "b" + w] if cfg["attention_bias"] else y

                q = lin("q", h).view(n, H, hd).transpose(0, 1)
                k = lin("k", h).view(n, kv, hd).transpose(0, 1)
                v = lin("v", h).view(n, kv, hd).transpose(0, 1)
                q, k = q * cos + rot_half(q) * sin, k * cos + rot_half(k) * sin
                k, v = k.repeat_interleave(H // kv, dim=0), v.repeat_interleave(H // kv, dim=0)
                a = torch.nn.functional.scaled_dot_product_attention(q[None], k[None], v[None], is_causal=True)[0] \
                    if hasattr(torch.nn.functional, "scaled_dot_product_attention") else \
                    torch.softmax((q @ k.transpose(1, 2)) / math.sqrt(hd) + torch.triu(
                        torch.full((n, n), float("-inf")), 1), dim=-1) @ v
                x = x + lin("o", a.transpose(0, 1).reshape(n, H * hd))
                h = rms(x, T[p + "norm2_weight"])
                x = x + (torch.nn.functional.silu(h @ T[p + "ffn_w1"].T) * (h @ T[p + "ffn_w3"].T)) @ T[p + "ffn_w2"].T
            x = rms(x, T["final_norm_weight"])
        if cfg["head"] == "tied":
            x = x @ T["token_embedding"].T
        elif cfg["head"] == "untied":
            x = x @ T["lm_head"].T
    err = np.abs(x.numpy() - want).max() / np.abs(want).max()
    assert err < 1e-12, "torch disagrees by %.3g" % err
    return err


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--check", action="store_true", help="compare with the files instead of writing them")
    ap.add_argument("--torch", action="store_true", help="also cross-check against torch (float64)")
    ap.add_argument("--out", default=OUT_DIR)
    args = ap.parse_args()
    bad = 0
    total = 0
    for name, overrides, n, seed in CASES:
        cfg, t, tokens, want, err = build(name, overrides, n, seed)
        files = files_of(cfg, t, tokens, want, n)
        note = "f32 err %.2g of max|y|" % err
        if args.torch:
            note += ", torch agrees within %.2g" % torch_check(cfg, t, tokens, want)
        d = os.path.join(args.out, name)
        size = sum(len(b) for b in files.values())
        total += size
        if args.check:
            for fname, data in files.items():
                path = os.path.join(d, fname)
                if not os.path.exists(path) or open(path, "rb").read() != data:
                    print("MISMATCH %s" % path)
                    bad += 1
        else:
            os.makedirs(d, exist_ok=True)
            for fname, data in files.items():
                with open(os.path.join(d, fname), "wb") as f:
                    f.write(data)
        print("%-34s %6d bytes  %s" % (name, size, note))
    print("%d cases, %d bytes" % (len(CASES), total))
    return 1 if bad else 0


if __name__ == "__main__":
    sys.exit(main())
