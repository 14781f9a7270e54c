#!/usr/bin/python3
"""Regenerate tests/data/format: PyTorch modules of every layout the export
script reads, their weights as .safetensors, the .attn files attn_export.py
writes for them (through `attn import`: build attn_cli first, or set ATTN_BIN),
inputs and PyTorch's outputs (float64 reference) as .npy,
and cases.txt, which tests/cli_test.cpp replays without PyTorch:

  import ATTN SAFETENSORS ARGS...   `attn import SAFETENSORS ARGS` must write ATTN's bytes
  run ATTN EXPECTED ARGS...         `attn run ATTN ARGS -o Y` must give EXPECTED within
                                    max|y - y_ref| <= 1e-5 max|y_ref| + 1e-6

Run with Debian's python3 (torch 1.13):  /usr/bin/python3 tools/gen_format_fixtures.py
"""

import copy
import os
import sys

import numpy as np
import torch

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import attn_export  # noqa: E402
import hf_checkpoint  # noqa: E402

OUT = os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "tests", "data", "format")


def save_npy(name, a, dtype):
    np.save(os.path.join(OUT, name), np.ascontiguousarray(a, dtype=dtype))


class Fixtures:
    def __init__(self):
        self.lines = []
        self.rng = torch.Generator().manual_seed(20261129)

    def randn(self, *shape):
        return torch.randn(*shape, generator=self.rng)

    def model(self, name, module, export_kwargs, import_args, st_dtype=np.float32):
        """Write NAME.safetensors and NAME.attn; check export from the module,
        from the state_dict and from the safetensors file agree."""
        st = os.path.join(OUT, name + ".safetensors")
        state = {k: v.detach().cpu().numpy().astype(st_dtype) for k, v in module.state_dict().items()}
        hf_checkpoint.write_safetensors(st, state, metadata={"format": "pt"}, canonical=False)
        heads = import_args[import_args.index("--heads") + 1]
        kw_file = dict(export_kwargs, heads=int(heads))
        from_file = attn_export.export(st, **kw_file)
        if st_dtype == np.float32:
            from_module = attn_export.export(module, **export_kwargs)
            assert from_module == from_file, name + ": module and safetensors exports differ"
        with open(os.path.join(OUT, name + ".attn"), "wb") as f:
            f.write(from_file)
        self.lines.append(" ".join(["import", name + ".attn", name + ".safetensors"] + import_args))

    def run(self, attn_name, run_name, fn, x, kv=None, value=None, causal=False, key_length=None, block=None,
            window=None, variants=()):
        """variants: extra `attn run` option lists that must give the same output (e.g. --incremental)."""
        """fn(x64, kv64, v64, attn_mask, key_padding_mask) -> y64 (PyTorch, float64)."""
        args = ["--input", run_name + ".x.npy"]
        save_npy(run_name + ".x.npy", x.numpy(), np.float32)
        x64 = x.double()
        kv64 = v64 = x64
        if kv is not None:
            save_npy(run_name + ".kv.npy", kv.numpy(), np.float32)
            args += ["--kv", run_name + ".kv.npy"]
            kv64 = v64 = kv.double()
        if value is not None:
            save_npy(run_name + ".v.npy", value.numpy(), np.float32)
            args += ["--value", run_name + ".v.npy"]
            v64 = value.double()
        L, S = x.shape[-2], kv64.shape[-2]
        attn_mask = None
        if causal:
            attn_mask = torch.triu(torch.ones(L, S, dtype=torch.bool), 1)
            args.append("--causal")
            if window is not None:  # also mask key j <= i - window
                attn_mask = attn_mask | torch.tril(torch.ones(L, S, dtype=torch.bool), -window)
                args += ["--window", str(window)]
        kpm = None
        if key_length is not None:
            kpm = torch.arange(S) >= key_length
            if x.dim() == 3:
                kpm = kpm.expand(x.shape[0], S)
            args += ["--key-length", str(key_length)]
        if block is not None:
            args += ["--block", str(block)]
        with torch.no_grad():
            y = fn(x64, kv64, v64, attn_mask, kpm)
        save_npy(run_name + ".y.npy", y.numpy(), np.float64)
        self.lines.append(" ".join(["run", attn_name + ".attn", run_name + ".y.npy"] + args))
        for extra in variants:
            self.lines.append(" ".join(["run", attn_name + ".attn", run_name + ".y.npy"] + args + list(extra)))


def mha_call(m):
    m64 = copy.deepcopy(m).double().eval()

    def f(x, k, v, attn_mask, kpm):
        return m64(x, k, v, attn_mask=attn_mask, key_padding_mask=kpm, need_weights=False)[0]

    return f


