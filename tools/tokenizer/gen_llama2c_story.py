#!/usr/bin/env python3
"""A llama2.c checkpoint that uses the committed tokenizer, and what
llama2.c's run.c prints for it (tests/cli_text_test.cpp).

Writes, into tests/data/tokenizers/:

  story.bin       a llama2.c checkpoint (legacy version 0 layout: seven int32,
                  then run.c's weight order with its freq_cis tables) with the
                  vocabulary of llama2c.bin (512 pieces): dim 32, hidden 96,
                  2 layers, 4 heads (2 K/V heads), 64 positions, untied
                  classifier; weights from Python's random.Random(seed), the
                  classifier rows of the byte pieces, <unk> and EOS 0 (where
                  run.c and attn print different things: below)
  story.v1.bin    the same weights in llama2.c's version 1 export layout
                  (export.py --version 1: the "ak42" header, another order,
                  no freq_cis), which attn import must read to the same model
  tiny_story.bin  a tiny checkpoint of the same vocabulary (dim 8, 1 layer,
                  16 positions, tied), imported with the tokenizer into
                  tiny_story.attn (by the test that checks it stays what
                  `attn import` writes): a small fuzzing seed with a
                  tokenizer section
  story.runc      for each prompt: a line "prompt<TAB>steps", then run.c's
                  standard output for
                  `run story.bin -z llama2c.bin -t 0 -n steps -i prompt`
                  as hex on the next line. run.c counts the prompt in its
                  steps: `attn generate --steps` takes steps - P + 1 (P: the
                  prompt's tokens with BOS) for the same tokens.

The checkpoint is generated without run.c; the run.c output needs it: pass
--runc PATH to llama2.c's run.c (it is compiled here with cc -O2 -lm).
--check re-derives everything and fails on any difference (the .bin files
without --runc).

  python3 tools/tokenizer/gen_llama2c_story.py [--runc PATH/run.c] [--check]
"""
import argparse
import os
import random
import struct
import subprocess
import sys
import tempfile

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
DATA = os.path.join(ROOT, "tests", "data", "tokenizers")
TOKENIZER = os.path.join(DATA, "llama2c.bin")

DIM, HIDDEN, LAYERS, HEADS, KV_HEADS, VOCAB, SEQ = 32, 96, 2, 4, 2, 512, 64
TINY = dict(dim=8, hidden=16, layers=1, heads=2, seq=16)  # tiny_story.bin: a fuzzing seed
SEED = 20261206
PROMPTS = [("Once upon a time", 40), ("The licence", 30), ("Copyright (c) the authors", 64)]


def byte_piece_ids():
    """Ids of the tokenizer's <0xHH> pieces."""
    with open(TOKENIZER, "rb") as f:
        data = f.read()
    at, ids = 4, []
    for i in range(VOCAB):
        _, n = struct.unpack_from("<fi", data, at)
        piece = data[at + 8:at + 8 + n]
        at += 8 + n
        if len(piece) == 6 and piece.startswith(b"<0x") and piece.endswith(b">"):
            ids.append(i)
    return ids


def weights():
    """Every tensor of the model, by name, as flat float lists (PyTorch [out, in])."""
    rng = random.Random(SEED)
    head = DIM // HEADS
    kvd = KV_HEADS * head

    def mat(rows, cols, scale):
        return [rng.gauss(0.0, scale) for _ in range(rows * cols)]

    def norm():
        return [1.0 + rng.uniform(-0.2, 0.2) for _ in range(DIM)]

    w = {"emb": mat(VOCAB, DIM, 1.0), "cls": mat(VOCAB, DIM, 0.6), "final": norm()}
    # A random model would pick byte pieces that spell no UTF-8 character,
    # which run.c drops and attn writes as U+FFFD, <unk> (id 0: run.c prints
    # "<unk>", attn SentencePiece's " \u2047 ") and EOS (id 2: run.c prints
    # its piece, attn ends the text): their classifier rows are 0, so their
    # logits (0) lose to the text pieces'. A trained model spells text.
    for i in [0, 2] + byte_piece_ids():
        w["cls"][i * DIM:(i + 1) * DIM] = [0.0] * DIM
    for l in range(LAYERS):
        w["att%d" % l] = norm()
        w["ffn%d" % l] = norm()
        w["wq%d" % l] = mat(DIM, DIM, 0.4)
        w["wk%d" % l] = mat(kvd, DIM, 0.4)
        w["wv%d" % l] = mat(kvd, DIM, 0.4)
        w["wo%d" % l] = mat(DIM, DIM, 0.3)
        w["w1%d" % l] = mat(HIDDEN, DIM, 0.3)
        w["w2%d" % l] = mat(DIM, HIDDEN, 0.2)
        w["w3%d" % l] = mat(HIDDEN, DIM, 0.3)
    return w


