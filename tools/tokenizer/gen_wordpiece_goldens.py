#!/usr/bin/env python3
"""WordPiece (BERT) golden encodings for tests/tokenizer_wordpiece_test.cpp.

The reference below is BERT's BasicTokenizer + WordpieceTokenizer written
from their published description (no transformers library):

  basic      clean the text (drop NUL, U+FFFD and Cc/Cf controls except
             \\t \\n \\r; Zs and \\t \\n \\r become ' '), put spaces around CJK
             ideographs (BERT's _is_chinese_char ranges), split on
             whitespace (str.split()), per token str.lower() then NFD with
             Mn dropped when uncased, then split off every punctuation
             character (Unicode P*, ASCII 33-47, 58-64, 91-96, 123-126)
  wordpiece  per token: [UNK] if it has more than max_input_chars_per_word
             characters, else greedy longest match first, "##" before every
             piece but the first; [UNK] for the whole token if some position
             matches nothing
  decode     "##x" joins the text before it without "##"; any other piece
             gets one space before it unless it is the first

The vocabulary is built from tests/data/tokenizers/licenses.txt (every 8th
line held out): special tokens, every character seen (bare and "##"), the
frequent words (cased and lowercased) and their frequent prefixes and "##"
suffixes. Any vocabulary serves: what the goldens test is that the C++
encoder is exactly this algorithm.

Writes into tests/data/tokenizers/:
  wordpiece_uncased/vocab.txt        the vocabulary, no config beside it
                                     (read as uncased, BERT's default)
  wordpiece_uncased/tokenizer.json   the same as a tokenizers file:
                                     BertNormalizer lowercase, strip_accents null
  wordpiece_cased/vocab.txt          the same vocabulary, and
  wordpiece_cased/tokenizer_config.json  {"do_lower_case": false}
  wordpiece_cased/tokenizer.json     BertNormalizer lowercase false
  wordpiece_variant/tokenizer.json   lowercase without stripping accents, no
                                     CJK split, no cleaning, 20 characters
                                     a word at most
  wordpiece_{uncased,cased,variant}.golden  (held-out lines, hand-picked
      cases, and 100 seeded random texts over U+0000..U+2FFFF)
      per line: the text as hex, a tab, the ids, a tab, the decoded text as hex

  python3 tools/tokenizer/gen_wordpiece_goldens.py [--check]
"""
import argparse
import collections
import json
import os
import random
import sys
import unicodedata

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
DATA = os.path.join(ROOT, "tests", "data", "tokenizers")
CORPUS = os.path.join(DATA, "licenses.txt")
HELD_OUT_EVERY = 8

SPECIALS = ["[PAD]", "[UNK]", "[CLS]", "[SEP]", "[MASK]"]

# ------------------------------------------------------------ reference ---


def is_whitespace(ch):
    return ch in " \t\n\r" or unicodedata.category(ch) == "Zs"


def is_control(ch):
    if ch in "\t\n\r":
        return False
    return unicodedata.category(ch) in ("Cc", "Cf")


def is_punctuation(ch):
    cp = ord(ch)
    if 33 <= cp <= 47 or 58 <= cp <= 64 or 91 <= cp <= 96 or 123 <= cp <= 126:
        return True
    return unicodedata.category(ch).startswith("P")


def is_chinese_char(cp):
    return (0x4E00 <= cp <= 0x9FFF or 0x3400 <= cp <= 0x4DBF or 0x20000 <= cp <= 0x2A6DF
            or 0x2A700 <= cp <= 0x2B73F or 0x2B740 <= cp <= 0x2B81F or 0x2B820 <= cp <= 0x2CEAF
            or 0xF900 <= cp <= 0xFAFF or 0x2F800 <= cp <= 0x2FA1F)


def clean_text(text):
    out = []
    for ch in text:
        cp = ord(ch)
        if cp == 0 or cp == 0xFFFD or is_control(ch):
            continue
        out.append(" " if is_whitespace(ch) else ch)
    return "".join(out)


def tokenize_chinese_chars(text):
    return "".join(" %s " % ch if is_chinese_char(ord(ch)) else ch for ch in text)