class BertSelf(torch.nn.Module):
    def __init__(self, hidden, heads):
        super().__init__()
        self.num_attention_heads = heads
        self.query = torch.nn.Linear(hidden, hidden)
        self.key = torch.nn.Linear(hidden, hidden)
        self.value = torch.nn.Linear(hidden, hidden)


class BertOutput(torch.nn.Module):
    def __init__(self, hidden):
        super().__init__()
        self.dense = torch.nn.Linear(hidden, hidden)
        self.LayerNorm = torch.nn.LayerNorm(hidden)


class BertAttention(torch.nn.Module):
    def __init__(self, hidden, heads):
        super().__init__()
        self.self = BertSelf(hidden, heads)
        self.output = BertOutput(hidden)


class BertLayer(torch.nn.Module):
    def __init__(self, hidden, heads):
        super().__init__()
        self.attention = BertAttention(hidden, heads)
        self.intermediate = torch.nn.Linear(hidden, 2 * hidden)


class FakeBert(torch.nn.Module):
    """The parameter names of HuggingFace's BertModel, without its code."""

    def __init__(self, hidden=16, heads=4, layers=2, vocab=30):
        super().__init__()
        self.embeddings = torch.nn.Module()
        self.embeddings.word_embeddings = torch.nn.Embedding(vocab, hidden)
        self.encoder = torch.nn.Module()
        self.encoder.layer = torch.nn.ModuleList([BertLayer(hidden, heads) for _ in range(layers)])


def bert_as_mha(layer, hidden, heads):
    """The same attention as a torch.nn.MultiheadAttention (the reference)."""
    a = layer.attention
    m = torch.nn.MultiheadAttention(hidden, heads, batch_first=True)
    with torch.no_grad():
        m.in_proj_weight.copy_(torch.cat([a.self.query.weight, a.self.key.weight, a.self.value.weight]))
        m.in_proj_bias.copy_(torch.cat([a.self.query.bias, a.self.key.bias, a.self.value.bias]))
        m.out_proj.weight.copy_(a.output.dense.weight)
        m.out_proj.bias.copy_(a.output.dense.bias)
    return m


class LinearNoBias(torch.nn.Linear):
    def __init__(self, n_in, n_out):
        super().__init__(n_in, n_out, bias=False)


class FakeLlama(torch.nn.Module):
    """The parameter names of HuggingFace's LlamaForCausalLM attention (model.layers.N.self_attn.*)."""

    def __init__(self, hidden, heads, kv_heads_per_layer):
        super().__init__()
        hd = hidden // heads
        self.model = torch.nn.Module()
        self.model.layers = torch.nn.ModuleList()
        for g in kv_heads_per_layer:
            layer = torch.nn.Module()
            layer.self_attn = torch.nn.Module()
            layer.self_attn.q_proj = LinearNoBias(hidden, heads * hd)
            layer.self_attn.k_proj = LinearNoBias(hidden, g * hd)
            layer.self_attn.v_proj = LinearNoBias(hidden, g * hd)
            layer.self_attn.o_proj = LinearNoBias(heads * hd, hidden)
            self.model.layers.append(layer)


class FakeLlama2c(torch.nn.Module):
    """llama2.c / Meta Llama names: layers.N.attention.wq/wk/wv/wo."""

    def __init__(self, hidden, heads, kv_heads):
        super().__init__()
        hd = hidden // heads
        self.layers = torch.nn.ModuleList([torch.nn.Module()])
        a = self.layers[0].attention = torch.nn.Module()
        a.wq, a.wk = LinearNoBias(hidden, heads * hd), LinearNoBias(hidden, kv_heads * hd)
        a.wv, a.wo = LinearNoBias(hidden, kv_heads * hd), LinearNoBias(heads * hd, hidden)


