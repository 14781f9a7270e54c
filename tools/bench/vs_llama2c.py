#!/usr/bin/python3
"""attn generate against llama2.c's run.c (and runq.c) on the same random model, whole processes.

Writes, into a temporary directory, a seeded random llama2.c checkpoint of the
given shape (default stories15M's: dim 288, hidden 768, 6 layers, 6 heads, 6
K/V heads, vocab 32000, 256 positions; the legacy version 0 layout run.c
reads: seven int32, then float32 weights in run.c's order; vocab_size
positive: the classifier is the embedding) and a llama2.c tokenizer.bin of
that vocabulary (made up: <unk>, BOS, EOS, the 256 byte pieces, printable
ASCII characters, then merges of those with falling scores). Then:

  attn import model.bin --tokenizer tokenizer.bin -o f32.attn
  attn quantize f32.attn --calib-tokens calib.npy --dtype s8 -o s8.attn
  attn quantize f32.attn --calib-tokens calib.npy --dtype s8 --weights s4 --s4 all -o s4.attn

With --llama2c DIR (a llama2.c checkout) it compiles DIR/run.c, and DIR/runq.c
with a Q8_0 checkpoint written here (export.py --version 2's layout and
group size, without PyTorch), as `cc -Ofast -march=native -o ... run.c -lm`; it
checks that run.c and `attn generate` (f32) print the same text for the
prompt, greedy, and then times whole processes, interleaved over --rounds
rounds (the order rotates each round): run.c, runq.c, attn f32, attn s8, attn s4 (at
each --threads count), each running --steps positions (the prompt's tokens included, as run.c counts
them: attn generate --steps STEPS - P + 1), one thread, temperature 0, then
each running the prompt and one token (run.c -n P, attn generate --steps 1:
start-up, load and the first token). Prints per program the medians of the
whole processes' wall ms and CPU ms (user + sys: on a shared machine the
steadier of the two), tokens/s (positions / wall), attn / run.c, and attn
generate's phases (ATTN_RUN_TIMES=1: load, setup, first token, next
tokens). Without --llama2c only attn is timed.

It fetches nothing; numpy writes the model (Debian's python3 has it). A benchmark, not a test: the
machine's load moves every figure, so take medians over several rounds.

  /usr/bin/python3 tools/bench/vs_llama2c.py [--llama2c DIR] [--attn build/host-release/tools/attn]
      [--shape DIM HIDDEN LAYERS HEADS KV_HEADS VOCAB SEQ] [--rounds 7] [--steps 128]
      [--prompt TEXT] [--threads N ...] [--keep DIR]

--threads 1 2 also times attn at two threads (wall time is then the figure:
CPU time adds up both cores).
"""
import argparse
import os
import resource
import shutil
import statistics
import struct
import subprocess
import sys
import tempfile
import time

import numpy as np

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
STORIES15M = (288, 768, 6, 6, 6, 32000, 256)
SEED = 20261206


def weights(shape, seed):
    """run.c's tensors, by name, float32 numpy arrays ([out, in] matrices)."""
    dim, hidden, layers, heads, kv_heads, vocab, seq = shape
    head = dim // heads
    kv_dim = kv_heads * head
    rng = np.random.default_rng(seed)

    def mat(*shape_, fan_in, gain=1.0):
        return (rng.standard_normal(shape_, dtype=np.float32) * np.float32(gain / np.sqrt(fan_in)))

    def norm(*shape_):
        return (1.0 + rng.uniform(-0.2, 0.2, shape_)).astype(np.float32)

    w = {"emb": rng.standard_normal((vocab, dim), dtype=np.float32)}
    # <unk>, BOS, EOS and the byte pieces (ids 0..258): small rows, so that
    # their logits (the classifier is the embedding) lose to the text
    # pieces'. run.c and attn print those differently (run.c drops bytes
    # that spell no character, attn writes U+FFFD; BOS and EOS end attn's
    # text); a trained model spells text.
    w["emb"][:259] *= np.float32(0.05)
    w["att"] = norm(layers, dim)
    w["wq"] = mat(layers, dim, dim, fan_in=dim, gain=1.5)
    w["wk"] = mat(layers, kv_dim, dim, fan_in=dim, gain=1.5)
    w["wv"] = mat(layers, kv_dim, dim, fan_in=dim)
    w["wo"] = mat(layers, dim, dim, fan_in=dim, gain=3.0)
    w["ffn"] = norm(layers, dim)
    w["w1"] = mat(layers, hidden, dim, fan_in=dim)
    w["w2"] = mat(layers, dim, hidden, fan_in=hidden, gain=3.0)
    w["w3"] = mat(layers, hidden, dim, fan_in=dim)
    w["final"] = norm(dim)
    return w