def strip_accents(text):
    return "".join(ch for ch in unicodedata.normalize("NFD", text) if unicodedata.category(ch) != "Mn")


def split_on_punc(text):
    out = []
    start_new = True
    for ch in text:
        if is_punctuation(ch):
            out.append([ch])
            start_new = True
        else:
            if start_new:
                out.append([])
            start_new = False
            out[-1].append(ch)
    return ["".join(x) for x in out]


def basic_tokenize(text, opt):
    if opt["clean_text"]:
        text = clean_text(text)
    if opt["chinese"]:
        text = tokenize_chinese_chars(text)
    tokens = []
    for token in text.strip().split():
        if opt["lowercase"]:
            token = token.lower()
        if opt["strip_accents"]:
            token = strip_accents(token)
        tokens.extend(split_on_punc(token))
    return " ".join(tokens).strip().split()


def wordpiece_tokenize(tokens, vocab, opt):
    out = []
    for token in tokens:
        chars = list(token)
        if len(chars) > opt["max_chars"]:
            out.append("[UNK]")
            continue
        pieces, start, bad = [], 0, False
        while start < len(chars):
            end, cur = len(chars), None
            while start < end:
                sub = "".join(chars[start:end])
                if start > 0:
                    sub = "##" + sub
                if sub in vocab:
                    cur = sub
                    break
                end -= 1
            if cur is None:
                bad = True
                break
            pieces.append(cur)
            start = end
        out.extend(["[UNK]"] if bad else pieces)
    return out


def encode(text, vocab, opt):
    return [vocab[p] for p in wordpiece_tokenize(basic_tokenize(text, opt), vocab, opt)]


def decode(ids, pieces):
    out = ""
    for i, t in enumerate(pieces[k] for k in ids):
        if t.startswith("##"):
            out += t[2:]
        elif i == 0:
            out += t
        else:
            out += " " + t
    return out


# ----------------------------------------------------------- vocabulary ---


def corpus_lines():
    with open(CORPUS, encoding="utf-8") as f:
        return f.read().split("\n")


def split_corpus():
    lines = corpus_lines()
    train = [l for i, l in enumerate(lines) if i % HELD_OUT_EVERY != HELD_OUT_EVERY - 1]
    held = [l for i, l in enumerate(lines) if i % HELD_OUT_EVERY == HELD_OUT_EVERY - 1 and l.strip()]
    return train, held


# A few characters beyond the licence texts and printable ASCII, so that
# accents, CJK, Hangul and Greek reach the vocabulary (cased and uncased forms).
EXTRA_CHARS = ("éèàüöäßçñíóáÉÜÖÄ中文日本語测试한국αβγδεοσςΣΟΔ"
               " \U0001D165 \U0001D16D \u302E \u1715 \U0001D15F")


def build_vocab():
    train, _ = split_corpus()
    cased = dict(lowercase=False, strip_accents=False, chinese=True, clean_text=True)
    uncased = dict(lowercase=True, strip_accents=True, chinese=True, clean_text=True)
    words = collections.Counter()
    for line in train:
        for opt in (cased, uncased):
            words.update(basic_tokenize(line, opt))
    chars = set("".join(words)) | {chr(c) for c in range(33, 127)}
    for opt in (cased, uncased):
        chars |= set("".join(basic_tokenize(EXTRA_CHARS, opt)))
    vocab = list(SPECIALS)
    seen = set(vocab)

    def add(p):
        if p not in seen:
            seen.add(p)
            vocab.append(p)

    for c in sorted(chars):
        add(c)
    for c in sorted(chars):
        add("##" + c)
    ranked = sorted(words.items(), key=lambda kv: (-kv[1], kv[0]))
    for w, _ in ranked[:400]:
        add(w)
    prefixes, suffixes = collections.Counter(), collections.Counter()
    for w, n in words.items():
        for k in range(2, min(len(w), 6)):
            prefixes[w[:k]] += n
            suffixes["##" + w[-k:]] += n
    for table, count in ((prefixes, 150), (suffixes, 250)):
        for p, _ in sorted(table.items(), key=lambda kv: (-kv[1], kv[0]))[:count]:
            add(p)
    return vocab


