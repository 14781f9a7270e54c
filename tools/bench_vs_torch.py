#!/usr/bin/python3
"""Our float32 attention forward against torch.nn.MultiheadAttention, in one invocation.

Runs tools/bench/speed.cpp's binary (attn_bench_speed), then times on the same
shapes, single thread:
  * torch.nn.MultiheadAttention (batch_first, batch 1, self-attention, eval,
    inference mode, need_weights=False), torch.set_num_threads(1);
  * numpy float32 1024x1024x1024 matmul through OpenBLAS: this machine's
    practical single-core sgemm peak.
and prints the ratios against the targets of issue 5.

Each figure is a median over samples of back-to-back calls (about 2 ms per
sample), in both wall time and this thread's CPU time. The machine is shared
and often loaded: CPU time leaves out the time other processes held the core,
so the ratios use it; wall-time ratios are printed beside them.

Run with Debian's python (torch 1.13 + libopenblas0-pthread live there):
  /usr/bin/python3 tools/bench_vs_torch.py [--bench build/host-release/tools/attn_bench_speed] [--min-ms 300]
"""
import os

# One BLAS thread: set before numpy or torch load OpenBLAS.
os.environ["OPENBLAS_NUM_THREADS"] = "1"
os.environ["OMP_NUM_THREADS"] = "1"
os.environ["MKL_NUM_THREADS"] = "1"

import argparse  # noqa: E402
import statistics  # noqa: E402
import subprocess  # noqa: E402
import sys  # noqa: E402
import time  # noqa: E402

import numpy as np  # noqa: E402
import torch  # noqa: E402

SHAPES = [(16, 64, 4), (64, 64, 4), (128, 128, 4), (256, 256, 8), (512, 256, 8)]


def flops(L, E):
    """8 L E^2 (four projections) + 4 L S E (scores and weighted sum), S = L."""
    return 8.0 * L * E * E + 4.0 * L * L * E


def median_times(fn, min_s):
    """(wall_us, cpu_us) medians per call of fn over ~2 ms samples, for at least min_s seconds."""
    fn()
    inner = 1
    while True:
        t0 = time.perf_counter()
        for _ in range(inner):
            fn()
        if time.perf_counter() - t0 > 2e-3 or inner >= 1 << 16:
            break
        inner *= 2
    wall, cpu = [], []
    start = time.perf_counter()
    while len(wall) < 15 or time.perf_counter() - start < min_s:
        w0, c0 = time.perf_counter_ns(), time.thread_time_ns()
        for _ in range(inner):
            fn()
        cpu.append((time.thread_time_ns() - c0) / 1e3 / inner)
        wall.append((time.perf_counter_ns() - w0) / 1e3 / inner)
    return statistics.median(wall), statistics.median(cpu)


def run_ours(binary, min_ms):
    out = subprocess.run([binary, "--min-ms", str(min_ms)], check=True, capture_output=True, text=True).stdout
    rows, header = {}, ""
    for line in out.splitlines():
        if line.startswith("#"):
            header = line
            continue
        f = line.split()
        if not f or not f[0].isdigit():
            continue
        L, E, H, tile = map(int, f[:4])
        rows[(L, E, H)] = dict(tile=tile, wall=float(f[4]), cpu=float(f[5]), gflops=float(f[6]), arena=int(f[7]))
    return header, rows


def time_torch(L, E, H, min_s):
    torch.manual_seed(0)
    mha = torch.nn.MultiheadAttention(E, H, batch_first=True).eval()
    x = torch.randn(1, L, E)
    with torch.inference_mode():
        return median_times(lambda: mha(x, x, x, need_weights=False), min_s)


def time_sgemm(min_s):
    rng = np.random.default_rng(0)
    a = rng.standard_normal((1024, 1024), dtype=np.float32)
    b = rng.standard_normal((1024, 1024), dtype=np.float32)
    c = np.empty((1024, 1024), dtype=np.float32)
    wall, cpu = median_times(lambda: np.matmul(a, b, out=c), min_s)
    return 2.0 * 1024**3 / (cpu * 1e3), 2.0 * 1024**3 / (wall * 1e3)


def main():
    here = os.path.dirname(os.path.abspath(__file__))
    default_bin = os.path.join(here, "..", "build", "host-release", "tools", "attn_bench_speed")
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--bench", default=default_bin, help="path of attn_bench_speed")
    ap.add_argument("--min-ms", type=float, default=300.0, help="minimum timing per shape and per library")
    args = ap.parse_args()

    torch.set_num_threads(1)
    min_s = args.min_ms / 1e3
    header, ours = run_ours(args.bench, args.min_ms)
    peak_cpu, peak_wall = time_sgemm(min_s)

    print(header)
    print(f"# torch {torch.__version__}, numpy {np.__version__}, threads: torch {torch.get_num_threads()}, "
          f"OPENBLAS_NUM_THREADS={os.environ['OPENBLAS_NUM_THREADS']}")
    print(f"# numpy sgemm 1024^3 (OpenBLAS): {peak_cpu:.1f} GFLOP/s by CPU time, {peak_wall:.1f} by wall time")
    print("# times are medians in microseconds; ratios use thread CPU time (wall-time ratio in brackets)")
    cols = ("L", "E", "H", "tile", "arena_B", "attn_us", "torch_us", "speedup", "target", "attn_GF", "torch_GF",
            "%sgemm", "met")
    print("{:>5} {:>5} {:>3} {:>5} {:>9} {:>9} {:>9} {:>15} {:>7} {:>8} {:>8} {:>7} {:>4}".format(*cols))
    all_met = True
    for (L, E, H) in SHAPES:
        o = ours.get((L, E, H))
        if o is None:
            print(f"{L:5d} {E:5d} {H:3d}  (missing from the bench output)")
            all_met = False
            continue
        t_wall, t_cpu = time_torch(L, E, H, min_s)
        fl = flops(L, E)
        speed, speed_wall = t_cpu / o["cpu"], t_wall / o["wall"]
        pct = 100.0 * o["gflops"] / peak_cpu
        if L <= 16:
            target, met = 8.0, speed >= 8.0
        elif L <= 64:
            target, met = 3.0, speed >= 3.0
        else:
            target, met = 1.3, speed >= 1.3 and pct >= 65.0
        all_met &= met
        tgt = f">={target:g}x" + (",65%" if L >= 128 else "")
        print(f"{L:5d} {E:5d} {H:3d} {o['tile']:5d} {o['arena']:9d} {o['cpu']:9.1f} {t_cpu:9.1f} "
              f"{speed:6.2f}x ({speed_wall:5.2f}x) {tgt:>7} {o['gflops']:8.1f} {fl / t_cpu * 1e-3:8.1f} "
              f"{pct:6.1f}% {'yes' if met else 'NO':>4}")
    print("# all targets met" if all_met else "# some targets NOT met")
    return 0


if __name__ == "__main__":
    sys.exit(main())