def checkpoint_v0(shape, w):
    """llama2.c's legacy layout (run.c): seven int32, the tensors, freq_cis (unused by run.c)."""
    dim, hidden, layers, heads, kv_heads, vocab, seq = shape
    head = dim // heads
    parts = [struct.pack("<7i", dim, hidden, layers, heads, kv_heads, vocab, seq)]
    for name in ("emb", "att", "wq", "wk", "wv", "wo", "ffn", "w1", "w2", "w3", "final"):
        parts.append(w[name].astype("<f4").tobytes())
    parts.append(np.zeros(seq * head, dtype="<f4").tobytes())  # freq_cis_real, freq_cis_imag
    return b"".join(parts)


def group_size(dim):
    """export.py --version 2's Q8_0 group: 64, halved until it divides dim (runq.c's rows are
    dim or hidden long and are multiplied group by group)."""
    g = 64
    while dim % g:
        g //= 2
    return g


def q80(a, group):
    """export.py's quantize_q80: int8 values and one float32 scale per `group` values."""
    g = a.reshape(-1, group).astype(np.float32)
    scale = np.abs(g).max(axis=1) / np.float32(127.0)
    q = np.round(g / scale[:, None]).astype(np.int8)
    return q.tobytes() + scale.astype("<f4").tobytes()


def checkpoint_q80(shape, w):
    """export.py --version 2 (runq.c): "ak42", version 2, the config, shared flag, group size;
    the norms in float32, then each matrix (per layer) as int8 values and their scales."""
    dim, hidden, layers, heads, kv_heads, vocab, seq = shape
    group = group_size(dim)
    header = struct.pack("<Ii7iBi", 0x616B3432, 2, dim, hidden, layers, heads, kv_heads, vocab, seq, 1, group)
    parts = [header + b"\0" * (256 - len(header))]
    for name in ("att", "ffn", "final"):
        parts.append(w[name].astype("<f4").tobytes())
    parts.append(q80(w["emb"], group))
    for name in ("wq", "wk", "wv", "wo", "w1", "w2", "w3"):
        for layer in w[name]:
            parts.append(q80(layer, group))
    return b"".join(parts)


def tokenizer_bin(vocab, seed):
    """A llama2.c tokenizer.bin of `vocab` pieces: <unk>, BOS, EOS, <0x00>..<0xFF>, the
    printable ASCII characters but '<', then pieces made by joining two earlier text
    pieces, with falling scores (the first made merges first, as in BPE)."""
    rng = np.random.default_rng(seed + 1)
    pieces = [b"<unk>", b"\n<s>\n", b"\n</s>\n"] + [b"<0x%02X>" % i for i in range(256)]
    scores = [0.0] * len(pieces)
    chars = [bytes([c]) for c in range(0x20, 0x7F) if c != ord("<")]
    text = list(chars)
    pieces += chars
    scores += [-1e6] * len(chars)
    seen = set(pieces)
    common = chars[:] + [b" "] * 20 + [bytes([c]) for c in b"etaoinshrdlu"] * 4  # a skew towards words
    while len(pieces) < vocab:
        a = text[int(rng.integers(len(text)))] if rng.random() < 0.5 else common[int(rng.integers(len(common)))]
        b = text[int(rng.integers(len(text)))] if rng.random() < 0.3 else common[int(rng.integers(len(common)))]
        p = a + b
        if len(p) > 16 or p in seen:
            continue
        seen.add(p)
        scores.append(-float(len(pieces)))
        pieces.append(p)
        text.append(p)
    max_len = max(len(p) for p in pieces)
    out = [struct.pack("<i", max_len)]
    for p, s in zip(pieces, scores):
        out.append(struct.pack("<fi", s, len(p)) + p)
    return b"".join(out)


def npy_int32(path, a):
    np.save(path, np.ascontiguousarray(a, dtype=np.int32))