# ---------------------------------------------------------------- texts ---

EXTRA_TEXTS = [
    "",
    " ",
    "\t\n  \r\n",
    "Hello world",
    "Hello, World! How's it going?",
    "THE SOFTWARE IS PROVIDED \"AS IS\", WITHOUT WARRANTY OF ANY KIND",
    "Copyright (c) 2004-2024, \"quoted\" <angle> [brackets] {braces} #1 $2 %3 ^&*~`|\\@",
    "Gr\u00fc\u00dfe aus M\u00fcnchen, na\u00efve caf\u00e9 \u2014 r\u00e9sum\u00e9 \u00c9COLE",
    "decomposed: cafe\u0301 e\u0301te\u0301 \u0301alone",
    "\u65e5\u672c\u8a9e\u306e\u30c6\u30ad\u30b9\u30c8\u3068 English",
    "\u4e2d\u6587\u6d4b\u8bd5abc\u4e2d\u6587",
    "compatibility ideographs \uf900\uf901 and \U0002f800",
    "\ud55c\uad6d\uc5b4 \ud14d\uc2a4\ud2b8",
    "emoji \U0001F389\U0001F680 are unknown \U0001F600!",
    "\u039f\u0394\u039f\u03a3. \u03a3\u0391\u03a3 \u03a3 \u0391\u03a3'\u0392 \u03b1\u03a3\u0301 \u039f\u03a3\u0391",
    "\u0130stanbul \u0130 I\u0307",
    "controls:\x00a\x01b\x7fc\u200bd\ufffde\x85f\u2028g\x0bh\u00a0i\u3000j",
    "a" * 100,
    "a" * 101,
    "ab" * 60 + " short",
    "permission" * 11,
    "don't can't won't it's",
    "0123456789 3.14159 1e-10 v2.0.1",
    "[CLS] literal special [SEP] tokens [MASK] ## #hash ###",
    "tab\tseparated\tfields\nand\nlines",
    "under_score snake_case kebab-case CamelCase",
    "unspellable \u0416\u0416\u0416 word and \u00bfqu\u00e9? \u00a1s\u00ed!",
    "\u2018curly\u2019 \u201cquotes\u201d \u2026 \u00b7 \u00a7 \u00b6 \u00ab\u00bb",
    # Non-Mn combining marks, which NFD puts in canonical order and
    # stripping keeps: reordered, across a Mn of class 230, not across a Mn
    # starter (U+0900) or a decomposed note (U+1D15F = U+1D158 U+1D165).
    "x\U0001D16D\U0001D165 x\U0001D16D\u0300\U0001D165 x\U0001D16D\u0900\U0001D165 "
    "x\u302E\u1715\U0001D165 \U0001D16D\U0001D15F\U0001D16D\U0001D165",
]


# Random texts (seeded): the units above mixed with code points from all of
# U+0000..U+2FFFF, so that every table meets characters no one picked.
RANDOM_UNITS = ["a", "\u03a3", "\u0301", "\U0001D16D", "\U0001D165", " ", ".", "\u0130", "\ud55c", "\u4e2d", "#",
                "the", "\x00", "\ufffd", "x", "\u0900", "'", "\u00c9", "e", "\u2028", "\x85", "\u200b", "\u3000",
                "\t", "I", "license", "##"]


def random_texts(count=100, seed=1):
    rng = random.Random(seed)
    texts = []
    for _ in range(count):
        parts = []
        for _ in range(rng.randrange(0, 60)):
            r = rng.random()
            if r < 0.5:
                parts.append(rng.choice(RANDOM_UNITS))
                continue
            c = rng.randrange(0, 0x3000 if r < 0.8 else 0x30000)
            if not 0xD800 <= c < 0xE000:
                parts.append(chr(c))
        texts.append("".join(parts))
    return texts


def golden_texts():
    _, held = split_corpus()
    return held + EXTRA_TEXTS + random_texts()


CONFIGS = {
    "uncased": dict(lowercase=True, strip_accents=True, chinese=True, clean_text=True, max_chars=100),
    "cased": dict(lowercase=False, strip_accents=False, chinese=True, clean_text=True, max_chars=100),
    "variant": dict(lowercase=True, strip_accents=False, chinese=False, clean_text=False, max_chars=20),
}


