#!/usr/bin/python3
"""Regenerate tests/data/format/quant: end-to-end fixtures of the fixed-point path.

For each model (MHA self, cross, two layers, a Llama GQA + RoPE block): a PyTorch module exported with
tools/attn_export.py (float32 .attn, through `attn import`: build attn_cli first, or set ATTN_BIN),
calibration inputs drawn like the test inputs, a test input, and PyTorch's float64
output. tests/cli_quant_test.cpp (no PyTorch) runs `attn quantize` on the calibration
set, then `attn run` on the quantized file, and checks the SQNR against PyTorch.
The lines of quant_cases.txt are:

  NAME MIN_S8_DB MIN_S16_DB ARGS...   quantize NAME.attn with --calib NAME.calib.npy
                                      [and ARGS], run NAME.x.npy [with ARGS], compare
                                      with NAME.y.npy

Run with Debian's python3 (torch 1.13):  /usr/bin/python3 tools/gen_quant_fixtures.py
"""

import copy
import os
import sys

import numpy as np
import torch

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import attn_export  # noqa: E402

OUT = os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "tests", "data", "format", "quant")
N_CALIB = 16


def save(name, a, dtype=np.float32):
    np.save(os.path.join(OUT, name), np.ascontiguousarray(a, dtype=dtype))


def main():
    os.makedirs(OUT, exist_ok=True)
    g = torch.Generator().manual_seed(4242)
    lines = []

    # 1. Self-attention, nn.MultiheadAttention(32, 4), causal.
    torch.manual_seed(1)
    m = torch.nn.MultiheadAttention(32, 4, batch_first=True).eval()
    L = 12
    attn_export.export(m, os.path.join(OUT, "mha_self.attn"))
    save("mha_self.calib.npy", torch.randn(N_CALIB, L, 32, generator=g).numpy())
    x = torch.randn(2, L, 32, generator=g)
    save("mha_self.x.npy", x.numpy())
    m64 = copy.deepcopy(m).double()
    mask = torch.triu(torch.ones(L, L, dtype=torch.bool), 1)
    with torch.no_grad():
        y = m64(x.double(), x.double(), x.double(), attn_mask=mask, need_weights=False)[0]
    save("mha_self.y.npy", y.numpy(), np.float64)
    lines.append("mha_self 28 37 --causal")

    # 2. Cross-attention with kdim, vdim != E.
    torch.manual_seed(2)
    m = torch.nn.MultiheadAttention(24, 3, kdim=16, vdim=20, batch_first=True).eval()
    L, S = 8, 10
    attn_export.export(m, os.path.join(OUT, "mha_cross.attn"))
    save("mha_cross.calib.npy", torch.randn(N_CALIB, L, 24, generator=g).numpy())
    save("mha_cross.calib_kv.npy", torch.randn(N_CALIB, S, 16, generator=g).numpy())
    save("mha_cross.calib_v.npy", torch.randn(N_CALIB, S, 20, generator=g).numpy())
    x, kv, v = torch.randn(L, 24, generator=g), torch.randn(S, 16, generator=g), torch.randn(S, 20, generator=g)
    save("mha_cross.x.npy", x.numpy())
    save("mha_cross.kv.npy", kv.numpy())
    save("mha_cross.v.npy", v.numpy())
    m64 = copy.deepcopy(m).double()
    with torch.no_grad():
        y = m64(x.double()[None], kv.double()[None], v.double()[None], need_weights=False)[0][0]
    save("mha_cross.y.npy", y.numpy(), np.float64)
    lines.append("mha_cross 28 37 --kv mha_cross.kv.npy --value mha_cross.v.npy "
                 "--calib-kv mha_cross.calib_kv.npy --calib-value mha_cross.calib_v.npy")

    # 3. Two self-attention layers in one file (one without bias), run in order: `attn quantize`
    #    calibrates block 1 on block 0's float output.
    torch.manual_seed(3)

    class Stack(torch.nn.Module):
        def __init__(self):
            super().__init__()
            self.layers = torch.nn.ModuleList([torch.nn.MultiheadAttention(16, 2, batch_first=True),
                                               torch.nn.MultiheadAttention(16, 4, bias=False, batch_first=True)])

    stack = Stack().eval()
    L = 9
    attn_export.export(stack, os.path.join(OUT, "two_layers.attn"))
    save("two_layers.calib.npy", torch.randn(N_CALIB, L, 16, generator=g).numpy())
    x = torch.randn(L, 16, generator=g)
    save("two_layers.x.npy", x.numpy())
    y = x.double()[None]
    with torch.no_grad():
        for layer in stack.layers:
            m64 = copy.deepcopy(layer).double().train()  # dropout 0; avoids torch 1.13 fast path (no bias)
            y = m64(y, y, y, need_weights=False)[0]
    save("two_layers.y.npy", y[0].numpy(), np.float64)
    lines.append("two_layers 28 37")

    # 4. A Llama-style block (HF q/k/v/o_proj, no bias): grouped-query (8 heads, 4 K/V heads,
    #    stories260K's shape) with rotary embedding, causal. Reference: gen_golden.llama_torch.
    #    The rope tables cover the calibration length, which is the test length.
    import gen_golden  # noqa: E402
    torch.manual_seed(4)
    E, H, KV, L = 64, 8, 4, 16
    hd = E // H
    p = "layers.0.self_attn."
    state = {p + "q_proj.weight": torch.randn(E, E, generator=g) * 2.0 / E ** 0.5,
             p + "k_proj.weight": torch.randn(KV * hd, E, generator=g) * 2.0 / E ** 0.5,
             p + "v_proj.weight": torch.randn(KV * hd, E, generator=g) / E ** 0.5,
             p + "o_proj.weight": torch.randn(E, E, generator=g) / E ** 0.5}
    attn_export.export(state, os.path.join(OUT, "llama_gqa.attn"), heads=H, kv_heads=KV, rope_base=10000.0)
    save("llama_gqa.calib.npy", torch.randn(N_CALIB, L, E, generator=g).numpy())
    x = torch.randn(L, E, generator=g)
    save("llama_gqa.x.npy", x.numpy())
    case = gen_golden.llama_case("llama_gqa", E, H, KV, L)
    d = {"wq": state[p + "q_proj.weight"].numpy(), "wk": state[p + "k_proj.weight"].numpy(),
         "wv": state[p + "v_proj.weight"].numpy(), "wo": state[p + "o_proj.weight"].numpy(),
         "query": x.numpy()}
    y, _ = gen_golden.llama_torch(case, {k: np.asarray(v, dtype=np.float32) for k, v in d.items()})
    save("llama_gqa.y.npy", y, np.float64)
    lines.append("llama_gqa 28 37 --causal")

    with open(os.path.join(OUT, "quant_cases.txt"), "w") as f:
        f.write("# Generated by tools/gen_quant_fixtures.py; replayed by tests/cli_quant_test.cpp.\n")
        f.write("\n".join(lines) + "\n")
    print("wrote", OUT)


if __name__ == "__main__":
    main()
