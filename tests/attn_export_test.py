#!/usr/bin/python3
"""Tests of tools/export/attn_export.py, which hands every layout to `attn import`.

numpy only for the Hugging Face layouts, the attention blocks of a state dict
and the attn layout (write_model); the nn.Module and nn.TransformerEncoder
tests need torch and are skipped without it. The attn binary: $ATTN_BIN
(ctest sets it), else build/host-release/tools/attn; without one the tests
are skipped. Run: /usr/bin/python3 tests/attn_export_test.py (ctest runs it
as attn_export_py).
"""

import json
import os
import struct
import subprocess
import sys
import tempfile
import unittest
import zlib

import numpy as np

ROOT = os.path.join(os.path.dirname(os.path.abspath(__file__)), "..")
sys.path.insert(0, os.path.join(ROOT, "tools", "export"))
import attn_export  # noqa: E402
import gen_model_fixtures  # noqa: E402

try:
    import torch
    HAVE_TORCH = True
except ImportError:
    HAVE_TORCH = False

try:
    ATTN, NO_ATTN = attn_export.find_attn(), ""
except attn_export.ExportError as e:
    if os.environ.get("ATTN_BIN"):
        raise  # ctest named a binary: it must be there
    ATTN, NO_ATTN = None, str(e)
needs_attn = unittest.skipUnless(ATTN, NO_ATTN)

DATA = os.path.join(ROOT, "tests", "data")
MODEL_DIR = os.path.join(DATA, "model")
FORMAT_DIR = os.path.join(DATA, "format")


def parse(blob):
    """A .attn file as (header dict, record dict or None, blocks, {name: (role, block, array)}),
    read independently of the writer (include/attn/FORMAT.md); the tensors in file order."""
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


def read_safetensors(path):
    """name -> numpy array (F32, F16, I64), in the file's order: a state dict as numpy holds it."""
    with open(path, "rb") as f:
        raw = f.read()
    (n,) = struct.unpack_from("<Q", raw)
    kinds = {"F32": "<f4", "F16": "<f2", "I64": "<i8"}
    return {k: np.frombuffer(raw[8 + n + d["data_offsets"][0]:8 + n + d["data_offsets"][1]],
                             dtype=kinds[d["dtype"]]).reshape(d["shape"])
            for k, d in json.loads(raw[8:8 + n]).items() if k != "__metadata__"}


def attn_import(*args):
    """A direct `attn import ARGS -o OUT`: OUT's bytes."""
    with tempfile.TemporaryDirectory() as d:
        subprocess.run([ATTN, "import", *args, "-o", os.path.join(d, "o.attn")], check=True, capture_output=True)
        with open(os.path.join(d, "o.attn"), "rb") as f:
            return f.read()


def fixture_cases(directory, cases):
    with open(os.path.join(directory, cases)) as fh:
        return [line.split() for line in fh if line.strip() and not line.startswith("#")]


@needs_attn
class HuggingFaceLayouts(unittest.TestCase):
    def test_fixtures_are_what_attn_import_writes(self):
        # tests/data/model: from the files, and from a numpy state dict with a config dict (what Python
        # writes for `attn import`), the bytes of a direct `attn import` (cli_model_test.cpp: the fixtures').
        cases = fixture_cases(MODEL_DIR, "cases.txt")
        self.assertEqual(len(cases), 8)
        for out, st, cfg, *flags in cases:
            st, cfg, bv = os.path.join(MODEL_DIR, st), os.path.join(MODEL_DIR, cfg), "--byte-vocab" in flags
            with open(os.path.join(MODEL_DIR, out), "rb") as fh:
                want = fh.read()
            self.assertEqual(attn_import(st, "--config", cfg, *flags), want, out)
            self.assertEqual(attn_export.export_model(st, config=cfg, byte_vocab=bv), want, out)
            with open(cfg) as fh:
                config = json.load(fh)
            self.assertEqual(attn_export.export_model(read_safetensors(st), config=config, byte_vocab=bv), want, out)

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


