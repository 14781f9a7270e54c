#!/usr/bin/env python3
"""Golden encodings for the tokenizer tests (tests/tokenizer_test.cpp).

From tests/data/tokenizers/licenses.txt (licence texts; every 8th line held
out of training) this writes, into tests/data/tokenizers/:

  spm_bpe.model     a SentencePiece BPE model (vocab 512, byte fallback,
                    identity normalization as Llama's), only with --train
                    (spm_train output differs between versions; the model is
                    committed and everything else is derived from it)
  spm_bpe.golden    the held-out lines and hand-picked cases (UTF-8, emoji
                    through byte fallback, runs of spaces, an empty line),
                    encoded by the sentencepiece Python module
  llama2c.bin       the same model as a llama2.c tokenizer.bin, written as
                    llama2.c's tokenizer export does (U+2581 as ' ', BOS and
                    EOS as "\\n<s>\\n" and "\\n</s>\\n")
  llama2c.golden    the same texts encoded by llama2.c run.c's encode()
                    algorithm, re-implemented below from its published
                    description (greedy: merge the best-scoring adjacent pair,
                    the leftmost on ties, until none is in the vocabulary)

Golden lines: the text as hex, a tab, the ids separated by spaces.

Needs the sentencepiece Python module (Debian: python3-sentencepiece) and,
for --train, spm_train. Not a CI dependency: the outputs are committed and
--check re-derives them and fails on any difference.

  python3 tools/tokenizer/gen_tokenizer_goldens.py [--train] [--check]
"""
import argparse
import os
import struct
import subprocess
import sys
import tempfile

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
DATA = os.path.join(ROOT, "tests", "data", "tokenizers")
CORPUS = os.path.join(DATA, "licenses.txt")
MODEL = os.path.join(DATA, "spm_bpe.model")

HELD_OUT_EVERY = 8

# Texts the held-out licence lines do not cover.
EXTRA = [
    "",
    " ",
    "   ",
    "Hello world",
    " leading space",
    "trailing space ",
    "runs  of   spaces    between     words",
    "tab\tseparated\tfields",
    "Gr\u00fc\u00dfe aus M\u00fcnchen, na\u00efve caf\u00e9 \u2014 r\u00e9sum\u00e9",
    "\u65e5\u672c\u8a9e\u306e\u30c6\u30ad\u30b9\u30c8\u3068 English",
    "emoji \U0001F389\U0001F680 fall back to bytes \U0001F600",
    "\u0645\u0631\u062d\u0628\u0627 \u05e9\u05dc\u05d5\u05dd \u041f\u0440\u0438\u0432\u0435\u0442",
    "Copyright (c) 2004-2024, \"quoted\" <angle> [brackets] {braces} #1 $2 %3 ^&*",
    "THE SOFTWARE IS PROVIDED \"AS IS\", WITHOUT WARRANTY OF ANY KIND",
    "aaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaa",
    "abababababababababababababababababababababababababababababab",
    "0123456789 3.14159 1e-10",
]


def corpus_lines():
    with open(CORPUS, encoding="utf-8") as f:
        return f.read().split("\n")


def split_corpus():
    lines = corpus_lines()
    train = [l for i, l in enumerate(lines) if i % HELD_OUT_EVERY != HELD_OUT_EVERY - 1]
    held = [l for i, l in enumerate(lines) if i % HELD_OUT_EVERY == HELD_OUT_EVERY - 1 and l.strip()]
    return train, held


def train():
    train_lines, _ = split_corpus()
    with tempfile.TemporaryDirectory() as tmp:
        path = os.path.join(tmp, "train.txt")
        with open(path, "w", encoding="utf-8") as f:
            f.write("\n".join(l for l in train_lines if l.strip()) + "\n")
        prefix = os.path.join(tmp, "spm_bpe")
        subprocess.run(["spm_train", "--input=" + path, "--model_prefix=" + prefix, "--model_type=bpe",
                        "--vocab_size=512", "--byte_fallback=true", "--character_coverage=1.0",
                        "--normalization_rule_name=identity", "--remove_extra_whitespaces=false",
                        "--add_dummy_prefix=true", "--num_threads=1", "--minloglevel=2"], check=True)
        with open(prefix + ".model", "rb") as f:
            data = f.read()
    with open(MODEL, "wb") as f:
        f.write(data)