def tiny_checkpoint():
    """A tiny version 0 checkpoint (tied classifier) with the same vocabulary."""
    rng = random.Random(SEED + 1)
    t = TINY
    d, h, heads = t["dim"], t["hidden"], t["heads"]
    n = VOCAB * d + t["layers"] * (d + 4 * d * d + d + 3 * h * d) + d + t["seq"] * (d // heads)
    header = struct.pack("<7i", d, h, t["layers"], heads, heads, VOCAB, t["seq"])
    return header + floats([round(rng.uniform(-1.0, 1.0), 3) for _ in range(n)])


def floats(values):
    return struct.pack("<%df" % len(values), *values)


def checkpoint_v0(w):
    head = DIM // HEADS
    out = [struct.pack("<7i", DIM, HIDDEN, LAYERS, HEADS, KV_HEADS, -VOCAB, SEQ), floats(w["emb"])]
    for kind in ("att", "wq", "wk", "wv", "wo", "ffn", "w1", "w2", "w3"):
        for l in range(LAYERS):
            out.append(floats(w["%s%d" % (kind, l)]))
    out.append(floats(w["final"]))
    out.append(floats([0.0] * (SEQ * head)))  # freq_cis_real, freq_cis_imag (run.c ignores them)
    out.append(floats(w["cls"]))
    return b"".join(out)


def checkpoint_v1(w):
    header = struct.pack("<Ii7iB", 0x616B3432, 1, DIM, HIDDEN, LAYERS, HEADS, KV_HEADS, VOCAB, SEQ, 0)
    out = [header + b"\0" * (256 - len(header))]
    for kind in ("att", "ffn"):
        for l in range(LAYERS):
            out.append(floats(w["%s%d" % (kind, l)]))
    out.append(floats(w["final"]))
    out.append(floats(w["emb"]))
    for kind in ("wq", "wk", "wv", "wo", "w1", "w2", "w3"):
        for l in range(LAYERS):
            out.append(floats(w["%s%d" % (kind, l)]))
    out.append(floats(w["cls"]))
    return b"".join(out)


def runc_outputs(runc_src):
    """run.c's standard output for each prompt, greedy, with the committed tokenizer."""
    with tempfile.TemporaryDirectory() as tmp:
        exe = os.path.join(tmp, "run")
        subprocess.check_call(["cc", "-O2", "-o", exe, runc_src, "-lm"])
        model = os.path.join(tmp, "story.bin")
        with open(model, "wb") as f:
            f.write(checkpoint_v0(weights()))
        lines = []
        for prompt, steps in PROMPTS:
            out = subprocess.run([exe, model, "-z", TOKENIZER, "-t", "0", "-n", str(steps), "-i", prompt],
                                 check=True, capture_output=True).stdout
            lines.append((prompt, steps, out))
        return lines


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--runc", help="llama2.c's run.c, to (re)write story.runc")
    ap.add_argument("--check", action="store_true", help="compare with the committed files instead of writing")
    args = ap.parse_args()
    w = weights()
    files = {"story.bin": checkpoint_v0(w), "story.v1.bin": checkpoint_v1(w), "tiny_story.bin": tiny_checkpoint()}
    if args.runc:
        text = "".join("%s\t%d\n%s\n" % (p, n, out.hex()) for p, n, out in runc_outputs(args.runc))
        files["story.runc"] = text.encode()
    bad = False
    for name, data in files.items():
        path = os.path.join(DATA, name)
        if not args.check:
            with open(path, "wb") as f:
                f.write(data)
            continue
        with open(path, "rb") as f:
            if f.read() != data:
                print("differs: " + path)
                bad = True
    if bad:
        sys.exit(1)
    print("ok" if args.check else "wrote " + DATA)


if __name__ == "__main__":
    main()