@needs_attn
class AttentionBlocks(unittest.TestCase):
    def test_fixtures_from_a_state_dict(self):
        # tests/data/format's import lines: the numpy state dict of each float32 .safetensors, exported
        # with the line's options, gives the fixture (the bytes of a direct `attn import`, cli_test.cpp).
        n = 0
        for _, out, st, *args in (c for c in fixture_cases(FORMAT_DIR, "cases.txt") if c[0] == "import"):
            state = read_safetensors(os.path.join(FORMAT_DIR, st))
            if any(a.dtype != np.float32 for a in state.values()):
                continue
            opts = dict(zip(args[0::2], args[1::2]))
            got = attn_export.export(state, heads=int(opts["--heads"]), prefix=opts.get("--prefix"),
                                     extras=[v for k, v in zip(args[0::2], args[1::2]) if k == "--extra"],
                                     kv_heads=opts.get("--kv-heads"), rope_base=opts.get("--rope-base"))
            with open(os.path.join(FORMAT_DIR, out), "rb") as fh:
                self.assertEqual(got, fh.read(), out)
            n += 1
        self.assertGreaterEqual(n, 6)

    def test_heads_per_block(self):
        state = read_safetensors(os.path.join(FORMAT_DIR, "bert_all.safetensors"))
        one = attn_export.export(state, heads={"encoder.layer.0.attention.": 4, "encoder.layer.1.attention.": 2})
        _, _, blocks, _ = parse(one)
        self.assertEqual([b[1:3] for b in blocks], [(4, 4), (2, 8)])  # (heads, head_dim)
        with open(os.path.join(FORMAT_DIR, "bert_all.attn"), "rb") as fh:
            self.assertEqual(attn_export.export(state, heads=["4", "encoder.layer.1.attention.=4"]), fh.read())
        for heads, words in (({"encoder.layer.0.attention.": 4}, ["no --heads", "encoder.layer.1.attention."]),
                             ({"encoder.layer.0.attention.": 4, "encoder.layer.1.attention.": 4, "encoder.layer.9.": 4},
                              ["encoder.layer.9.", "no attention block"]), (None, ["--heads"])):
            with self.assertRaises(attn_export.ExportError) as ctx:
                attn_export.export(state, heads=heads)
            for w in words:
                self.assertIn(w, str(ctx.exception))

    def test_a_missing_binary_is_named(self):
        with self.assertRaises(attn_export.ExportError) as ctx:
            attn_export.export({}, heads=1, attn=os.path.join(ROOT, "no", "attn"))
        self.assertIn(os.path.join(ROOT, "no", "attn"), str(ctx.exception))


def attn_layout(state, cfg, n, prefix=""):
    """A Hugging Face BERT / Llama state dict (gen_model_fixtures') as write_model's arguments."""
    if "hidden_act" in cfg and cfg.get("model_type") == "bert":
        b = prefix + "embeddings."
        config = dict(vocab_size=cfg["vocab_size"], embed_dim=cfg["hidden_size"], num_layers=n,
                      num_heads=cfg["num_attention_heads"], ffn_dim=cfg["intermediate_size"],
                      max_positions=cfg["max_position_embeddings"], type_vocab_size=cfg["type_vocab_size"],
                      norm_eps=cfg["layer_norm_eps"], learned_positions=True, embedding_norm=True)
        model = {"token_embedding": state[b + "word_embeddings.weight"],
                 "position_embedding": state[b + "position_embeddings.weight"],
                 "type_embedding": state[b + "token_type_embeddings.weight"],
                 "embedding_norm_weight": state[b + "LayerNorm.weight"], "embedding_norm_bias": state[b + "LayerNorm.bias"]}
        names = {"wq": "attention.self.query.weight", "wk": "attention.self.key.weight",
                 "wv": "attention.self.value.weight", "wo": "attention.output.dense.weight",
                 "bq": "attention.self.query.bias", "bk": "attention.self.key.bias", "bv": "attention.self.value.bias",
                 "bo": "attention.output.dense.bias", "norm1_weight": "attention.output.LayerNorm.weight",
                 "norm1_bias": "attention.output.LayerNorm.bias", "ffn_w1": "intermediate.dense.weight",
                 "ffn_b1": "intermediate.dense.bias", "ffn_w2": "output.dense.weight", "ffn_b2": "output.dense.bias",
                 "norm2_weight": "output.LayerNorm.weight", "norm2_bias": "output.LayerNorm.bias"}
        layer = prefix + "encoder.layer.{}."
    else:
        config = dict(vocab_size=cfg["vocab_size"], embed_dim=cfg["hidden_size"], num_layers=n,
                      num_heads=cfg["num_attention_heads"], num_kv_heads=cfg["num_key_value_heads"],
                      ffn_dim=cfg["intermediate_size"], max_positions=cfg["max_position_embeddings"], norm="rms_norm",
                      norm_eps=cfg["rms_norm_eps"], activation="silu", rope_base=cfg["rope_theta"],
                      head="tied" if cfg["tie_word_embeddings"] else "untied", pre_norm=True, gated_ffn=True,
                      attention_bias=False, ffn_bias=False, final_norm=True, causal=True)
        model = {"token_embedding": state["model.embed_tokens.weight"], "final_norm_weight": state["model.norm.weight"]}
        if not cfg["tie_word_embeddings"]:
            model["lm_head"] = state["lm_head.weight"]
        names = {"wq": "self_attn.q_proj.weight", "wk": "self_attn.k_proj.weight", "wv": "self_attn.v_proj.weight",
                 "wo": "self_attn.o_proj.weight", "norm1_weight": "input_layernorm.weight",
                 "norm2_weight": "post_attention_layernorm.weight", "ffn_w1": "mlp.gate_proj.weight",
                 "ffn_w2": "mlp.down_proj.weight", "ffn_w3": "mlp.up_proj.weight"}
        layer = "model.layers.{}."
    layers = [{k: state[layer.format(i) + v] for k, v in names.items()} for i in range(n)]
    return config, layers, model


