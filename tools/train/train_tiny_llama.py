#!/usr/bin/python3
"""Train a tiny Llama-style byte-level language model on the licence texts.

The model is Hugging Face LlamaForCausalLM written in plain torch (so that the
weights load into LlamaForCausalLM unchanged, and attn's importer reads them):

    x = embed_tokens[ids]                         token = byte (vocab 256)
    for each layer (pre-norm):
        x = x + o_proj(Attention(RoPE(q_proj n), RoPE(k_proj n), v_proj n)),  n = input_layernorm(x)
        x = x + down_proj(silu(gate_proj n) * up_proj n),              n = post_attention_layernorm(x)
    logits = norm(x) @ embed_tokens^T             tied head (lm_head = embed_tokens)

RMSNorm x / sqrt(mean(x^2) + eps) * w; causal attention with grouped-query
K/V heads; RoPE as HF (rotate_half: dims i and i + head_dim/2 pair, inv_freq
theta^(-2i/head_dim), theta 10000, positions 0..n-1); no biases.

Data: every regular file of /usr/share/common-licenses (the symlinks GPL, LGPL,
GFDL duplicate a versioned file and are skipped), sorted by name. The last
10% of each file (cut at a line start) is held out; the rest is the training
text. Training samples random windows of the training text.

Writes (deterministic for a given seed) into tests/data/tiny_llama/:
    model.safetensors  HF layout: model.embed_tokens.weight,
                       model.layers.N.self_attn.{q,k,v,o}_proj.weight,
                       model.layers.N.mlp.{gate,up,down}_proj.weight,
                       model.layers.N.{input,post_attention}_layernorm.weight,
                       model.norm.weight (tied: no lm_head.weight), float32
    config.json        HF LlamaConfig (model_type "llama")
    heldout.txt        the held-out bytes (the held-out slices back to back)
    reference.json     PyTorch's float numbers for a test:
                       - perplexity of heldout.txt: the text cut into consecutive
                         chunks of max_position_embeddings bytes (the last one
                         shorter), each chunk one forward at positions 0..n-1,
                         every byte after a chunk's first predicted;
                         ppl = exp(mean negative log-likelihood); also for the
                         first 1024 bytes alone (a quick test);
                       - the greedy continuation of a fixed prompt (PROMPTS): 64 token
                         ids (argmax at each step, positions continuing the
                         prompt's), and the smallest gap between the best and the
                         second-best logit along the way;
                       - the int8 fake-quant perplexity estimates.
The fake quantization (tools/train/fake_quant.py): per-channel int8 weights,
per-tensor asymmetric int8 activations at every matmul input (projection
inputs, RoPE'd Q and K, V, softmax probabilities, attention context, gated
FFN product, head input), min/max calibrated on training windows; and a
stricter one that also rounds the residual stream.

Default size: hidden 64, 3 layers, 4 heads (head_dim 16), 2 K/V heads, FFN 176,
context 128, tied head: 155,072 parameters (623 KB). 1500 steps of 16 windows
of 128 bytes take about 3 minutes of CPU on one core (13 minutes wall on a
loaded 2-core machine); held-out perplexity 4.13 (int8 estimate +0.6%).

Run with Debian's python3 (it has torch):  /usr/bin/python3 tools/train/train_tiny_llama.py
"""
import json
import math
import os
import random
import sys
import time

import torch
import torch.nn as nn
import torch.nn.functional as F

TOOLS = os.path.dirname(os.path.abspath(__file__))
REPO = os.path.dirname(os.path.dirname(TOOLS))
sys.path.insert(0, TOOLS)  # fake_quant, train_common
sys.path.insert(0, os.path.join(TOOLS, "..", "export"))  # hf_checkpoint
import fake_quant  # noqa: E402
import train_common  # noqa: E402
import hf_checkpoint  # noqa: E402

LICENSES = "/usr/share/common-licenses"
# Greedy-continuation prompts (from the training text), tried in this order: the
# first whose 64 steps all have a best logit at least MIN_GAP above the second
# is the reference, so that a float implementation agrees on every step.
# Prompt and continuation fit in one context (64 + 64 <= 128).
PROMPTS = ("The licenses for most software are designed",
           "Redistribution and use in source and binary forms",
           "You may copy and distribute verbatim copies",
           "Everyone is permitted to copy and distribute")
MIN_GAP = 0.05
GENERATE = 64
QUICK_BYTES = 1024


