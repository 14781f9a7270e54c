#!/usr/bin/python3
"""Generate the golden attention vectors in tests/data/golden/ from PyTorch.

Run with Debian's python3 (it has torch and numpy):

    /usr/bin/python3 tools/gen_golden.py            # writes tests/data/golden/*.bin
    /usr/bin/python3 tools/gen_golden.py --check    # regenerate in memory, compare with the files

Every case draws its weights and inputs from numpy with a fixed seed, rounds
them to float32 and stores them as float32. The expected outputs are computed
in float64 from those float32 values:

  * by torch.nn.MultiheadAttention(batch_first=True) in float64 when
    H * head_dim == E and no query row is fully masked, and
  * by the plain float64 reference in this script otherwise (head_dim != E/H,
    fully masked rows: PyTorch gives NaN there, attn gives all-zero weights and
    an output row equal to bo);
  * for the Llama-style cases (llama_*: GQA/MQA, RoPE, causal, sliding window),
    by llama_torch(): float64 torch written the way HF LlamaAttention computes,
    asserted equal to an independent numpy formulation (llama_numpy).

The script asserts that its own reference reproduces nn.MultiheadAttention on
every case PyTorch can run, and that a plain float32 evaluation of each case is
well inside the test bound (so a failing C++ test means a wrong library, not
an ill-conditioned case). The file format is in tests/data/golden/README.md.
"""

import argparse
import math
import os
import struct
import sys

import numpy as np
import torch

MAGIC = b"ATTNGOLD"
END_MAGIC = b"END."
# Version 1: the 64-byte header. Version 2 appends 16 bytes (num_kv_heads, rope_base, window,
# reserved) for the Llama-style cases. A case is written with the lowest version that describes
# it, so the version-1 files stay byte-identical.
HEADER = struct.Struct("<8sI13i")  # magic, version, 13 int32 fields: 64 bytes
HEADER_V2_EXTRA = struct.Struct("<ifii")  # num_kv_heads, rope_base (float32), window, reserved = 0
assert HEADER.size == 64 and HEADER_V2_EXTRA.size == 16

# The bound tests/golden_test.cpp applies: max|got - want| <= REL * max|want| + ABS.
REL, ABS = 1e-5, 1e-6
# A float32 evaluation of every case must stay within this fraction of the bound.
F32_MARGIN = 0.25

OUT_DIR = os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "tests", "data", "golden")


class Case:
    """One attention problem: config, shape, mask, and how to draw the data."""

    def __init__(self, name, E, H, L, S=None, head_dim=0, kdim=0, vdim=0, bias=True, causal=False,
                 causal_offset=0, key_length=-1, additive=None, x_scale=1.0, w_gain=1.0, self_attn=None,
                 kv_heads=0, rope_base=0.0, window=0, llama=False):
        self.name = name
        self.E, self.H = E, H
        self.head_dim = head_dim if head_dim else E // H
        assert head_dim or E % H == 0, name
        # Grouped-query attention: K/V heads, each shared by H / kv_heads query heads.
        self.kv_heads = kv_heads if kv_heads else H
        assert H % self.kv_heads == 0, name
        # Rotary embedding base (0: none), sliding window (0: none; keep the last `window` keys).
        self.rope_base, self.window = float(np.float32(rope_base)), window
        assert rope_base == self.rope_base, name  # exactly a float32, as stored
        assert self.head_dim % 2 == 0 or not rope_base, name
        assert window == 0 or causal, name
        # Llama-style: expected values from llama_torch() (HF LlamaAttention's computation).
        self.llama = llama
        self.kdim = kdim if kdim else E
        self.vdim = vdim if vdim else E
        self.bias = bias
        self.L = L
        self.S = L if S is None else S
        # Self-attention: key and value are the query tensor itself.
        self.self_attn = (S is None) if self_attn is None else self_attn
        if self.self_attn:
            assert self.S == self.L and self.kdim == E and self.vdim == E, name
        self.causal, self.causal_offset = causal, causal_offset
        self.key_length = key_length
        self.additive = additive  # None, "random", "inf" (random with -inf holes), "fullrow"
        self.x_scale, self.w_gain = x_scale, w_gain

    @property
    def D(self):
        return self.H * self.head_dim

    @property
    def Dkv(self):
        return self.kv_heads * self.head_dim

    @property
    def version(self):
        return 2 if (self.kv_heads != self.H or self.rope_base or self.window) else 1


def llama_case(name, E, H, kv_heads, L, rope_base=10000.0, window=0, head_dim=0, w_gain=1.0):
    """HF Llama/Mistral self-attention: no biases, causal, RoPE (and a sliding window)."""
    return Case(name, E, H, L, head_dim=head_dim, bias=False, causal=True, kv_heads=kv_heads,
                rope_base=rope_base, window=window, w_gain=w_gain, llama=True)


