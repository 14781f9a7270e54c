#!/usr/bin/python3
"""Regenerate the integer model files of tests/data/model: llama1.s8.attn (a
one-layer Llama-like decoder: RMSNorm, gated SiLU, GQA, RoPE, final norm,
untied head) and bert1.s16.attn (a one-layer BERT-like encoder: post-norm
LayerNorm, GELU, learned positions, token types, embedding norm, a user
tensor). Random float weights (numpy) are written in the attn layout by
tools/attn_export.write_model (`attn import`), then `attn quantize --calib-tokens` converts
them. They seed the loader fuzzer (tests/fuzz/run_fuzz.sh; each below its
16 KiB input limit) and tests/model_fixed_format_test.cpp loads and runs them.

Run:  /usr/bin/python3 tools/gen_int_model_seeds.py build/host-release/tools/attn
"""

import os
import subprocess
import sys
import tempfile

import numpy as np

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import attn_export  # noqa: E402

OUT = os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "tests", "data", "model")


def config(**kw):
    c = dict(num_layers=1, embed_dim=8, num_heads=2, num_kv_heads=0, head_dim=0, ffn_dim=12, vocab_size=16,
             max_positions=8, type_vocab_size=0, norm="layer_norm", norm_eps=1e-5, activation="gelu", head="none",
             rope_base=0.0, pre_norm=False, gated_ffn=False, attention_bias=True, ffn_bias=True, norm_bias=True,
             learned_positions=False, embedding_norm=False, final_norm=False, causal=False)
    c.update(kw)
    return c


def weights(rng, c):
    e, f, v, h = c["embed_dim"], c["ffn_dim"], c["vocab_size"], c["num_heads"]
    hd = e // h
    kv = c["num_kv_heads"] or h
    r = lambda *shape, s=0.3: (rng.standard_normal(shape) * s).astype(np.float32)  # noqa: E731
    nb = c["norm"] == "layer_norm" and c["norm_bias"]
    layers = []
    for _ in range(c["num_layers"]):
        L = {"wq": r(h * hd, e), "wk": r(kv * hd, e), "wv": r(kv * hd, e), "wo": r(e, h * hd),
             "norm1_weight": 1 + r(e, s=0.1), "norm2_weight": 1 + r(e, s=0.1), "ffn_w1": r(f, e), "ffn_w2": r(e, f)}
        if c["attention_bias"]:
            L.update(bq=r(h * hd), bk=r(kv * hd), bv=r(kv * hd), bo=r(e))
        if nb:
            L.update(norm1_bias=r(e, s=0.1), norm2_bias=r(e, s=0.1))
        if c["ffn_bias"]:
            L.update(ffn_b1=r(f), ffn_b2=r(e))
        if c["gated_ffn"]:
            L["ffn_w3"] = r(f, e)
            if c["ffn_bias"]:
                L["ffn_b3"] = r(f)
        layers.append(L)
    model = {"token_embedding": r(v, e, s=1.0)}
    if c["learned_positions"]:
        model["position_embedding"] = r(c["max_positions"], e)
    if c["type_vocab_size"]:
        model["type_embedding"] = r(c["type_vocab_size"], e)
    for n in ("embedding_norm", "final_norm"):
        if c[n]:
            model[n + "_weight"] = 1 + r(e, s=0.1)
            if nb:
                model[n + "_bias"] = r(e, s=0.1)
    if c["head"] == "untied":
        model["lm_head"] = r(v, e)
    return layers, model


def main():
    if len(sys.argv) != 2:
        sys.exit(__doc__)
    attn = sys.argv[1]
    rng = np.random.default_rng(20240611)
    cases = [
        ("llama1.s8.attn", "s8",
         config(norm="rms_norm", activation="silu", num_kv_heads=1, rope_base=10000.0, pre_norm=True, gated_ffn=True,
                attention_bias=False, ffn_bias=False, norm_bias=False, final_norm=True, causal=True, head="untied"),
         ()),
        ("bert1.s16.attn", "s16",
         config(type_vocab_size=2, learned_positions=True, embedding_norm=True, norm_eps=1e-12),
         (("classifier.weight", None),)),
    ]
    with tempfile.TemporaryDirectory() as tmp:
        for out, dtype, c, user in cases:
            layers, model = weights(rng, c)
            user = [(n, (rng.standard_normal((2, c["embed_dim"])) * 0.3).astype(np.float32)) for n, _ in user]
            f32 = os.path.join(tmp, "f32.attn")
            with open(f32, "wb") as fh:
                fh.write(attn_export.write_model(c, layers, model, user, attn=attn))
            ids = os.path.join(tmp, "ids.npy")
            np.save(ids, rng.integers(0, c["vocab_size"], size=(4, c["max_positions"]), dtype=np.int64))
            subprocess.run([attn, "quantize", f32, "--calib-tokens", ids, "--dtype", dtype, "-o",
                            os.path.join(OUT, out)], check=True)
            size = os.path.getsize(os.path.join(OUT, out))
            if size > 16384:
                sys.exit(f"{out}: {size} bytes, above the fuzzer's 16 KiB input limit")


if __name__ == "__main__":
    main()