class Config:
    vocab_size = 256
    hidden_size = 64
    num_hidden_layers = 3
    num_attention_heads = 4
    num_key_value_heads = 2
    intermediate_size = 176
    max_position_embeddings = 128
    rms_norm_eps = 1e-5
    rope_theta = 10000.0

    @property
    def head_dim(self):
        return self.hidden_size // self.num_attention_heads

    def hf(self):
        return {
            "architectures": ["LlamaForCausalLM"],
            "model_type": "llama",
            "vocab_size": self.vocab_size,
            "hidden_size": self.hidden_size,
            "intermediate_size": self.intermediate_size,
            "num_hidden_layers": self.num_hidden_layers,
            "num_attention_heads": self.num_attention_heads,
            "num_key_value_heads": self.num_key_value_heads,
            "hidden_act": "silu",
            "max_position_embeddings": self.max_position_embeddings,
            "rms_norm_eps": self.rms_norm_eps,
            "rope_theta": self.rope_theta,
            "rope_scaling": None,
            "attention_bias": False,
            "mlp_bias": False,
            "tie_word_embeddings": True,
            "initializer_range": 0.02,
            "torch_dtype": "float32",
            "bos_token_id": None,
            "eos_token_id": None,
        }


def _noq(name, x):
    return x


class RMSNorm(nn.Module):  # LlamaRMSNorm
    def __init__(self, dim, eps):
        super().__init__()
        self.weight = nn.Parameter(torch.ones(dim))
        self.eps = eps

    def forward(self, x):
        return x * torch.rsqrt(x.pow(2).mean(-1, keepdim=True) + self.eps) * self.weight


def rotate_half(x):
    h = x.shape[-1] // 2
    return torch.cat((-x[..., h:], x[..., :h]), dim=-1)


def rope_tables(cfg, n):
    hd = cfg.head_dim
    inv_freq = 1.0 / (cfg.rope_theta ** (torch.arange(0, hd, 2, dtype=torch.float32) / hd))
    freqs = torch.outer(torch.arange(n, dtype=torch.float32), inv_freq)
    emb = torch.cat((freqs, freqs), dim=-1)
    return emb.cos(), emb.sin()  # [n, hd]