def tokenizer_json(vocab, opt):
    """A tokenizers tokenizer.json as BERT's are written."""
    added = [{"id": vocab.index(s), "content": s, "single_word": False, "lstrip": False, "rstrip": False,
              "normalized": False, "special": True} for s in SPECIALS]
    strip = None if opt["strip_accents"] == opt["lowercase"] else opt["strip_accents"]
    doc = {
        "version": "1.0",
        "truncation": None,
        "padding": None,
        "added_tokens": added,
        "normalizer": {"type": "BertNormalizer", "clean_text": opt["clean_text"],
                       "handle_chinese_chars": opt["chinese"], "strip_accents": strip,
                       "lowercase": opt["lowercase"]},
        "pre_tokenizer": {"type": "BertPreTokenizer"},
        "post_processor": None,
        "decoder": {"type": "WordPiece", "prefix": "##", "cleanup": True},
        "model": {"type": "WordPiece", "unk_token": "[UNK]", "continuing_subword_prefix": "##",
                  "max_input_chars_per_word": opt["max_chars"],
                  "vocab": {p: i for i, p in enumerate(vocab)}},
    }
    return (json.dumps(doc, ensure_ascii=False, indent=2) + "\n").encode("utf-8")


def golden(vocab, opt):
    index = {p: i for i, p in enumerate(vocab)}
    lines = []
    for text in golden_texts():
        ids = encode(text, index, opt)
        out = decode(ids, vocab)
        lines.append("%s\t%s\t%s\n" % (text.encode("utf-8").hex(), " ".join(map(str, ids)),
                                       out.encode("utf-8").hex()))
    return "".join(lines).encode("utf-8")


def self_checks():
    """Facts the C++ encoder relies on, in this Python's Unicode."""
    for cp in range(0x110000):
        if 0xD800 <= cp < 0xE000:
            continue
        ch = chr(cp)
        if is_chinese_char(cp) and (ch.lower() != ch or ch.upper() != ch or ch.istitle()):
            raise SystemExit("CJK U+%04X is cased" % cp)
        if ch.isspace() and unicodedata.category(ch) == "Cc" and not (
                0x09 <= cp <= 0x0D or 0x1C <= cp <= 0x1F or cp == 0x85):
            raise SystemExit("unexpected white-space control U+%04X" % cp)


def derive():
    self_checks()
    vocab = build_vocab()
    vocab_txt = ("\n".join(vocab) + "\n").encode("utf-8")
    files = {
        "wordpiece_uncased/vocab.txt": vocab_txt,
        "wordpiece_uncased/tokenizer.json": tokenizer_json(vocab, CONFIGS["uncased"]),
        "wordpiece_cased/vocab.txt": vocab_txt,
        "wordpiece_cased/tokenizer_config.json": b'{\n  "do_lower_case": false\n}\n',
        "wordpiece_cased/tokenizer.json": tokenizer_json(vocab, CONFIGS["cased"]),
        "wordpiece_variant/tokenizer.json": tokenizer_json(vocab, CONFIGS["variant"]),
    }
    for name, opt in CONFIGS.items():
        files["wordpiece_%s.golden" % name] = golden(vocab, opt)
    print("%d pieces, %d golden texts" % (len(vocab), len(golden_texts())))
    return files


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--check", action="store_true", help="re-derive and compare, write nothing")
    args = ap.parse_args()
    bad = 0
    for name, data in derive().items():
        path = os.path.join(DATA, name)
        if args.check:
            try:
                with open(path, "rb") as f:
                    same = f.read() == data
            except OSError:
                same = False
            if not same:
                print("differs: tests/data/tokenizers/" + name)
                bad += 1
        else:
            os.makedirs(os.path.dirname(path), exist_ok=True)
            with open(path, "wb") as f:
                f.write(data)
    if args.check:
        print("check: %s" % ("FAILED" if bad else "ok"))
    return 1 if bad else 0


if __name__ == "__main__":
    sys.exit(main())
