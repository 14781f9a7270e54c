#!/usr/bin/python3
"""Tests of tools/attn_export.py's whole-model export (format v3).

numpy only for the Hugging Face layouts; the nn.TransformerEncoder tests need
torch and are skipped without it. Run: /usr/bin/python3 tests/attn_export_test.py
(ctest runs it as attn_export_py).
"""

import json
import os
import struct
import sys
import tempfile
import unittest
import zlib

import numpy as np

ROOT = os.path.join(os.path.dirname(os.path.abspath(__file__)), "..")
sys.path.insert(0, os.path.join(ROOT, "tools"))
import attn_export  # noqa: E402
import gen_model_fixtures  # noqa: E402

try:
    import torch
    HAVE_TORCH = True
except ImportError:
    HAVE_TORCH = False

MODEL_DIR = os.path.join(ROOT, "tests", "data", "model")


def parse(blob):
    """A .attn file as (header dict, record dict or None, blocks, {name: (role, block, array)}),
    read independently of the writer (include/attn/FORMAT.md)."""
    magic, version, hsize, crc, flags, size, align, nb, nt, _, bo, to, do = struct.unpack_from(
        "<IHHIIQIIIIQQQ", blob, 0)
    assert magic == 0x4E545441 and hsize == 64 and size == len(blob)
    assert crc == zlib.crc32(blob[12:]) & 0xFFFFFFFF
    rec = None
    if flags & 1:
        v, p, t, f, dt, norm, act, eps, mflags, *res = struct.unpack_from("<IIIIHBBfI9I", blob, 64)
        rec = dict(vocab=v, positions=p, types=t, ffn=f, dtype=dt, norm=norm, act=act, eps=eps, flags=mflags,
                   reserved=res)
    blocks = [struct.unpack_from("<IIIIIHHIf", blob, bo + 64 * i) for i in range(nb)]
    tensors = {}
    for i in range(nt):
        name, role, dtype, layout, rank, blk, _, d0, d1, d2, d3, off, nbytes, _, _ = struct.unpack_from(
            "<64sHHHHII4IQQ2Q", blob, to + 128 * i)
        dims = [d0, d1, d2, d3][:rank]
        arr = np.frombuffer(blob, dtype="<f4", count=nbytes // 4, offset=do + off).reshape(dims)
        tensors[name.rstrip(b"\0").decode()] = (role, blk, arr)
    return dict(version=version, flags=flags, blocks_offset=bo), rec, blocks, tensors


class HuggingFaceLayouts(unittest.TestCase):
    def test_fixtures_are_what_the_exporter_writes(self):
        # tests/data/model holds the exporter's bytes; `attn import` must write them too (cli_model_test.cpp).
        with open(os.path.join(MODEL_DIR, "cases.txt")) as fh:
            cases = [line.split() for line in fh if line.strip()]
        self.assertEqual(len(cases), 8)
        for out, st, cfg, *flags in cases:
            got = attn_export.export_model(os.path.join(MODEL_DIR, st), config=os.path.join(MODEL_DIR, cfg),
                                           byte_vocab="--byte-vocab" in flags)
            with open(os.path.join(MODEL_DIR, out), "rb") as fh:
                self.assertEqual(got, fh.read(), out)

    def test_bert_lands_in_place(self):
        rng = np.random.default_rng(1)
        state, cfg = gen_model_fixtures.bert(rng, "bert.")
        state["classifier.weight"] = rng.standard_normal((3, 8)).astype(np.float32)
        hdr, rec, blocks, t = parse(attn_export.export_model(state, config=cfg))
        self.assertEqual((hdr["version"], hdr["flags"], hdr["blocks_offset"]), (3, 1, 128))
        self.assertEqual((rec["vocab"], rec["positions"], rec["types"], rec["ffn"]), (20, 8, 2, 12))
        self.assertEqual((rec["norm"], rec["act"], rec["flags"]), (1, 1, (1 << 2) | (1 << 3) | (1 << 4) | (1 << 5)))
        self.assertEqual(rec["eps"], np.float32(1e-12))
        self.assertEqual(len(blocks), 2)
        self.assertEqual(blocks[0][:6], (8, 2, 4, 8, 8, 1))
        for name, key, role in (("model.token_embedding", "bert.embeddings.word_embeddings.weight", 64),
                                ("model.position_embedding", "bert.embeddings.position_embeddings.weight", 65),
                                ("model.type_embedding", "bert.embeddings.token_type_embeddings.weight", 66),
                                ("model.embedding_norm_bias", "bert.embeddings.LayerNorm.bias", 68),
                                ("block.1.wk", "bert.encoder.layer.1.attention.self.key.weight", 2),
                                ("block.1.norm1_weight", "bert.encoder.layer.1.attention.output.LayerNorm.weight", 28),
                                ("block.0.norm2_bias", "bert.encoder.layer.0.output.LayerNorm.bias", 31),
                                ("block.0.ffn_w1", "bert.encoder.layer.0.intermediate.dense.weight", 32),
                                ("block.1.ffn_b2", "bert.encoder.layer.1.output.dense.bias", 35),
                                ("classifier.weight", "classifier.weight", 15)):
            self.assertEqual(t[name][0], role, name)
            np.testing.assert_array_equal(t[name][2], state[key], name)
        self.assertNotIn("bert.embeddings.position_ids", t)  # an integer buffer

    def test_llama_lands_in_place(self):
        rng = np.random.default_rng(2)
        state, cfg = gen_model_fixtures.llama(rng, tied=False)
        hdr, rec, blocks, t = parse(attn_export.export_model(state, config=cfg))
        self.assertEqual(rec["norm"], 2)
        self.assertEqual(rec["act"], 4)
        self.assertEqual(rec["flags"], 1 | 2 | (1 << 6) | (1 << 7) | (1 << 9))
        self.assertEqual(blocks[1][:8], (8, 2, 4, 8, 8, 1, 0, 1))  # no bias, K/V heads 1
        self.assertEqual(blocks[1][8], 10000.0)
        for name, key in (("block.1.ffn_w1", "model.layers.1.mlp.gate_proj.weight"),
                          ("block.1.ffn_w3", "model.layers.1.mlp.up_proj.weight"),
                          ("block.0.ffn_w2", "model.layers.0.mlp.down_proj.weight"),
                          ("block.0.norm1_weight", "model.layers.0.input_layernorm.weight"),
                          ("block.0.norm2_weight", "model.layers.0.post_attention_layernorm.weight"),
                          ("model.final_norm_weight", "model.norm.weight"), ("model.lm_head", "lm_head.weight")):
            np.testing.assert_array_equal(t[name][2], state[key], name)

    def test_bad_inputs_are_named(self):
        rng = np.random.default_rng(3)
        state, cfg = gen_model_fixtures.bert(rng, "")
        for change, words in (({"hidden_act": "swish"}, ["hidden_act", "swish"]),
                              ({"intermediate_size": 13}, ["encoder.layer.0.intermediate.dense.weight"]),
                              ({"num_hidden_layers": 1}, ["encoder.layer.1."]),
                              ({"num_hidden_layers": 3}, ["missing tensor 'encoder.layer.2."]),
                              ({"model_type": "t5"}, ["t5", "not supported"]),
                              ({"model_type": "gpt2"}, ["wte.weight"]),
                              ({"vocab_size": None}, ["vocab_size", "missing"])):
            bad = dict(cfg, **change)
            with self.assertRaises(attn_export.ExportError) as ctx:
                attn_export.export_model(state, config=bad)
            for w in words:
                self.assertIn(w, str(ctx.exception))
        lstate, lcfg = gen_model_fixtures.llama(rng, tied=False)
        with self.assertRaises(attn_export.ExportError) as ctx:
            attn_export.export_model(lstate, config=dict(lcfg, rope_scaling={"type": "linear", "factor": 2.0}))
        self.assertIn("rope_scaling", str(ctx.exception))
        with self.assertRaises(attn_export.ExportError):
            attn_export.export_model(lstate, config=lcfg, byte_vocab=True)  # 40 tokens < 256
        with tempfile.TemporaryDirectory() as d:  # no output file on error
            out = os.path.join(d, "m.attn")
            with self.assertRaises(attn_export.ExportError):
                attn_export.export_model(state, out, config=dict(cfg, hidden_act="swish"))
            self.assertEqual(os.listdir(d), [])


@unittest.skipUnless(HAVE_TORCH, "torch is not installed")
class TransformerEncoderExport(unittest.TestCase):
    def check(self, norm_first, activation, final_norm):
        torch.manual_seed(0)
        e, h, f, n, v, p = 8, 2, 12, 2, 20, 10
        layer = torch.nn.TransformerEncoderLayer(e, h, f, dropout=0.0, activation=activation,
                                                 norm_first=norm_first, layer_norm_eps=1e-6)
        enc = torch.nn.TransformerEncoder(layer, n, norm=torch.nn.LayerNorm(e, eps=1e-6) if final_norm else None)
        emb = torch.nn.Embedding(v, e)
        pos = torch.randn(p, e)
        data = attn_export.export_encoder(enc, emb, positions=pos, causal=True, extras={"cls": torch.ones(2, e)})
        hdr, rec, blocks, t = parse(data)
        want_flags = (1 << 2) | (1 << 3) | (1 << 4) | (1 << 7) | (norm_first and 1) | ((1 << 6) if final_norm else 0)
        self.assertEqual(rec["flags"], want_flags)
        self.assertEqual(rec["act"], {"relu": 3, "gelu": 1}[activation])
        self.assertEqual((rec["vocab"], rec["positions"], rec["ffn"], rec["norm"]), (v, p, f, 1))
        self.assertEqual(rec["eps"], np.float32(1e-6))
        self.assertEqual(len(blocks), n)
        for i, L in enumerate(enc.layers):
            w = L.self_attn.in_proj_weight.detach().numpy()
            np.testing.assert_array_equal(t[f"block.{i}.wq"][2], w[:e])
            np.testing.assert_array_equal(t[f"block.{i}.wv"][2], w[2 * e:])
            np.testing.assert_array_equal(t[f"block.{i}.bo"][2], L.self_attn.out_proj.bias.detach().numpy())
            np.testing.assert_array_equal(t[f"block.{i}.ffn_w1"][2], L.linear1.weight.detach().numpy())
            np.testing.assert_array_equal(t[f"block.{i}.ffn_b2"][2], L.linear2.bias.detach().numpy())
            np.testing.assert_array_equal(t[f"block.{i}.norm2_bias"][2], L.norm2.bias.detach().numpy())
        np.testing.assert_array_equal(t["model.token_embedding"][2], emb.weight.detach().numpy())
        np.testing.assert_array_equal(t["model.position_embedding"][2], pos.numpy())
        self.assertEqual("model.final_norm_weight" in t, final_norm)
        self.assertEqual(t["cls"][0], 15)

    def test_post_norm_relu(self):
        self.check(False, "relu", False)

    def test_pre_norm_gelu_final_norm(self):
        self.check(True, "gelu", True)

    def test_torch_state_dict_gives_the_numpy_bytes(self):
        rng = np.random.default_rng(4)
        state, cfg = gen_model_fixtures.llama(rng, tied=True)
        as_torch = {k: torch.from_numpy(np.array(a)) for k, a in state.items()}
        self.assertEqual(attn_export.export_model(as_torch, config=cfg), attn_export.export_model(state, config=cfg))


if __name__ == "__main__":
    unittest.main()