def golden_texts():
    _, held = split_corpus()
    return held + EXTRA


def golden_line(text, ids):
    return text.encode("utf-8").hex() + "\t" + " ".join(str(i) for i in ids) + "\n"


# ---------------------------------------------------------------- llama2.c ---

def llama2c_vocab(sp):
    """The pieces and scores as llama2.c's tokenizer export writes them."""
    pieces, scores = [], []
    for i in range(sp.get_piece_size()):
        t = sp.id_to_piece(i)
        if i == sp.bos_id():
            t = "\n<s>\n"
        elif i == sp.eos_id():
            t = "\n</s>\n"
        t = t.replace("\u2581", " ")
        pieces.append(t.encode("utf-8"))
        scores.append(sp.get_score(i))
    return pieces, scores


def llama2c_bin(pieces, scores):
    out = [struct.pack("<i", max(len(p) for p in pieces))]
    for p, s in zip(pieces, scores):
        out.append(struct.pack("<fi", s, len(p)) + p)
    return b"".join(out)


def llama2c_encode(pieces, scores, text):
    """run.c encode(): dummy prefix, per-character lookup with byte fallback
    (byte + 3), then greedy merges of the best-scoring pair."""
    lookup = {p: i for i, p in enumerate(pieces)}
    # run.c's scores are float32 (struct round trip), as in the file.
    f32 = [struct.unpack("<f", struct.pack("<f", s))[0] for s in scores]
    data = text.encode("utf-8")
    tokens = []
    if data:
        tokens.append(lookup[b" "])
    buf = b""
    for i, c in enumerate(data):
        if c & 0xC0 != 0x80:
            buf = b""
        buf += bytes([c])
        nxt = data[i + 1] if i + 1 < len(data) else 0
        if nxt & 0xC0 == 0x80 and len(buf) < 4:
            continue
        if buf in lookup:
            tokens.append(lookup[buf])
        else:
            tokens.extend(b + 3 for b in buf)
        buf = b""
    while True:
        best_score, best_id, best_idx = -1e10, -1, -1
        for i in range(len(tokens) - 1):
            merged = pieces[tokens[i]] + pieces[tokens[i + 1]]
            j = lookup.get(merged, -1)
            if j != -1 and f32[j] > best_score:
                best_score, best_id, best_idx = f32[j], j, i
        if best_idx == -1:
            break
        tokens[best_idx:best_idx + 2] = [best_id]
    return tokens


# ------------------------------------------------------------------- main ---

def derive():
    """Every derived file's name and bytes, from the committed model."""
    import sentencepiece as spm
    sp = spm.SentencePieceProcessor(model_file=MODEL)
    texts = golden_texts()
    spm_lines, l2c_lines = [], []
    pieces, scores = llama2c_vocab(sp)
    same = 0
    for text in texts:
        ids = sp.encode(text)
        if sp.decode(ids) != text:
            raise SystemExit("sentencepiece does not round-trip %r" % text)
        spm_lines.append(golden_line(text, ids))
        l2c = llama2c_encode(pieces, scores, text)
        l2c_lines.append(golden_line(text, l2c))
        same += l2c == ids
    print("%d golden texts; llama2.c's encode agrees with sentencepiece on %d" % (len(texts), same))
    return {
        "spm_bpe.golden": "".join(spm_lines).encode("utf-8"),
        "llama2c.bin": llama2c_bin(pieces, scores),
        "llama2c.golden": "".join(l2c_lines).encode("utf-8"),
    }


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--train", action="store_true", help="retrain spm_bpe.model with spm_train first")
    ap.add_argument("--check", action="store_true", help="re-derive and compare, write nothing")
    args = ap.parse_args()
    if args.train and args.check:
        raise SystemExit("--train and --check exclude each other")
    if args.train:
        train()
    files = derive()
    bad = 0
    for name, data in files.items():
        path = os.path.join(DATA, name)
        if args.check:
            with open(path, "rb") as f:
                if f.read() != data:
                    print("differs: tests/data/tokenizers/" + name)
                    bad += 1
        else:
            with open(path, "wb") as f:
                f.write(data)
    if args.check:
        print("check: %s" % ("FAILED" if bad else "ok"))
    return 1 if bad else 0


if __name__ == "__main__":
    sys.exit(main())
