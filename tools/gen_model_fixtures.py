#!/usr/bin/python3
"""Regenerate tests/data/model: small Hugging Face BERT, Llama, GPT-2, Qwen2, Mistral, RoBERTa and
DistilBERT checkpoints (random weights, numpy only) as .safetensors with their config.json, and the
.attn files tools/attn_export.py's export_model() writes for them (through `attn import`:
build attn_cli first, or set ATTN_BIN).
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


def gpt2(rng, layers=2, e=8, h=2, f=16, v=30, p=12):
    """GPT2LMHeadModel's keys (Conv1D weights [in, out]), with the causal-mask buffers old checkpoints store."""
    s = {}
    r = lambda *shape: (rng.standard_normal(shape) * 0.2).astype(np.float32)  # noqa: E731
    s["transformer.wte.weight"] = r(v, e)
    s["transformer.wpe.weight"] = r(p, e)
    for i in range(layers):
        q = f"transformer.h.{i}."
        s[q + "ln_1.weight"], s[q + "ln_1.bias"] = 1 + r(e), r(e)
        s[q + "attn.c_attn.weight"], s[q + "attn.c_attn.bias"] = r(e, 3 * e), r(3 * e)
        s[q + "attn.c_proj.weight"], s[q + "attn.c_proj.bias"] = r(e, e), r(e)
        s[q + "attn.bias"] = np.tril(np.ones((p, p), np.float32))[None, None]
        s[q + "ln_2.weight"], s[q + "ln_2.bias"] = 1 + r(e), r(e)
        s[q + "mlp.c_fc.weight"], s[q + "mlp.c_fc.bias"] = r(e, f), r(f)
        s[q + "mlp.c_proj.weight"], s[q + "mlp.c_proj.bias"] = r(f, e), r(e)
    s["transformer.ln_f.weight"], s["transformer.ln_f.bias"] = 1 + r(e), r(e)
    cfg = {"architectures": ["GPT2LMHeadModel"], "model_type": "gpt2", "n_embd": e, "n_layer": layers,
           "n_head": h, "n_inner": f, "activation_function": "gelu_new", "layer_norm_epsilon": 1e-5,
           "n_positions": p, "n_ctx": p, "vocab_size": v, "scale_attn_weights": True, "tie_word_embeddings": True}
    return s, cfg


def qwen2(rng):
    """Qwen2ForCausalLM: Llama's keys plus q/k/v biases, a sliding window of 16 (max_positions 64 -> 16)."""
    s, cfg = llama(rng, tied=True, layers=1)
    for n, rows in (("q", 8), ("k", 4), ("v", 4)):
        s[f"model.layers.0.self_attn.{n}_proj.bias"] = (rng.standard_normal(rows) * 0.2).astype(np.float32)
    cfg.update({"architectures": ["Qwen2ForCausalLM"], "model_type": "qwen2", "rope_theta": 1000000.0,
                "use_sliding_window": True, "sliding_window": 16, "max_window_layers": 1})
    return s, cfg


def mistral(rng):
    """MistralForCausalLM: Llama's keys, a sliding window beyond max_position_embeddings (no effect)."""
    s, cfg = llama(rng, tied=False, layers=1)
    cfg.update({"architectures": ["MistralForCausalLM"], "model_type": "mistral", "sliding_window": 4096,
                "head_dim": None})
    return s, cfg


def roberta(rng):
    """RobertaModel: BERT's keys, positions numbered from pad_token_id + 1 = 2 (max_positions 10 -> 8)."""
    s, cfg = bert(rng, "roberta.", layers=1, p=10, t=1)
    cfg.update({"architectures": ["RobertaModel"], "model_type": "roberta", "pad_token_id": 1,
                "layer_norm_eps": 1e-5})
    return s, cfg


def distilbert(rng, layers=2, e=8, h=2, f=12, v=20, p=8):
    """DistilBertForSequenceClassification's keys (under "distilbert.", a classifier beside)."""
    s = {}
    r = lambda *shape: (rng.standard_normal(shape) * 0.2).astype(np.float32)  # noqa: E731
    s["distilbert.embeddings.word_embeddings.weight"] = r(v, e)
    s["distilbert.embeddings.position_embeddings.weight"] = r(p, e)
    s["distilbert.embeddings.LayerNorm.weight"], s["distilbert.embeddings.LayerNorm.bias"] = 1 + r(e), r(e)
    for i in range(layers):
        q = f"distilbert.transformer.layer.{i}."
        for n in ("q_lin", "k_lin", "v_lin", "out_lin"):
            s[q + f"attention.{n}.weight"], s[q + f"attention.{n}.bias"] = r(e, e), r(e)
        s[q + "sa_layer_norm.weight"], s[q + "sa_layer_norm.bias"] = 1 + r(e), r(e)
        s[q + "ffn.lin1.weight"], s[q + "ffn.lin1.bias"] = r(f, e), r(f)
        s[q + "ffn.lin2.weight"], s[q + "ffn.lin2.bias"] = r(e, f), r(e)
        s[q + "output_layer_norm.weight"], s[q + "output_layer_norm.bias"] = 1 + r(e), r(e)
    s["pre_classifier.weight"], s["pre_classifier.bias"] = r(e, e), r(e)
    s["classifier.weight"], s["classifier.bias"] = r(2, e), r(2)
    cfg = {"architectures": ["DistilBertForSequenceClassification"], "model_type": "distilbert", "dim": e,
           "n_layers": layers, "n_heads": h, "hidden_dim": f, "activation": "gelu", "max_position_embeddings": p,
           "vocab_size": v, "sinusoidal_pos_embds": False}
    return s, cfg


def main():
    os.makedirs(OUT, exist_ok=True)
    rng = np.random.default_rng(20261202)
    rng2 = np.random.default_rng(20261203)  # the later families: the first three cases keep their bytes
    cases = []
    for name, (state, cfg), flags in (
            ("bert_cls", bert(rng, "bert."), []),
            ("llama", llama(rng, tied=False), []),
            ("llama_tied", llama(rng, tied=True, layers=1, v=256), ["--byte-vocab"]),
            ("gpt2", gpt2(rng2), []),
            ("qwen2", qwen2(rng2), []),
            ("mistral", mistral(rng2), []),
            ("roberta", roberta(rng2), []),
            ("distilbert", distilbert(rng2), [])):
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