def cases():
    c = []
    # Plain self and cross attention, odd widths (not multiples of 4/8/16), L = 1, S != L.
    c += [Case("self_e48_h4_l16", 48, 4, 16)]
    c += [Case("cross_e40_h4_l16_s24", 40, 4, 16, S=24)]
    c += [Case("self_e5_h1_l7", 5, 1, 7)]
    c += [Case("cross_e13_h1_l9_s11", 13, 1, 9, S=11)]
    c += [Case("self_e30_h3_l12", 30, 3, 12)]
    c += [Case("cross_e30_h2_l5_s19", 30, 2, 5, S=19)]
    c += [Case("self_e32_h4_l1", 32, 4, 1)]
    c += [Case("cross_e32_h4_l1_s17", 32, 4, 1, S=17)]
    c += [Case("cross_e24_h2_l33_s1", 24, 2, 33, S=1)]
    c += [Case("self_e40_h8_l20", 40, 8, 20)]
    c += [Case("cross_e64_h16_l12_s20", 64, 16, 12, S=20)]
    c += [Case("self_e16_h16_l9", 16, 16, 9)]  # head_dim 1
    c += [Case("cross_e96_h6_l24_s20", 96, 6, 24, S=20)]
    c += [Case("self_e16_h1_l64", 16, 1, 64)]
    # No bias.
    c += [Case("nobias_self_e48_h4_l10", 48, 4, 10, bias=False)]
    c += [Case("nobias_cross_e20_h2_l6_s14_k12_v9", 20, 2, 6, S=14, kdim=12, vdim=9, bias=False)]
    # Causal (top-left aligned), self and L != S, and with an offset.
    c += [Case("causal_self_e32_h4_l24", 32, 4, 24, causal=True)]
    c += [Case("causal_cross_e24_h3_l10_s20", 24, 3, 10, S=20, causal=True)]
    c += [Case("causal_cross_e24_h3_l20_s10", 24, 3, 20, S=10, causal=True)]
    c += [Case("causal_off10_cross_e16_h2_l6_s16", 16, 2, 6, S=16, causal=True, causal_offset=10)]
    c += [Case("causal_off3_self_e12_h2_l8", 12, 2, 8, causal=True, causal_offset=3)]
    # Key padding.
    c += [Case("keypad_self_e32_h2_l16_k11", 32, 2, 16, key_length=11)]
    c += [Case("keypad_cross_e40_h4_l8_s30_k17", 40, 4, 8, S=30, key_length=17)]
    c += [Case("keypad_causal_self_e16_h4_l12_k9", 16, 4, 12, causal=True, key_length=9)]
    # kdim / vdim != E.
    c += [Case("kv_cross_e32_h4_l7_s15_k20_v12", 32, 4, 7, S=15, kdim=20, vdim=12)]
    c += [Case("kv_cross_e13_h1_l5_s9_k7_v29", 13, 1, 5, S=9, kdim=7, vdim=29)]
    c += [Case("kv_cross_e32_h8_l16_s16_k48", 32, 8, 16, S=16, kdim=48)]
    # Additive float mask [L, S].
    c += [Case("additive_self_e32_h4_l16", 32, 4, 16, additive="random")]
    c += [Case("additive_inf_cross_e24_h2_l9_s13", 24, 2, 9, S=13, additive="inf")]
    c += [Case("additive_all_cross_e20_h4_l12_s18", 20, 4, 12, S=18, additive="inf", causal=True,
               causal_offset=4, key_length=15)]
    # Large magnitudes: inputs x100 (output scales with them) and a peaky softmax.
    c += [Case("large_self_e32_h4_l16_x100", 32, 4, 16, x_scale=100.0, w_gain=0.1)]
    c += [Case("peaky_cross_e24_h2_l12_s20", 24, 2, 12, S=20, w_gain=4.0)]
    c += [Case("large_cross_e16_h2_l8_s12_x100", 16, 2, 8, S=12, x_scale=100.0, w_gain=0.05)]
    # head_dim != E / H (D != E): reference from this script.
    c += [Case("hd_self_e32_h4_d12_l10", 32, 4, 10, head_dim=12)]
    c += [Case("hd_cross_e20_h3_d5_l6_s11_k9_v14", 20, 3, 6, S=11, head_dim=5, kdim=9, vdim=14)]
    c += [Case("hd_self_e8_h2_d16_l5", 8, 2, 5, head_dim=16)]
    c += [Case("hd_nobias_cross_e10_h3_d7_l4_s6", 10, 3, 4, S=6, head_dim=7, bias=False)]
    # Fully masked query rows (attn semantics: zero weights, output row = bo): reference from this script.
    c += [Case("fullmask_row_cross_e16_h2_l6_s8", 16, 2, 6, S=8, additive="fullrow", key_length=6)]
    c += [Case("fullmask_keylen0_cross_e12_h3_l4_s5", 12, 3, 4, S=5, key_length=0)]
    # Llama-style self-attention (reference: llama_torch): GQA, MQA, MHA, all with RoPE and causal.
    # stories260K (llama2.c): dim 64, 8 heads, 4 KV heads, head_dim 8, rope theta 10000.
    c += [llama_case("llama_stories260k_e64_h8_kv4_l1", 64, 8, 4, 1)]
    c += [llama_case("llama_stories260k_e64_h8_kv4_l33", 64, 8, 4, 33, w_gain=2.0)]
    c += [llama_case("llama_gqa_e32_h8_kv4_l7", 32, 8, 4, 7, w_gain=2.0)]
    c += [llama_case("llama_mqa_e24_h4_kv1_l33", 24, 4, 1, 33, w_gain=2.0)]
    c += [llama_case("llama_mqa_e24_h4_kv1_l1", 24, 4, 1, 1)]
    c += [llama_case("llama_mha_rope_e16_h2_l7", 16, 2, 2, 7, w_gain=2.0)]
    # Llama 3's theta, head_dim 16 (frequencies down to 500000^(-14/16)).
    c += [llama_case("llama_rope500k_e32_h2_kv1_l7", 32, 2, 1, 7, rope_base=500000.0, w_gain=2.0)]
    # Mistral-style sliding window: each query sees its last `window` positions (itself included).
    c += [llama_case("llama_window8_e32_h4_kv2_l33", 32, 4, 2, 33, window=8, w_gain=2.0)]
    c += [llama_case("llama_window3_e16_h4_kv2_l7", 16, 4, 2, 7, window=3, head_dim=6, w_gain=2.0)]
    return c


