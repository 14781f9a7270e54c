#!/usr/bin/python3
"""Regenerate tests/data/model: small Hugging Face BERT and Llama checkpoints
(random weights, numpy only) as .safetensors with their config.json, and the
.attn files tools/attn_export.py's export_model() writes for them.
tests/cli_model_test.cpp checks that `attn import` writes the same bytes, and
the loader fuzzer (tests/fuzz/run_fuzz.sh) starts from these model files
(each below its 16 KiB input limit).

  cases.txt: one line per case, `OUT.attn MODEL.safetensors CONFIG.json [--byte-vocab]`

Run:  /usr/bin/python3 tools/gen_model_fixtures.py
"""

import json
import os
import sys

import numpy as np

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import attn_export  # noqa: E402
import hf_checkpoint  # noqa: E402

OUT = os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "tests", "data", "model")


def bert(rng, prefix, layers=2, e=8, h=2, f=12, v=20, p=8, t=2):
    s = {}
    r = lambda *shape: (rng.standard_normal(shape) * 0.2).astype(np.float32)  # noqa: E731
    pe = prefix + "embeddings."
    s[pe + "word_embeddings.weight"] = r(v, e)
    s[pe + "position_embeddings.weight"] = r(p, e)
    s[pe + "token_type_embeddings.weight"] = r(t, e)
    s[pe + "LayerNorm.weight"] = 1 + r(e)
    s[pe + "LayerNorm.bias"] = r(e)
    s[pe + "position_ids"] = np.arange(p, dtype=np.int64)[None, :]
    for i in range(layers):
        q = f"{prefix}encoder.layer.{i}."
        for n in ("query", "key", "value"):
            s[q + f"attention.self.{n}.weight"] = r(e, e)
            s[q + f"attention.self.{n}.bias"] = r(e)
        s[q + "attention.output.dense.weight"] = r(e, e)
        s[q + "attention.output.dense.bias"] = r(e)
        s[q + "attention.output.LayerNorm.weight"] = 1 + r(e)
        s[q + "attention.output.LayerNorm.bias"] = r(e)
        s[q + "intermediate.dense.weight"] = r(f, e)
        s[q + "intermediate.dense.bias"] = r(f)
        s[q + "output.dense.weight"] = r(e, f)
        s[q + "output.dense.bias"] = r(e)
        s[q + "output.LayerNorm.weight"] = 1 + r(e)
        s[q + "output.LayerNorm.bias"] = r(e)
    cfg = {"architectures": ["BertModel"], "model_type": "bert", "hidden_size": e, "num_hidden_layers": layers,
           "num_attention_heads": h, "intermediate_size": f, "hidden_act": "gelu", "layer_norm_eps": 1e-12,
           "max_position_embeddings": p, "type_vocab_size": t, "vocab_size": v,
           "position_embedding_type": "absolute"}
    return s, cfg


def llama(rng, tied, layers=2, e=8, h=2, kv=1, f=12, v=40, p=64):
    s = {}
    r = lambda *shape: (rng.standard_normal(shape) * 0.2).astype(np.float32)  # noqa: E731
    hd = e // h
    s["model.embed_tokens.weight"] = r(v, e)
    for i in range(layers):
        q = f"model.layers.{i}."
        s[q + "self_attn.q_proj.weight"] = r(h * hd, e)
        s[q + "self_attn.k_proj.weight"] = r(kv * hd, e)
        s[q + "self_attn.v_proj.weight"] = r(kv * hd, e)
        s[q + "self_attn.o_proj.weight"] = r(e, h * hd)
        s[q + "mlp.gate_proj.weight"] = r(f, e)
        s[q + "mlp.up_proj.weight"] = r(f, e)
        s[q + "mlp.down_proj.weight"] = r(e, f)
        s[q + "input_layernorm.weight"] = 1 + r(e)
        s[q + "post_attention_layernorm.weight"] = 1 + r(e)
    s["model.norm.weight"] = 1 + r(e)
    if not tied:
        s["lm_head.weight"] = r(v, e)
    cfg = {"architectures": ["LlamaForCausalLM"], "model_type": "llama", "hidden_size": e,
           "num_hidden_layers": layers, "num_attention_heads": h, "num_key_value_heads": kv,
           "intermediate_size": f, "hidden_act": "silu", "rms_norm_eps": 1e-5, "rope_theta": 10000.0,
           "max_position_embeddings": p, "vocab_size": v, "tie_word_embeddings": tied, "rope_scaling": None}
    return s, cfg


def main():
    os.makedirs(OUT, exist_ok=True)
    rng = np.random.default_rng(20261202)
    cases = []
    for name, (state, cfg), flags in (
            ("bert_cls", bert(rng, "bert."), []),
            ("llama", llama(rng, tied=False), []),
            ("llama_tied", llama(rng, tied=True, layers=1, v=256), ["--byte-vocab"])):
        if name == "bert_cls":
            state["classifier.weight"] = (rng.standard_normal((3, 8)) * 0.2).astype(np.float32)
            state["classifier.bias"] = np.zeros(3, np.float32)
        st, cj, at = name + ".safetensors", name + ".config.json", name + ".attn"
        hf_checkpoint.write_safetensors(os.path.join(OUT, st), state, metadata={"format": "pt"},
                                        canonical=False)
        with open(os.path.join(OUT, cj), "w") as fh:
            json.dump(cfg, fh, indent=2)
            fh.write("\n")
        attn_export.export_model(os.path.join(OUT, st), os.path.join(OUT, at), config=os.path.join(OUT, cj),
                                 byte_vocab="--byte-vocab" in flags)
        cases.append(" ".join([at, st, cj] + flags))
    with open(os.path.join(OUT, "cases.txt"), "w") as fh:
        fh.write("\n".join(cases) + "\n")
    print(f"wrote {len(cases)} cases to {os.path.normpath(OUT)}")


if __name__ == "__main__":
    main()