def llama_attention(wq, wk, wv, wo, heads, kv_heads, base, interleaved=False):
    """Llama attention (float64): GQA (K/V head j serves query heads j*H/G ..), RoPE on Q and K at
    positions 0..L-1, HF's half-split pairing (i, i + hd/2) or llama2.c's interleaved (2i, 2i+1)."""
    wq, wk, wv, wo = (w.detach().double() for w in (wq, wk, wv, wo))

    def f(x, k_, v_, attn_mask, kpm):
        assert kpm is None
        L, E = x.shape[-2], x.shape[-1]
        hd = wq.shape[0] // heads
        q = (x @ wq.T).reshape(*x.shape[:-1], heads, hd).transpose(-2, -3)      # [.., H, L, hd]
        k = (x @ wk.T).reshape(*x.shape[:-1], kv_heads, hd).transpose(-2, -3)   # [.., G, L, hd]
        v = (x @ wv.T).reshape(*x.shape[:-1], kv_heads, hd).transpose(-2, -3)
        inv_freq = 1.0 / (base ** (torch.arange(0, hd, 2, dtype=torch.float64) / hd))  # [hd/2]
        ang = torch.arange(L, dtype=torch.float64)[:, None] * inv_freq[None, :]      # [L, hd/2]
        cos, sin = torch.cos(ang), torch.sin(ang)

        def rope(t):
            if interleaved:
                a, b = t[..., 0::2], t[..., 1::2]
                out = torch.empty_like(t)
                out[..., 0::2], out[..., 1::2] = a * cos - b * sin, a * sin + b * cos
                return out
            a, b = t[..., :hd // 2], t[..., hd // 2:]
            return torch.cat([a * cos - b * sin, b * cos + a * sin], dim=-1)

        q, k = rope(q), rope(k)
        k = k.repeat_interleave(heads // kv_heads, dim=-3)
        v = v.repeat_interleave(heads // kv_heads, dim=-3)
        s = q @ k.transpose(-1, -2) / hd ** 0.5
        if attn_mask is not None:
            s = s.masked_fill(attn_mask, float("-inf"))
        ctx = torch.softmax(s, dim=-1) @ v                                           # [.., H, L, hd]
        return ctx.transpose(-2, -3).reshape(*x.shape[:-1], heads * hd) @ wo.T

    return f


def randomize(module, fx):
    with torch.no_grad():
        for p in module.parameters():
            p.copy_(0.3 * fx.randn(*p.shape))


def main():
    torch.manual_seed(0)
    os.makedirs(OUT, exist_ok=True)
    for f in os.listdir(OUT):
        if os.path.isfile(os.path.join(OUT, f)):  # quant/ is made by another script
            os.unlink(os.path.join(OUT, f))
    fx = Fixtures()

    # 1. nn.MultiheadAttention, packed in_proj_weight; batched input.
    mha = torch.nn.MultiheadAttention(16, 4, batch_first=True)
    randomize(mha, fx)
    fx.model("mha_packed", mha, {}, ["--heads", "4"])
    x = fx.randn(2, 5, 16)
    f = mha_call(mha)
    fx.run("mha_packed", "mha_packed.self", f, x)
    fx.run("mha_packed", "mha_packed.causal", f, x, causal=True)
    fx.run("mha_packed", "mha_packed.pad", f, x, key_length=3)
    fx.run("mha_packed", "mha_packed.causal_pad", f, x, causal=True, key_length=4)
    # The same weights stored as float16 safetensors: both readers widen alike.
    fx.model("mha_packed_f16", mha, {}, ["--heads", "4"], st_dtype=np.float16)

    # 2. Cross attention, kdim != vdim != E: separate q/k/v_proj_weight.
    cross = torch.nn.MultiheadAttention(16, 2, kdim=12, vdim=10, batch_first=True)
    randomize(cross, fx)
    fx.model("mha_cross", cross, {}, ["--heads", "2"])
    x, k, v = fx.randn(5, 16), fx.randn(7, 12), fx.randn(7, 10)
    f = mha_call(cross)
    fx.run("mha_cross", "mha_cross.plain", f, x, kv=k, value=v)
    fx.run("mha_cross", "mha_cross.causal", f, x, kv=k, value=v, causal=True)
    fx.run("mha_cross", "mha_cross.pad", f, x, kv=k, value=v, key_length=4)
    xb, kb, vb = fx.randn(3, 4, 16), fx.randn(3, 6, 12), fx.randn(3, 6, 10)
    fx.run("mha_cross", "mha_cross.batch", f, xb, kv=kb, value=vb, key_length=5)

    # 3. TransformerEncoderLayer's self_attn (the file holds the whole layer).
    enc = torch.nn.TransformerEncoderLayer(d_model=16, nhead=4, dim_feedforward=32, batch_first=True)
    randomize(enc, fx)
    fx.model("encoder_layer", enc, {}, ["--heads", "4"])
    x = fx.randn(6, 16)
    f = mha_call(enc.self_attn)
    fx.run("encoder_layer", "encoder_layer.self", f, x)
    fx.run("encoder_layer", "encoder_layer.causal", f, x, causal=True)

    # 4. BERT-style, one layer picked by --prefix, plus the word embeddings.
    bert = FakeBert()
    randomize(bert, fx)
    extras = {"word_embeddings": "embeddings.word_embeddings.weight"}
    fx.model("bert", bert, {"prefix": "encoder.layer.1.", "extras": extras},
             ["--heads", "4", "--prefix", "encoder.layer.1.", "--extra",
              "word_embeddings=embeddings.word_embeddings.weight"])
    x = fx.randn(2, 5, 16)
    f = mha_call(bert_as_mha(bert.encoder.layer[1], 16, 4))
    fx.run("bert", "bert.self", f, x)
    fx.run("bert", "bert.pad", f, x, key_length=2)
    # Both BERT layers into one file, run in order.
    fx.model("bert_all", bert, {}, ["--heads", "4"])
    m0, m1 = mha_call(bert_as_mha(bert.encoder.layer[0], 16, 4)), f

    def bert_chain(x, k, v, am, kp):
        y = m0(x, x, x, am, kp)
        return m1(y, y, y, am, kp)

    fx.run("bert_all", "bert_all.chain", bert_chain, x, causal=True)

    # 5. Several layers (one without bias) in one file, with a user tensor.
    class Stack(torch.nn.Module):
        def __init__(self):
            super().__init__()
            self.embed = torch.nn.Embedding(10, 16)
            self.layers = torch.nn.ModuleList([
                torch.nn.MultiheadAttention(16, 4, batch_first=True),
                torch.nn.MultiheadAttention(16, 2, bias=False, batch_first=True),
                torch.nn.MultiheadAttention(16, 8, batch_first=True)])

    stack = Stack()
    randomize(stack, fx)
    # Heads differ per layer: the module knows them; safetensors import takes one
    # --heads for all, so this file is checked by run only (import: see bert_all).
    data = attn_export.export(stack, extras={"embed": "embed.weight"})
    with open(os.path.join(OUT, "layers.attn"), "wb") as fh:
        fh.write(data)
    fs = [mha_call(m) for m in stack.layers]

    def chain(x, k, v, am, kp, which=(0, 1, 2)):
        for i in which:
            x = fs[i](x, x, x, am, kp)
        return x

    x = fx.randn(7, 16)
    fx.run("layers", "layers.chain", chain, x)
    fx.run("layers", "layers.chain_causal_pad", chain, x, causal=True, key_length=5)
    fx.run("layers", "layers.block1", lambda *a: chain(*a, which=(1,)), x, causal=True, block=1)

    # 6. HF Llama attention, no bias: GQA (2 K/V heads) then MQA (1), RoPE base 10000 (the default).
    #    K/V heads come from k_proj's shape.
    llama = FakeLlama(32, 4, (2, 1))
    randomize(llama, fx)
    fx.model("llama_hf", llama, {"heads": 4}, ["--heads", "4"])
    ls = [a.self_attn for a in llama.model.layers]
    lf = [llama_attention(a.q_proj.weight, a.k_proj.weight, a.v_proj.weight, a.o_proj.weight, 4, g, 10000.0)
          for a, g in zip(ls, (2, 1))]

    def llama_chain(x, k, v, am, kp, which=(0, 1)):
        for i in which:
            x = lf[i](x, x, x, am, kp)
        return x

    x = fx.randn(7, 32)
    # Decoding through the KV caches (attn run --incremental) must match the same reference.
    inc = (["--incremental"], ["--incremental", "--prefill", "3"], ["--incremental", "--prefill", "7"])
    fx.run("llama_hf", "llama_hf.causal", llama_chain, x, causal=True, variants=inc)
    fx.run("llama_hf", "llama_hf.window", llama_chain, x, causal=True, window=3,
           variants=(["--incremental"], ["--incremental", "--prefill", "5"]))
    fx.run("llama_hf", "llama_hf.block0", lambda *a: llama_chain(*a, which=(0,)), x, causal=True, block=0)
    fx.run("llama_hf", "llama_hf.full1", lambda *a: llama_chain(*a, which=(1,)), x, block=1)
    fx.run("llama_hf", "llama_hf.batch", llama_chain, fx.randn(2, 5, 32), causal=True,
           variants=(["--incremental", "--prefill", "2"],))

    # 7. llama2.c names, interleaved rotary pairs (permuted to half-split on export), GQA, options given.
    l2c = FakeLlama2c(16, 4, 2)
    randomize(l2c, fx)
    fx.model("llama2c", l2c, {"heads": 4, "kv_heads": 2, "rope_base": 500000.0},
             ["--heads", "4", "--kv-heads", "2", "--rope-base", "500000"])
    a = l2c.layers[0].attention
    f = llama_attention(a.wq.weight, a.wk.weight, a.wv.weight, a.wo.weight, 4, 2, 500000.0, interleaved=True)
    fx.run("llama2c", "llama2c.causal", f, fx.randn(9, 16), causal=True, variants=(["--incremental", "--prefill", "4"],))

    with open(os.path.join(OUT, "cases.txt"), "w") as fh:
        fh.write("# Generated by tools/gen_format_fixtures.py; replayed by tests/cli_test.cpp.\n")
        fh.write("\n".join(fx.lines) + "\n")
    print(f"wrote {sum(os.path.isfile(os.path.join(OUT, f)) for f in os.listdir(OUT))} files to "
          f"{os.path.normpath(OUT)}")


if __name__ == "__main__":
    main()