def f32(a):
    """Round to float32 (the stored values); returned as float32."""
    return np.asarray(a, dtype=np.float64).astype(np.float32)


def draw(case, seed):
    """Weights and inputs of a case, all float32."""
    rng = np.random.default_rng(seed)
    E, D, kd, vd, L, S = case.E, case.D, case.kdim, case.vdim, case.L, case.S
    g = case.w_gain

    def w(rows, cols):
        a = 1.0 / math.sqrt(cols)
        return f32(rng.uniform(-a, a, size=(rows, cols)) * g)

    d = {}
    Dkv = case.Dkv
    d["wq"], d["wk"], d["wv"], d["wo"] = w(D, E), w(Dkv, kd), w(Dkv, vd), w(E, D)
    if case.bias:
        d["bq"], d["bk"], d["bv"] = (f32(rng.uniform(-0.5, 0.5, size=n)) for n in (D, Dkv, Dkv))
        d["bo"] = f32(rng.uniform(-0.5, 0.5, size=E))
    d["query"] = f32(rng.standard_normal((L, E)) * case.x_scale)
    if case.self_attn:
        d["key"] = d["query"].copy()
        d["value"] = d["query"].copy()
    else:
        d["key"] = f32(rng.standard_normal((S, kd)) * case.x_scale)
        d["value"] = f32(rng.standard_normal((S, vd)) * case.x_scale)
    if case.additive is not None:
        m = rng.uniform(-3.0, 3.0, size=(L, S))
        if case.additive in ("inf", "fullrow"):
            holes = rng.random((L, S)) < 0.25
            holes[:, 0] = False  # key 0 is never removed by the additive mask: no fully masked rows
            m[holes] = -np.inf
        if case.additive == "fullrow":
            m[L // 2, :] = -np.inf  # one fully masked query row
        d["mask"] = f32(m)
    return d


def allowed(case, additive):
    """[L, S] bool: which scores take part in the softmax (attn semantics)."""
    L, S = case.L, case.S
    ok = np.ones((L, S), dtype=bool)
    i = np.arange(L)[:, None]
    j = np.arange(S)[None, :]
    if case.causal:
        ok &= j <= i + case.causal_offset
    if case.window:
        ok &= j > i + case.causal_offset - case.window
    if case.key_length >= 0:
        ok &= j < case.key_length
    if additive is not None:
        ok &= np.isfinite(additive)
    return ok


def reference(case, d, dtype):
    """attn's semantics, plain numpy in `dtype`: returns y [L, E], p [H, L, S]. (No GQA or RoPE:
    the Llama-style cases use llama_numpy.)"""
    assert case.kv_heads == case.H and not case.rope_base, case.name
    t = lambda k: None if k not in d else d[k].astype(dtype)
    x, xk, xv = t("query"), t("key"), t("value")
    q = x @ t("wq").T
    k = xk @ t("wk").T
    v = xv @ t("wv").T
    if case.bias:
        q, k, v = q + t("bq"), k + t("bk"), v + t("bv")
    add = t("mask")
    ok = allowed(case, add)
    hd = case.head_dim
    scale = dtype(1.0 / math.sqrt(hd))
    o = np.zeros((case.L, case.D), dtype=dtype)
    p_all = np.zeros((case.H, case.L, case.S), dtype=dtype)
    for h in range(case.H):
        sl = slice(h * hd, (h + 1) * hd)
        s = (q[:, sl] @ k[:, sl].T) * scale
        if add is not None:
            s = s + np.where(ok, add, 0).astype(dtype)
        s = np.where(ok, s, -np.inf)
        p = np.zeros_like(s)
        live = ok.any(axis=1)
        if live.any():
            sm = s[live] - s[live].max(axis=1, keepdims=True)
            e = np.exp(sm)
            p[live] = e / e.sum(axis=1, keepdims=True)
        p_all[h] = p
        o[:, sl] = p @ v[:, sl]
    y = o @ t("wo").T
    if case.bias:
        y = y + t("bo")
    return y, p_all


def torch_reference(case, d):
    """torch.nn.MultiheadAttention in float64; None when PyTorch cannot run the case."""
    if case.llama or case.version != 1 or case.D != case.E or not allowed(case, d.get("mask")).any(axis=1).all():
        return None
    E = case.E
    mha = torch.nn.MultiheadAttention(E, case.H, bias=case.bias, kdim=case.kdim, vdim=case.vdim,
                                      batch_first=True, dtype=torch.float64)
    # Training mode keeps the documented math path (eval mode may take the fused fast path,
    # which in 1.13 fails without biases); dropout is 0, so the result is the same.
    mha.train()
    T = lambda k: torch.from_numpy(d[k].astype(np.float64))
    with torch.no_grad():
        if mha._qkv_same_embed_dim:
            mha.in_proj_weight.copy_(torch.cat([T("wq"), T("wk"), T("wv")]))
        else:
            mha.q_proj_weight.copy_(T("wq"))
            mha.k_proj_weight.copy_(T("wk"))
            mha.v_proj_weight.copy_(T("wv"))
        mha.out_proj.weight.copy_(T("wo"))
        if case.bias:
            mha.in_proj_bias.copy_(torch.cat([T("bq"), T("bk"), T("bv")]))
            mha.out_proj.bias.copy_(T("bo"))
    query = T("query")[None]
    key = query if case.self_attn else T("key")[None]
    value = query if case.self_attn else T("value")[None]
    L, S = case.L, case.S
    attn_mask = None
    if case.causal:
        # Query i sees key j iff j <= i + offset: torch.triu(ones(L, S), 1 + offset) masks.
        attn_mask = torch.triu(torch.ones(L, S, dtype=torch.bool), diagonal=1 + case.causal_offset)
    if "mask" in d:
        add = T("mask")
        attn_mask = add if attn_mask is None else add.masked_fill(attn_mask, float("-inf"))
    kpm = None
    if case.key_length >= 0:
        kpm = (torch.arange(S) >= case.key_length)[None]
    with torch.no_grad():
        y, p = mha(query, key, value, key_padding_mask=kpm, need_weights=True, attn_mask=attn_mask,
                   average_attn_weights=False)
    return y[0].numpy(), p[0].numpy()


# ---------------------------------------------------------------------------------------------
# Llama-style attention (HF transformers' LlamaAttention, MistralAttention for the window).


def rotate_half(x):
    """HF Llama's rotate_half: [x1, x2] -> [-x2, x1] over the last dim split in halves."""
    half = x.shape[-1] // 2
    return torch.cat((-x[..., half:], x[..., :half]), dim=-1)


def repeat_kv(x, n_rep):
    """HF Llama's repeat_kv: [B, KV, L, hd] -> [B, KV * n_rep, L, hd], each KV head n_rep times."""
    b, kv, n, hd = x.shape
    if n_rep == 1:
        return x
    return x[:, :, None, :, :].expand(b, kv, n_rep, n, hd).reshape(b, kv * n_rep, n, hd)


def llama_torch(case, d):
    """float64 torch, computed the way HF LlamaAttention.forward computes it (eager path).

    q_proj/k_proj/v_proj/o_proj are nn.Linear without bias; the rotary cos/sin are HF's
    LlamaRotaryEmbedding (inv_freq = 1 / theta^(arange(0, hd, 2) / hd), emb = cat(freqs, freqs)),
    here in float64 where HF builds inv_freq in float32; positions 0 .. L-1. The mask is HF's
    causal mask, plus Mistral's sliding window with attn's meaning: query i keeps keys
    i - window < j <= i. Returns y [L, E], p [H, L, L].
    """
    assert case.llama and case.self_attn and not case.bias and case.causal and case.causal_offset == 0
    f64 = torch.float64
    E, H, KV, hd, L = case.E, case.H, case.kv_heads, case.head_dim, case.L
    T = lambda k: torch.from_numpy(d[k].astype(np.float64))

    def linear(w):
        m = torch.nn.Linear(w.shape[1], w.shape[0], bias=False, dtype=f64)
        with torch.no_grad():
            m.weight.copy_(w)
        return m

    q_proj, k_proj, v_proj, o_proj = (linear(T(k)) for k in ("wq", "wk", "wv", "wo"))
    hidden = T("query")[None]  # [1, L, E]
    with torch.no_grad():
        q = q_proj(hidden).view(1, L, H, hd).transpose(1, 2)  # [1, H, L, hd]
        k = k_proj(hidden).view(1, L, KV, hd).transpose(1, 2)  # [1, KV, L, hd]
        v = v_proj(hidden).view(1, L, KV, hd).transpose(1, 2)  # [1, KV, L, hd]
        if case.rope_base:
            inv_freq = 1.0 / (case.rope_base ** (torch.arange(0, hd, 2, dtype=f64) / hd))  # [hd/2]
            position_ids = torch.arange(L, dtype=f64)
            freqs = torch.outer(position_ids, inv_freq)  # [L, hd/2]
            emb = torch.cat((freqs, freqs), dim=-1)  # [L, hd]
            cos, sin = emb.cos()[None, None], emb.sin()[None, None]
            q = q * cos + rotate_half(q) * sin
            k = k * cos + rotate_half(k) * sin
        k = repeat_kv(k, H // KV)  # [1, H, L, hd]
        v = repeat_kv(v, H // KV)
        scores = torch.matmul(q, k.transpose(2, 3)) / math.sqrt(hd)  # [1, H, L, L]
        mask = torch.full((L, L), float("-inf"), dtype=f64).triu(1)
        if case.window:
            mask = mask.masked_fill(torch.ones(L, L, dtype=torch.bool).tril(-case.window), float("-inf"))
        probs = torch.nn.functional.softmax(scores + mask, dim=-1, dtype=f64)
        out = torch.matmul(probs, v).transpose(1, 2).reshape(1, L, H * hd)  # [1, L, D]
        y = o_proj(out)
    return y[0].numpy(), probs[0].numpy()


def llama_numpy(case, d, dtype):
    """An independent formulation in plain numpy, in `dtype`: the pairs (m, m + hd/2) of each
    head as complex numbers turned by e^{i pos theta^(-2m/hd)}, query head h reading KV head
    h // (H / KV), the visible keys of each query taken as an index range. Returns y, p."""
    E, H, KV, hd, L = case.E, case.H, case.kv_heads, case.head_dim, case.L
    t = lambda k: d[k].astype(dtype)
    x = t("query")
    q, k, v = x @ t("wq").T, x @ t("wk").T, x @ t("wv").T  # [L, D], [L, Dkv], [L, Dkv]
    half = hd // 2
    cdt = np.complex128 if dtype == np.float64 else np.complex64

    def turned(row, pos):  # [hd] -> [hd/2] complex, rotated to `pos`
        z = row[:half].astype(cdt) + 1j * row[half:].astype(cdt)
        if case.rope_base:
            angle = pos * np.exp(-np.arange(half) * 2.0 / hd * np.log(case.rope_base))
            z = z * np.exp(1j * angle).astype(cdt)
        return z

    group = H // KV
    o = np.zeros((L, case.D), dtype=dtype)
    p_all = np.zeros((H, L, L), dtype=dtype)
    scale = dtype(1.0 / math.sqrt(hd))
    for h in range(H):
        g = h // group
        keys = [turned(k[j, g * hd:(g + 1) * hd], j) for j in range(L)]
        for i in range(L):
            zq = turned(q[i, h * hd:(h + 1) * hd], i)
            lo = max(0, i - case.window + 1) if case.window else 0
            s = np.array([np.real(np.sum(zq * np.conj(keys[j]))) for j in range(lo, i + 1)], dtype=dtype)
            e = np.exp((s - s.max()) * scale)
            pr = e / e.sum()
            p_all[h, i, lo:i + 1] = pr
            o[i, h * hd:(h + 1) * hd] = pr @ v[lo:i + 1, g * hd:(g + 1) * hd]
    return o @ t("wo").T, p_all


def llama_expected(case, d):
    y_t, p_t = llama_torch(case, d)
    y_n, p_n = llama_numpy(case, d, np.float64)
    assert max_err(y_n, y_t) <= 1e-12 * max(1.0, np.abs(y_t).max()), (case.name, max_err(y_n, y_t))
    assert max_err(p_n, p_t) <= 1e-12, (case.name, max_err(p_n, p_t))
    y32, p32 = llama_numpy(case, d, np.float32)
    return y_t, p_t, y32, p32


def max_err(got, want):
    return float(np.max(np.abs(got.astype(np.float64) - want))) if want.size else 0.0


def bound(want):
    return REL * float(np.max(np.abs(want))) + ABS


def expected(case, d):
    """float64 y [L, E] and p [H, L, S]; checks the reference against PyTorch and float32."""
    if case.llama:
        y, p, y32, p32 = llama_expected(case, d)
        ey, ep = max_err(y32, y) / bound(y), max_err(p32, p) / bound(p)
        assert ey <= F32_MARGIN and ep <= F32_MARGIN, (case.name, ey, ep)
        return y, p, "llama", max(ey, ep)
    y_ref, p_ref = reference(case, d, np.float64)
    tr = torch_reference(case, d)
    if tr is not None:
        y_t, p_t = tr
        # Both float64 from the same float32 data: they must agree to rounding.
        assert max_err(y_ref, y_t) <= 1e-12 * max(1.0, np.abs(y_t).max()), (case.name, max_err(y_ref, y_t))
        assert max_err(p_ref, p_t) <= 1e-12, (case.name, max_err(p_ref, p_t))
        y, p, src = y_t, p_t, "torch"
    else:
        y, p, src = y_ref, p_ref, "reference"
    # Conditioning: a float32 evaluation must be well inside the bound the C++ test uses.
    y32, p32 = reference(case, d, np.float32)
    ey, ep = max_err(y32, y) / bound(y), max_err(p32, p) / bound(p)
    assert ey <= F32_MARGIN and ep <= F32_MARGIN, (case.name, ey, ep)
    return y, p, src, max(ey, ep)


def encode(case, d, y, p):
    hdr = HEADER.pack(MAGIC, case.version, case.E, case.H, case.head_dim, case.kdim, case.vdim, int(case.bias),
                      case.L, case.S, int(case.causal), case.causal_offset, case.key_length,
                      int("mask" in d), int(case.self_attn))
    if case.version == 2:
        hdr += HEADER_V2_EXTRA.pack(case.kv_heads, case.rope_base, case.window, 0)
    parts = [hdr]
    names = ["wq", "wk", "wv", "wo"] + (["bq", "bk", "bv", "bo"] if case.bias else []) + ["query", "key", "value"]
    names += ["mask"] if "mask" in d else []
    for n in names:
        parts.append(np.ascontiguousarray(d[n], dtype="<f4").tobytes())
    parts.append(np.ascontiguousarray(y, dtype="<f8").tobytes())
    parts.append(np.ascontiguousarray(p, dtype="<f8").tobytes())
    parts.append(END_MAGIC)
    return b"".join(parts)


# ---- fixed point: calibration data and the ideal fake-quantized forward -------------------------
#
# For every case the integer forwards can run (no additive mask) a sidecar file
# quant/<name>.bin holds N calibration inputs drawn from the case's input distribution (its own
# seed, so the case files do not change) and the SQNR (dB, against the expected float64 y) of the
# ideal fake-quantized forward of attn's scheme (src/FIXED_POINT.md) in float64:
#   ranges: min/max of every stage of the float64 forward over the calibration inputs, widened to 0;
#   s8: activations asymmetric per tensor, scale (hi - lo) / 255, zero point round(-128 - lo / scale);
#   s16: activations symmetric per tensor, scale max|x| / 32767;
#   weights int8 symmetric per output channel (max|w| / 127), biases rounded to s_in * s_w;
#   x, key, value, Q, K, V, context and y rounded to their grids; exact (float64) probabilities;
#   RoPE (Llama cases): Q and K rounded to their grid after the projection, rotated with exact
#   cos/sin (queries and keys at positions 0, 1, ...), rounded again; their ranges cover both.
# tests/golden_fixed_test.cpp quantizes with the C++ converter on the same calibration inputs and
# must come within 1 dB of this ideal. Format: tests/data/golden/README.md, "Fixed-point sidecar".
QUANT_MAGIC = b"ATTNGQNT"
QUANT_VERSION = 1
QUANT_HEADER = struct.Struct("<8sIiiidd")  # magic, version, N, self_attention, reserved, ideal s8, ideal s16
assert QUANT_HEADER.size == 40
N_CALIB = 8
# The short Llama cases (L <= 7: decode-like steps) get 64 calibration examples: 8 examples of 1..7
# rows cover too few projected values for a meaningful ideal (one V row of the 1-row test input
# falls far outside them).
N_CALIB_SHORT_LLAMA = 64


def n_calib(case):
    return N_CALIB_SHORT_LLAMA if case.llama and case.L <= 7 else N_CALIB


def quant_applicable(case):
    return case.additive is None


def draw_calib(case, seed):
    """N calibration inputs from the distribution of the case's test input (draw())."""
    rng = np.random.default_rng(seed)
    n = n_calib(case)
    c = {"query": f32(rng.standard_normal((n, case.L, case.E)) * case.x_scale)}
    if not case.self_attn:
        c["key"] = f32(rng.standard_normal((n, case.S, case.kdim)) * case.x_scale)
        c["value"] = f32(rng.standard_normal((n, case.S, case.vdim)) * case.x_scale)
    return c


def round_away(x):
    return np.sign(x) * np.floor(np.abs(x) + 0.5)


def rope_rows(m, hd, base):
    """HF Llama's rotary embedding of m [rows, heads * hd] in float64, row r at position r."""
    half = hd // 2
    ang = np.arange(m.shape[0])[:, None] * (float(base) ** (-2.0 * np.arange(half) / hd))[None, :]
    c, s = np.cos(ang), np.sin(ang)
    out = m.copy()
    for h0 in range(0, m.shape[1], hd):
        a, b = m[:, h0:h0 + half], m[:, h0 + half:h0 + hd]
        out[:, h0:h0 + half] = a * c - b * s
        out[:, h0 + half:h0 + hd] = b * c + a * s
    return out


def stages(case, w, x, xk, xv, fq=None):
    """float64 forward of one example with every stage; fq(name, value) rounds a stage to its
    grid (None: exact). Returns dict of x, key, value, q, k, v, ctx, y (and, with RoPE, q_pre,
    k_pre: Q and K before the rotation, on the same grid as after it)."""
    fq = fq or (lambda name, v: v)
    t = {"x": fq("x", x), "key": fq("key", xk), "value": fq("value", xv)}
    b = (lambda n: w[n]) if case.bias else (lambda n: 0.0)
    t["q"] = fq("q", t["x"] @ w["wq"].T + b("bq"))
    t["k"] = fq("k", t["key"] @ w["wk"].T + b("bk"))
    t["v"] = fq("v", t["value"] @ w["wv"].T + b("bv"))
    if case.rope_base:
        t["q_pre"], t["k_pre"] = t["q"], t["k"]
        t["q"] = fq("q", rope_rows(t["q"], case.head_dim, case.rope_base))
        t["k"] = fq("k", rope_rows(t["k"], case.head_dim, case.rope_base))
    ok = allowed(case, None)
    hd, g = case.head_dim, case.H // case.kv_heads
    ctx = np.zeros((case.L, case.D))
    for h in range(case.H):
        sl, kl = slice(h * hd, (h + 1) * hd), slice((h // g) * hd, (h // g + 1) * hd)
        sc = np.where(ok, (t["q"][:, sl] @ t["k"][:, kl].T) / math.sqrt(hd), -np.inf)
        live = ok.any(axis=1)
        p = np.zeros_like(sc)
        if live.any():
            e = np.exp(sc[live] - sc[live].max(axis=1, keepdims=True))
            p[live] = e / e.sum(axis=1, keepdims=True)
        ctx[:, sl] = p @ t["v"][:, kl]
    t["ctx"] = fq("ctx", ctx)
    t["y"] = fq("y", t["ctx"] @ w["wo"].T + b("bo"))
    return t


def ideal_sqnr(case, d, y, calib, bits):
    """SQNR (dB) against y of the ideal fake-quantized forward with `bits`-bit activations."""
    w = {k: d[k].astype(np.float64) for k in ("wq", "wk", "wv", "wo", "bq", "bk", "bv", "bo") if k in d}
    n = calib["query"].shape[0]
    lo, hi = {}, {}
    for i in range(n):
        x = calib["query"][i].astype(np.float64)
        xk = x if case.self_attn else calib["key"][i].astype(np.float64)
        xv = x if case.self_attn else calib["value"][i].astype(np.float64)
        for k, v in stages(case, w, x, xk, xv).items():
            k = {"q_pre": "q", "k_pre": "k"}.get(k, k)  # one grid before and after the rotation
            lo[k] = min(lo.get(k, 0.0), float(v.min()))
            hi[k] = max(hi.get(k, 0.0), float(v.max()))
    qmin, qmax = (-128, 127) if bits == 8 else (-32768, 32767)
    params = {}
    for k in lo:
        if bits == 8:
            scale = float(np.float32((hi[k] - lo[k]) / 255.0)) if hi[k] > lo[k] else 2.0 ** -20
            zp = float(np.clip(round_away(-128.0 - lo[k] / scale), -128, 127))
        else:
            amax = max(abs(lo[k]), abs(hi[k]))
            scale, zp = (float(np.float32(amax / 32767.0)) if amax > 0 else 2.0 ** -20), 0.0
        params[k] = (scale, zp)
    wq = {}
    in_of = {"wq": "x", "wk": "key", "wv": "value", "wo": "ctx"}
    for name, b in (("wq", "bq"), ("wk", "bk"), ("wv", "bv"), ("wo", "bo")):
        m = w[name]
        amax = np.abs(m).max(axis=1)
        s_w = np.where(amax > 0, (amax / 127.0).astype(np.float32).astype(np.float64), 2.0 ** -20)
        wq[name] = np.clip(round_away(m / s_w[:, None]), -127, 127) * s_w[:, None]
        if case.bias:
            unit = params[in_of[name]][0] * s_w
            wq[b] = round_away(w[b] / unit) * unit

    def fq(name, v):
        scale, zp = params[name]
        return (np.clip(round_away(v / scale) + zp, qmin, qmax) - zp) * scale

    x = d["query"].astype(np.float64)
    t = stages(case, wq, x, d["key"].astype(np.float64), d["value"].astype(np.float64), fq)
    noise = float(((t["y"] - y) ** 2).sum())
    return 10.0 * math.log10(float((y ** 2).sum()) / noise) if noise > 0 else 300.0


def encode_quant(case, calib, s8, s16):
    parts = [QUANT_HEADER.pack(QUANT_MAGIC, QUANT_VERSION, calib["query"].shape[0], int(case.self_attn), 0, s8, s16)]
    for k in ("query", "key", "value"):
        if k in calib:
            parts.append(np.ascontiguousarray(calib[k], dtype="<f4").tobytes())
    parts.append(END_MAGIC)
    return b"".join(parts)


def self_check():
    """The script's own reference against nn.MultiheadAttention on ordinary cases."""
    for case in [Case("chk_self", 24, 3, 7), Case("chk_cross", 16, 2, 5, S=9, kdim=6, vdim=11),
                 Case("chk_mask", 16, 4, 6, S=10, causal=True, key_length=8, additive="inf")]:
        d = draw(case, 12345)
        y_ref, p_ref = reference(case, d, np.float64)
        y_t, p_t = torch_reference(case, d)
        assert max_err(y_ref, y_t) <= 1e-12 * np.abs(y_t).max(), case.name
        assert max_err(p_ref, p_t) <= 1e-12, case.name
    # Without RoPE and GQA, the Llama-style reference is a causal nn.MultiheadAttention without biases.
    case = Case("chk_llama_as_mha", 24, 4, 9, bias=False, causal=True, llama=True)
    d = draw(case, 54321)
    case.llama = False
    y_t, p_t = torch_reference(case, d)
    case.llama = True
    y_l, p_l = llama_torch(case, d)
    assert max_err(y_l, y_t) <= 1e-12 * np.abs(y_t).max() and max_err(p_l, p_t) <= 1e-12, case.name


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--out", default=OUT_DIR, help="output folder (default tests/data/golden)")
    ap.add_argument("--check", action="store_true", help="compare with the files instead of writing")
    args = ap.parse_args()
    torch.manual_seed(0)
    self_check()
    os.makedirs(args.out, exist_ok=True)
    total, mismatches = 0, 0
    all_cases = cases()
    assert len({c.name for c in all_cases}) == len(all_cases)
    for idx, case in enumerate(all_cases):
        d = draw(case, seed=1000 + idx)
        y, p, src, cond = expected(case, d)
        blob = encode(case, d, y, p)
        path = os.path.join(args.out, f"{case.name}.bin")
        total += len(blob)
        if args.check:
            # Header and inputs must be bit-identical; expected values may differ in the
            # last bits with another BLAS.
            n_exp = 8 * (y.size + p.size) + len(END_MAGIC)
            with open(path, "rb") as f:
                old = f.read()
            same = len(old) == len(blob) and old[:-n_exp] == blob[:-n_exp] and old[-4:] == END_MAGIC
            if same:
                old_exp = np.frombuffer(old[-n_exp:-4], dtype="<f8")
                new_exp = np.concatenate([y.ravel(), p.ravel()])
                same = max_err(old_exp, new_exp) <= 1e-12 * max(1.0, float(np.abs(new_exp).max()))
            if not same:
                mismatches += 1
                print(f"MISMATCH {case.name}")
        else:
            with open(path, "wb") as f:
                f.write(blob)
        peak = float(p.max(axis=2).mean())
        qnote = ""
        if quant_applicable(case):
            calib = draw_calib(case, seed=5000 + idx)
            s8, s16 = ideal_sqnr(case, d, y, calib, 8), ideal_sqnr(case, d, y, calib, 16)
            qblob = encode_quant(case, calib, s8, s16)
            qpath = os.path.join(args.out, "quant", f"{case.name}.bin")
            total += len(qblob)
            qnote = f"  ideal SQNR s8 {s8:5.1f} s16 {s16:5.1f} dB"
            if args.check:
                try:
                    with open(qpath, "rb") as f:
                        old = f.read()
                except OSError:
                    old = b""
                n_hdr = QUANT_HEADER.size
                same = len(old) == len(qblob) and old[:n_hdr - 16] == qblob[:n_hdr - 16] and old[n_hdr:] == qblob[n_hdr:]
                if same:
                    o8, o16 = struct.unpack("<dd", old[n_hdr - 16:n_hdr])
                    same = abs(o8 - s8) <= 1e-6 and abs(o16 - s16) <= 1e-6
                if not same:
                    mismatches += 1
                    print(f"MISMATCH quant/{case.name}")
            else:
                os.makedirs(os.path.dirname(qpath), exist_ok=True)
                with open(qpath, "wb") as f:
                    f.write(qblob)
        print(f"{case.name:40s} {src:9s} {len(blob):7d} B  mean max p {peak:.2f}  f32 err/bound {cond:.3f}{qnote}")
    print(f"{len(all_cases)} cases, {total} bytes")
    return 1 if mismatches else 0


if __name__ == "__main__":
    sys.exit(main())
