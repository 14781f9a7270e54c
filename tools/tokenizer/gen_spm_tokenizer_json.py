#!/usr/bin/env python3
"""The committed SentencePiece BPE model as a Hugging Face tokenizer.json.

Llama and Mistral checkpoints on the Hub ship their SentencePiece BPE
tokenizer as a tokenizer.json: model.type "BPE" with "byte_fallback": true,
the vocabulary as {piece: id}, and merges that Hugging Face's converter
(SentencePieceExtractor) derives from the pieces' scores: for each piece,
best score first, every split into two pieces of the vocabulary, as a merge
"left right" (within a piece, ordered by the two ids). This writes that form
of tests/data/tokenizers/llama2c.bin (the same model as spm_bpe.model, written
as llama2.c exports it) to tests/data/tokenizers/spm_bpe.tokenizer.json; the
goldens of spm_bpe.model (spm_bpe.golden) are its goldens too.

Plain Python (no sentencepiece). --check compares with the committed file.

  python3 tools/tokenizer/gen_spm_tokenizer_json.py [--check]
"""
import argparse
import json
import os
import struct
import sys

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
DATA = os.path.join(ROOT, "tests", "data", "tokenizers")
SOURCE = os.path.join(DATA, "llama2c.bin")
OUT = os.path.join(DATA, "spm_bpe.tokenizer.json")
SPECIALS = {"<unk>": 0, "<s>": 1, "</s>": 2}


def pieces_and_scores():
    """llama2.c's tokenizer.bin: int32 max length, then per piece f32 score, int32 length, bytes."""
    with open(SOURCE, "rb") as f:
        data = f.read()
    at, out = 4, []
    while at < len(data):
        score, n = struct.unpack_from("<fi", data, at)
        piece = data[at + 8:at + 8 + n].decode("utf-8")
        at += 8 + n
        # llama2.c spells U+2581 as ' ' and BOS / EOS as "\n<s>\n" / "\n</s>\n".
        piece = piece.strip("\n") if len(out) in (1, 2) else piece.replace(" ", "\u2581")
        out.append((piece, score))
    return out


def tokenizer_json():
    entries = pieces_and_scores()
    vocab = {p: i for i, (p, _) in enumerate(entries)}
    merges = []
    by_score = sorted(range(len(entries)), key=lambda i: -entries[i][1])  # stable: ties in id order
    for i in by_score:
        piece = entries[i][0]
        if piece in SPECIALS or (piece.startswith("<0x") and piece.endswith(">")):
            continue
        local = []
        for k in range(1, len(piece)):
            left, right = piece[:k], piece[k:]
            if left in vocab and right in vocab:
                local.append((vocab[left], vocab[right], left, right))
        merges += ["%s %s" % (l, r) for _, _, l, r in sorted(local)]
    doc = {
        "version": "1.0",
        "added_tokens": [{"id": i, "content": p, "special": True} for p, i in SPECIALS.items()],
        "normalizer": {"type": "Sequence", "normalizers": [
            {"type": "Prepend", "prepend": "\u2581"},
            {"type": "Replace", "pattern": {"String": " "}, "content": "\u2581"}]},
        "pre_tokenizer": None,
        "model": {"type": "BPE", "unk_token": "<unk>", "fuse_unk": True, "byte_fallback": True,
                  "vocab": vocab, "merges": merges},
    }
    return json.dumps(doc, ensure_ascii=False, indent=1) + "\n"


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--check", action="store_true", help="compare with the committed file instead of writing")
    args = ap.parse_args()
    text = tokenizer_json()
    if args.check:
        with open(OUT, encoding="utf-8") as f:
            if f.read() != text:
                print("differs: " + OUT)
                sys.exit(1)
        print("ok")
        return
    with open(OUT, "w", encoding="utf-8") as f:
        f.write(text)
    print("wrote " + OUT)


if __name__ == "__main__":
    main()
