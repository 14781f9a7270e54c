#!/usr/bin/python3
"""The float32 whole-model encoder forward against torch.nn.TransformerEncoder, in one invocation.

Runs tools/bench/transformer.cpp's binary (attn_bench_transformer) on a shape,
then times torch.nn.TransformerEncoder on the same shape in this process:
N nn.TransformerEncoderLayer(E, H, F, dropout=0, activation, batch_first=True,
norm_first) layers, eval, torch.inference_mode(), torch.set_num_threads(1), input
[1, L, E] (attn's input is L token ids gathered from an embedding table: about
0.1% of its time). torch takes its fast path (torch._transformer_encoder_layer_fwd)
where its version has one. Both sides are medians of per-sample thread CPU
time (on this shared machine other tenants only ever add wall time), and
--rounds N repeats the pair N times, interleaved, and prints every round and
the median ratio, for attn on weights packed once (pack_transformer_weights_f32)
and on the weights as stored.

Run with Debian's python3 (torch lives there):
  /usr/bin/python3 tools/bench/bench_transformer_vs_torch.py [--bench build/host-release/tools/attn_bench_transformer]
      [--shape L E H F N] [--pre-norm] [--relu] [--rounds 3]
"""
import os

os.environ["OPENBLAS_NUM_THREADS"] = "1"
os.environ["OMP_NUM_THREADS"] = "1"
os.environ["MKL_NUM_THREADS"] = "1"

import argparse  # noqa: E402
import re  # noqa: E402
import statistics  # noqa: E402
import subprocess  # noqa: E402
import sys  # noqa: E402
import time  # noqa: E402

import torch  # noqa: E402


def torch_us(L, E, H, F, N, pre_norm, act, samples):
    torch.manual_seed(0)
    layer = torch.nn.TransformerEncoderLayer(E, H, F, dropout=0.0, activation=act, batch_first=True,
                                             norm_first=pre_norm)
    enc = torch.nn.TransformerEncoder(layer, N, enable_nested_tensor=False).eval()
    x = torch.randn(1, L, E)
    with torch.inference_mode():
        enc(x)
        inner = 1
        while True:  # calls per sample: about 20 ms
            t0 = time.thread_time()
            for _ in range(inner):
                enc(x)
            if time.thread_time() - t0 > 0.02 or inner > 1 << 16:
                break
            inner *= 2
        s = []
        for _ in range(samples):
            t0 = time.thread_time()
            for _ in range(inner):
                enc(x)
            s.append((time.thread_time() - t0) / inner * 1e6)
    return statistics.median(s)


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--bench", default=os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "..", "build",
                                                    "host-release", "tools", "attn_bench_transformer"))
    ap.add_argument("--shape", nargs=5, type=int, default=[128, 256, 4, 1024, 4], metavar=("L", "E", "H", "F", "N"))
    ap.add_argument("--pre-norm", action="store_true")
    ap.add_argument("--relu", action="store_true")
    ap.add_argument("--rounds", type=int, default=3)
    ap.add_argument("--samples", type=int, default=21)
    args = ap.parse_args()
    torch.set_num_threads(1)
    L, E, H, F, N = args.shape
    cmd = [args.bench, "--shape"] + [str(v) for v in args.shape] + ["--samples", str(args.samples)]
    if args.pre_norm:
        cmd.append("--pre-norm")
    if args.relu:
        cmd.append("--relu")
    print("torch %s, %d thread; attn: %s" % (torch.__version__, torch.get_num_threads(), " ".join(cmd)))
    ratios, unpacked_ratios = [], []
    for r in range(args.rounds):
        text = subprocess.run(cmd, check=True, capture_output=True, text=True).stdout
        if r == 0:
            print(text.splitlines()[0])
        attn = float(re.search(r"^packed_us=([0-9.]+)", text, re.M).group(1))
        unpacked = float(re.search(r"^unpacked_us=([0-9.]+)", text, re.M).group(1))
        t = torch_us(L, E, H, F, N, args.pre_norm, "relu" if args.relu else "gelu", args.samples)
        ratios.append(t / attn)
        unpacked_ratios.append(t / unpacked)
        print("round %d: attn %.1f us (unpacked %.1f), torch %.1f us, torch / attn %.2fx (unpacked %.2fx)" %
              (r + 1, attn, unpacked, t, t / attn, t / unpacked))
    print("median torch / attn over %d rounds: %.2fx packed, %.2fx unpacked" %
          (args.rounds, statistics.median(ratios), statistics.median(unpacked_ratios)))
    return 0


if __name__ == "__main__":
    sys.exit(main())