@needs_attn
class AttnLayout(unittest.TestCase):
    """write_model: attn's own config fields and tensor names (config.json "model_type": "attn")."""

    def test_the_hugging_face_imports_bytes(self):
        rng = np.random.default_rng(5)
        for (state, cfg), user in ((gen_model_fixtures.llama(rng, tied=False), ()),
                                   (gen_model_fixtures.llama(rng, tied=True, layers=1, v=256), ()),
                                   (gen_model_fixtures.bert(rng, "bert."), ("a.weight", "classifier.weight"))):
            for u in user:
                state[u] = rng.standard_normal((3, 8)).astype(np.float32)
            config, layers, model = attn_layout(state, cfg, cfg["num_hidden_layers"], "bert.")
            bv = cfg["vocab_size"] == 256
            want = attn_export.export_model(state, config=cfg, byte_vocab=bv)
            got = attn_export.write_model(config, layers, model, [(u, state[u]) for u in user], byte_vocab=bv)
            self.assertEqual(got, want, cfg["model_type"])

    def test_user_tensors_keep_their_order(self):
        state, cfg = gen_model_fixtures.llama(np.random.default_rng(6), tied=True)
        config, layers, model = attn_layout(state, cfg, 2)
        user = [("z", np.ones(3, np.float32)), ("a", np.zeros((2, 2), np.float32)), ("m", np.arange(4.0))]
        _, _, _, t = parse(attn_export.write_model(config, layers, model, user))
        self.assertEqual(list(t)[-3:], ["z", "a", "m"])
        self.assertEqual([t[n][0] for n in ("z", "a", "m")], [15, 15, 15])
        np.testing.assert_array_equal(t["m"][2], np.arange(4.0, dtype=np.float32))

    def test_bad_inputs_are_named(self):
        state, cfg = gen_model_fixtures.llama(np.random.default_rng(7), tied=False)
        config, layers, model = attn_layout(state, cfg, 2)
        bad_layers = [dict(L) for L in layers]
        bad_layers[1]["bq"] = np.zeros(8, np.float32)
        short = [dict(L) for L in layers]
        del short[0]["ffn_w3"]
        wide = [dict(L) for L in layers]
        wide[1]["wk"] = np.zeros((8, 8), np.float32)
        for c, L, m, u, words in (
                (config, bad_layers, model, (), ["block.1.bq", "attention_bias"]),
                (config, short, model, (), ["missing tensor 'block.0.ffn_w3'"]),
                (config, wide, model, (), ["block.1.wk", "[8, 8]", "[4, 8]"]),
                (dict(config, num_layers=1), layers, model, (), ["block.1.", "num_layers"]),
                (dict(config, head="tied"), layers, model, (), ["model.lm_head", "head untied"]),
                (dict(config, norm="batch_norm"), layers, model, (), ["norm", "layer_norm, rms_norm"]),
                (dict(config, bias=True), layers, model, (), ["'bias' is not a field"]),
                (config, layers, dict(model, final_norm=model["final_norm_weight"]), (), ["model.final_norm'"]),
                (config, layers, model, [("m", np.ones(2)), ("m", np.ones(2))], ["user_tensors", "'m' twice"]),
                (dict(config, vocab_size=None), layers, model, (), ["vocab_size", "missing"])):
            with self.assertRaises(attn_export.ExportError) as ctx:
                attn_export.write_model(c, L, m, u)
            for w in words:
                self.assertIn(w, str(ctx.exception))


@needs_attn
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

    def test_module_heads_per_block(self):
        # Each nn.MultiheadAttention's heads go to `attn import` as --heads PREFIX=H.
        torch.manual_seed(1)
        m = torch.nn.Module()
        m.layers = torch.nn.ModuleList([torch.nn.MultiheadAttention(16, h) for h in (4, 2, 8)])
        m.emb = torch.nn.Embedding(5, 16)
        got = attn_export.export(m, extras={"emb": "emb.weight"})
        state = {k: v.detach().numpy() for k, v in m.state_dict().items()}
        heads = {f"layers.{i}.": h for i, h in enumerate((4, 2, 8))}
        self.assertEqual(got, attn_export.export(state, heads=heads, extras=["emb=emb.weight"]))
        self.assertEqual([b[1] for b in parse(got)[2]], [4, 2, 8])
        self.assertEqual(parse(attn_export.export(m, prefix="layers.1."))[2][0][1], 2)

    def test_torch_state_dict_gives_the_numpy_bytes(self):
        rng = np.random.default_rng(4)
        state, cfg = gen_model_fixtures.llama(rng, tied=True)
        as_torch = {k: torch.from_numpy(np.array(a)) for k, a in state.items()}
        self.assertEqual(attn_export.export_model(as_torch, config=cfg), attn_export.export_model(state, config=cfg))


if __name__ == "__main__":
    unittest.main()