def run(cmd, env=None):
    """Wall seconds, stdout, stderr and CPU seconds (user + sys) of one whole process."""
    before = resource.getrusage(resource.RUSAGE_CHILDREN)
    t0 = time.perf_counter()
    p = subprocess.run(cmd, env=env, stdout=subprocess.PIPE, stderr=subprocess.PIPE)
    wall = time.perf_counter() - t0
    after = resource.getrusage(resource.RUSAGE_CHILDREN)
    if p.returncode != 0:
        sys.exit("failed (%d): %s\n%s" % (p.returncode, " ".join(cmd), p.stderr.decode(errors="replace")))
    cpu = after.ru_utime + after.ru_stime - before.ru_utime - before.ru_stime
    return wall, p.stdout, p.stderr.decode(errors="replace"), cpu


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--llama2c", help="a llama2.c checkout (run.c, runq.c): compiled and timed against attn")
    ap.add_argument("--attn", default=os.path.join(ROOT, "build", "host-release", "tools", "attn"))
    ap.add_argument("--shape", type=int, nargs=7, default=list(STORIES15M),
                    metavar=("DIM", "HIDDEN", "LAYERS", "HEADS", "KV_HEADS", "VOCAB", "SEQ"))
    ap.add_argument("--rounds", type=int, default=7)
    ap.add_argument("--steps", type=int, default=128, help="positions per run, the prompt's included")
    ap.add_argument("--prompt", default="Once upon a time")
    ap.add_argument("--seed", type=int, default=SEED)
    ap.add_argument("--threads", type=int, nargs="+", default=[1],
                    help="attn generate --threads N, each N timed (default 1: one thread, as run.c)")
    ap.add_argument("--keep", help="write the files here (kept) instead of a temporary directory")
    args = ap.parse_args()
    shape = tuple(args.shape)
    dim, hidden, layers, heads, kv_heads, vocab, seq = shape
    if dim % heads or heads % kv_heads or vocab < 512 or args.steps > seq:
        sys.exit("bad shape: dim %% heads, heads %% kv_heads must be 0, vocab >= 512, --steps <= seq")

    tmp = args.keep or tempfile.mkdtemp(prefix="attn-vs-llama2c-")
    os.makedirs(tmp, exist_ok=True)
    try:
        bench(args, shape, tmp)
    finally:
        if not args.keep:
            shutil.rmtree(tmp)