class Attention(nn.Module):  # LlamaAttention
    def __init__(self, cfg):
        super().__init__()
        self.cfg = cfg
        hd = cfg.head_dim
        self.q_proj = nn.Linear(cfg.hidden_size, cfg.num_attention_heads * hd, bias=False)
        self.k_proj = nn.Linear(cfg.hidden_size, cfg.num_key_value_heads * hd, bias=False)
        self.v_proj = nn.Linear(cfg.hidden_size, cfg.num_key_value_heads * hd, bias=False)
        self.o_proj = nn.Linear(cfg.num_attention_heads * hd, cfg.hidden_size, bias=False)

    def forward(self, x, cos, sin, fq, p):
        cfg = self.cfg
        b, n, _ = x.shape
        h, g, hd = cfg.num_attention_heads, cfg.num_key_value_heads, cfg.head_dim
        x = fq(p + "in", x)
        q = self.q_proj(x).view(b, n, h, hd).transpose(1, 2)
        k = self.k_proj(x).view(b, n, g, hd).transpose(1, 2)
        v = self.v_proj(x).view(b, n, g, hd).transpose(1, 2)
        q = fq(p + "q", q * cos + rotate_half(q) * sin)
        k = fq(p + "k", k * cos + rotate_half(k) * sin)
        v = fq(p + "v", v)
        k = k.repeat_interleave(h // g, dim=1)  # query head i reads K/V head i // (h / g)
        v = v.repeat_interleave(h // g, dim=1)
        scores = q @ k.transpose(-1, -2) / math.sqrt(hd)
        mask = torch.ones(n, n, dtype=torch.bool).triu(1)
        probs = fq(p + "probs", torch.softmax(scores.masked_fill(mask, float("-inf")), dim=-1))
        ctx = (probs @ v).transpose(1, 2).reshape(b, n, h * hd)
        return self.o_proj(fq(p + "ctx", ctx))


class MLP(nn.Module):  # LlamaMLP
    def __init__(self, cfg):
        super().__init__()
        self.gate_proj = nn.Linear(cfg.hidden_size, cfg.intermediate_size, bias=False)
        self.up_proj = nn.Linear(cfg.hidden_size, cfg.intermediate_size, bias=False)
        self.down_proj = nn.Linear(cfg.intermediate_size, cfg.hidden_size, bias=False)

    def forward(self, x, fq, p):
        x = fq(p + "in", x)
        return self.down_proj(fq(p + "act", F.silu(self.gate_proj(x)) * self.up_proj(x)))


class DecoderLayer(nn.Module):
    def __init__(self, cfg):
        super().__init__()
        self.self_attn = Attention(cfg)
        self.mlp = MLP(cfg)
        self.input_layernorm = RMSNorm(cfg.hidden_size, cfg.rms_norm_eps)
        self.post_attention_layernorm = RMSNorm(cfg.hidden_size, cfg.rms_norm_eps)

    def forward(self, x, cos, sin, fq, p):
        x = fq(p + "res1", x + self.self_attn(self.input_layernorm(x), cos, sin, fq, p + "attn."))
        return fq(p + "res2", x + self.mlp(self.post_attention_layernorm(x), fq, p + "mlp."))


class Backbone(nn.Module):  # LlamaModel
    def __init__(self, cfg):
        super().__init__()
        self.embed_tokens = nn.Embedding(cfg.vocab_size, cfg.hidden_size)
        self.layers = nn.ModuleList([DecoderLayer(cfg) for _ in range(cfg.num_hidden_layers)])
        self.norm = RMSNorm(cfg.hidden_size, cfg.rms_norm_eps)


class TinyLlama(nn.Module):  # LlamaForCausalLM, tied head
    def __init__(self, cfg):
        super().__init__()
        self.cfg = cfg
        self.model = Backbone(cfg)
        for m in self.modules():  # LlamaPreTrainedModel._init_weights
            if isinstance(m, (nn.Linear, nn.Embedding)):
                m.weight.data.normal_(0.0, 0.02)

    def forward(self, ids, fq=_noq):
        n = ids.shape[1]
        if n > self.cfg.max_position_embeddings:
            raise ValueError("sequence longer than max_position_embeddings")
        cos, sin = rope_tables(self.cfg, n)
        x = fq("emb", self.model.embed_tokens(ids))
        for i, layer in enumerate(self.model.layers):
            x = layer(x, cos, sin, fq, f"l{i}.")
        x = fq("head_in", self.model.norm(x))
        return x @ self.model.embed_tokens.weight.t()


# -------------------------------------------------------------------- data ---

def load_texts(root=LICENSES, holdout=0.1):
    """(train, heldout) bytes: per regular file sorted by name, the last
    `holdout` of it (from the start of a line) is held out."""
    train, held = [], []
    names = []
    for name in sorted(os.listdir(root)):
        path = os.path.join(root, name)
        if os.path.islink(path) or not os.path.isfile(path):
            continue
        with open(path, "rb") as f:
            data = f.read()
        cut = int(len(data) * (1 - holdout))
        nl = data.rfind(b"\n", 0, cut)
        cut = nl + 1 if nl > 0 else cut
        train.append(data[:cut])
        held.append(data[cut:])
        names.append(name)
    return b"".join(train), b"".join(held), names


def chunks(data, n):
    return [data[i:i + n] for i in range(0, len(data), n)]


@torch.no_grad()
def perplexity(model, data, ctx, fq=_noq):
    """exp(mean NLL) of every byte after the first of each ctx-byte chunk."""
    nll, count = 0.0, 0
    for c in chunks(data, ctx):
        if len(c) < 2:
            continue
        ids = torch.tensor(list(c), dtype=torch.long)[None]
        logp = torch.log_softmax(model(ids, fq)[0, :-1].double(), dim=-1)
        nll -= logp.gather(1, ids[0, 1:, None]).sum().item()
        count += len(c) - 1
    return math.exp(nll / count)


@torch.no_grad()
def greedy(model, prompt, steps):
    ids = list(prompt)
    gaps = []
    for _ in range(steps):
        logits = model(torch.tensor(ids, dtype=torch.long)[None])[0, -1]
        top = torch.topk(logits, 2).values
        gaps.append((top[0] - top[1]).item())
        ids.append(int(logits.argmax()))
    return ids[len(prompt):], min(gaps)


def fake_quant_perplexity(model, calib, held, ctx, strict):
    # Not strict: the residual stream stays float.
    skip = None if strict else lambda name: name == "emb" or ".res" in name
    matrices = [n for n, p in model.named_parameters() if p.dim() == 2]
    q, fq = fake_quant.quantized(TinyLlama(model.cfg), model, matrices, calib, skip)
    return perplexity(q, held, ctx, fq)


def main():
    cfg = Config()
    ap = train_common.training_parser(__doc__, seed=1, batch=16, weight_decay=0.1)
    ap.add_argument("--dim", type=int, default=cfg.hidden_size)
    ap.add_argument("--layers", type=int, default=cfg.num_hidden_layers)
    ap.add_argument("--ffn", type=int, default=cfg.intermediate_size)
    ap.add_argument("--ctx", type=int, default=cfg.max_position_embeddings)
    ap.add_argument("--out", default=os.path.join(REPO, "tests", "data", "tiny_llama"))
    ap.add_argument("--load", help="skip training: load this model.safetensors")
    args = ap.parse_args()
    cfg.hidden_size, cfg.num_hidden_layers, cfg.intermediate_size = args.dim, args.layers, args.ffn
    cfg.max_position_embeddings = args.ctx

    torch.set_num_threads(args.threads)
    torch.manual_seed(args.seed)
    rng = random.Random(args.seed)
    train, held, names = load_texts()
    print(f"text: {len(names)} files, {len(train)} training bytes, {len(held)} held-out bytes")
    train_t = torch.tensor(list(train), dtype=torch.long)

    model = TinyLlama(cfg)
    print(f"parameters: {sum(p.numel() for p in model.parameters())}")
    opt, sched = train_common.one_cycle_adamw(model, args, pct_start=0.05, betas=(0.9, 0.95))
    n = cfg.max_position_embeddings
    t0 = time.time()
    if args.load:
        model.load_state_dict({k: torch.from_numpy(v.copy()) for k, v in
                               hf_checkpoint.read_safetensors(args.load).items()})
        args.steps = 0
    for step in range(1, args.steps + 1):
        starts = [rng.randrange(len(train) - n - 1) for _ in range(args.batch)]
        batch = torch.stack([train_t[s:s + n + 1] for s in starts])
        logits = model(batch[:, :-1])
        loss = F.cross_entropy(logits.reshape(-1, cfg.vocab_size), batch[:, 1:].reshape(-1))
        opt.zero_grad()
        loss.backward()
        nn.utils.clip_grad_norm_(model.parameters(), 1.0)
        opt.step()
        sched.step()
        if step % 100 == 0 or step == args.steps:
            print(f"step {step:5d}  loss {loss.item():.4f}  {time.time() - t0:.0f} s", flush=True)
    train_s = time.time() - t0

    model.eval()
    ppl = perplexity(model, held, n)
    ppl_quick = perplexity(model, held[:QUICK_BYTES], n)
    calib_rng = random.Random(args.seed + 1000)
    calib = torch.stack([train_t[s:s + n] for s in
                         (calib_rng.randrange(len(train) - n) for _ in range(32))])
    ppl_q = fake_quant_perplexity(model, calib, held, n, strict=False)
    ppl_qs = fake_quant_perplexity(model, calib, held, n, strict=True)
    for text in PROMPTS:
        prompt = text.encode("utf-8")
        cont, gap = greedy(model, prompt, GENERATE)
        print(f"greedy ({gap:.3f} smallest top-2 gap): {text!r} + {bytes(cont).decode('utf-8', 'replace')!r}")
        if gap >= MIN_GAP:
            break
    else:
        print(f"error: no prompt keeps a top-2 logit gap of {MIN_GAP}", file=sys.stderr)
        return 1
    print(f"training: {train_s:.0f} s wall, {time.process_time():.0f} s CPU (process)")
    print(f"held-out perplexity (f32): {ppl:.4f}  (first {QUICK_BYTES} bytes: {ppl_quick:.4f})")
    print(f"held-out perplexity int8 fake-quant: {ppl_q:.4f} (matmul inputs, {100 * (ppl_q / ppl - 1):+.2f}%),"
          f" {ppl_qs:.4f} (and residual stream, {100 * (ppl_qs / ppl - 1):+.2f}%)")

    os.makedirs(args.out, exist_ok=True)
    state = model.state_dict()
    path = os.path.join(args.out, "model.safetensors")
    size = hf_checkpoint.write_safetensors(path, state, metadata={"format": "pt"})
    hf_checkpoint.write_config(os.path.join(args.out, "config.json"), cfg.hf())
    with open(os.path.join(args.out, "heldout.txt"), "wb") as f:
        f.write(held)
    reference = {
        "sources": names,
        "heldout_bytes": len(held),
        "chunk": n,
        "perplexity_f32": ppl,
        "quick_bytes": QUICK_BYTES,
        "perplexity_f32_quick": ppl_quick,
        "perplexity_fake_s8": ppl_q,
        "perplexity_fake_s8_residual": ppl_qs,
        "prompt": text,
        "prompt_ids": list(prompt),
        "greedy_ids": cont,
        "greedy_min_top2_gap": gap,
    }
    with open(os.path.join(args.out, "reference.json"), "w", encoding="utf-8") as f:
        json.dump(reference, f, indent=1)
        f.write("\n")
    back = hf_checkpoint.read_safetensors(path)
    assert sorted(back) == sorted(state)
    assert all((torch.from_numpy(back[k].copy()) == state[k]).all() for k in state)
    print(f"wrote {path} ({size} bytes), config.json, heldout.txt, reference.json in {args.out}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