def bench(args, shape, tmp):
    dim, hidden, layers, heads, kv_heads, vocab, seq = shape
    path = lambda name: os.path.join(tmp, name)  # noqa: E731
    w = weights(shape, args.seed)
    with open(path("model.bin"), "wb") as f:
        f.write(checkpoint_v0(shape, w))
    with open(path("tokenizer.bin"), "wb") as f:
        f.write(tokenizer_bin(vocab, args.seed))
    calib = np.random.default_rng(args.seed + 2).integers(259, vocab, size=(8, 64))
    npy_int32(path("calib.npy"), calib)
    attn = args.attn
    run([attn, "import", path("model.bin"), "--tokenizer", path("tokenizer.bin"), "-o", path("f32.attn")])
    run([attn, "quantize", path("f32.attn"), "--calib-tokens", path("calib.npy"), "--dtype", "s8",
         "-o", path("s8.attn")])
    run([attn, "quantize", path("f32.attn"), "--calib-tokens", path("calib.npy"), "--dtype", "s8",
         "--weights", "s4", "--s4", "all", "-o", path("s4.attn")])
    ids = run([attn, "tokenize", path("f32.attn"), "--text", args.prompt, "--special"])[1].split()
    P = len(ids)
    attn_steps = args.steps - P + 1
    mb = os.path.getsize(path("model.bin")) / 1e6
    print("shape dim %d hidden %d layers %d heads %d kv_heads %d vocab %d seq %d: model.bin %.1f MB, "
          "f32.attn %.1f MB, s8.attn %.1f MB, s4.attn %.1f MB"
          % (shape + (mb, os.path.getsize(path("f32.attn")) / 1e6, os.path.getsize(path("s8.attn")) / 1e6,
                      os.path.getsize(path("s4.attn")) / 1e6)))
    print("prompt %r: %d tokens with BOS; %d positions per run (attn generate --steps %d), greedy, run.c one thread"
          % (args.prompt, P, args.steps, attn_steps))

    env = dict(os.environ, OMP_NUM_THREADS="1", ATTN_RUN_TIMES="1")
    programs = {}  # name -> (command for --steps positions, command for the prompt and one token)
    if args.llama2c:
        cc = os.environ.get("CC", "cc")
        for src in ("run", "runq"):
            c = os.path.join(args.llama2c, src + ".c")
            if not os.path.exists(c):
                print("no %s: skipped" % c)
                continue
            subprocess.check_call([cc, "-Ofast", "-march=native", "-o", path(src), c, "-lm"])
        if os.path.exists(path("runq")):
            with open(path("q80.bin"), "wb") as f:
                f.write(checkpoint_q80(shape, w))
        for name, exe, model in (("run.c", "run", "model.bin"), ("runq.c", "runq", "q80.bin")):
            if os.path.exists(path(exe)):
                cmd = [path(exe), path(model), "-z", path("tokenizer.bin"), "-t", "0", "-i", args.prompt, "-n"]
                programs[name] = (cmd + [str(args.steps)], cmd + [str(P)])
    for threads in args.threads:
        for dt in ("f32", "s8", "s4"):
            cmd = [attn, "generate", path(dt + ".attn"), "--threads", str(threads), "--prompt", args.prompt,
                   "--steps"]
            name = "attn " + dt + ("" if threads == 1 else " --threads %d" % threads)
            programs[name] = (cmd + [str(attn_steps)], cmd + ["1"])

    # Warm-up (the page cache) and the text check.
    texts = {name: run(cmd[0], env)[1] for name, cmd in programs.items()}
    if "run.c" in texts:
        a, b = texts["run.c"], texts["attn f32"]
        if a == b:
            print("greedy text: run.c and attn f32 print the same %d bytes" % len(a))
        else:
            k = next((i for i in range(min(len(a), len(b))) if a[i] != b[i]), min(len(a), len(b)))
            print("greedy text DIFFERS at byte %d:\n  run.c: %r\n  attn:  %r" % (k, a[max(0, k - 40):k + 40],
                                                                          b[max(0, k - 40):k + 40]))
        if "runq.c" in texts:
            same = texts["runq.c"] == texts["attn s8"]
            print("runq.c and attn s8 text: %s (both quantized, differently: not expected to match)"
                  % ("the same" if same else "different"))

    names = list(programs)
    cells = {n: {k: [] for k in ("wall", "cpu", "first_wall", "first_cpu")} for n in names}
    phases = {n: {} for n in names}  # attn: ATTN_RUN_TIMES's CPU ms per phase
    for r in range(args.rounds):
        order = names[r % len(names):] + names[:r % len(names)]
        for n in order:
            t, _, err, cpu = run(programs[n][0], env)
            cells[n]["wall"].append(t * 1e3)
            cells[n]["cpu"].append(cpu * 1e3)
            if n.startswith("attn"):
                line = err[err.rindex("CPU ms: ") + 8:].splitlines()[0]
                for item in line.split(", "):
                    k, v = item.rsplit(" ", 1)
                    phases[n].setdefault(k, []).append(float(v))
        for n in order:
            t, _, _, cpu = run(programs[n][1], env)
            cells[n]["first_wall"].append(t * 1e3)
            cells[n]["first_cpu"].append(cpu * 1e3)

    med = statistics.median
    base = "run.c" if "run.c" in cells else None
    print("\n%d rounds, medians of whole processes: %d positions (tokens/s: positions / wall), and the "
          "prompt and one token (%d positions: start-up, load, first token); CPU = user + sys"
          % (args.rounds, args.steps, P))
    print("| program | wall ms | CPU ms | tokens/s | / run.c (wall, CPU) | first token: wall ms | CPU ms |")
    print("|---|---|---|---|---|---|---|")
    for n in names:
        c = {k: med(v) for k, v in cells[n].items()}
        ratio = "-"
        if base:
            ratio = "%.2f, %.2f" % (c["wall"] / med(cells[base]["wall"]), c["cpu"] / med(cells[base]["cpu"]))
        print("| %s | %.1f | %.1f | %.1f | %s | %.1f | %.1f |" % (n, c["wall"], c["cpu"], args.steps / c["wall"] * 1e3,
                                                                  ratio, c["first_wall"], c["first_cpu"]))
    for n in names:
        if phases[n]:
            print("%s phases (ATTN_RUN_TIMES=1), CPU ms: %s" % (n, ", ".join("%s %.1f" % (k, med(v))
                                                                             for k, v in phases[n].items())))


if __name__ == "__main__":
    main()
