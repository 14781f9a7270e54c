#!/usr/bin/env python3
"""Byte-level BPE (GPT-2, Qwen2) goldens for tests/tokenizer_bbpe_test.cpp.

A reference written from the published descriptions, with no tokenizer
library:
  - GPT-2's encoder.py: bytes_to_unicode() (each byte a printable character,
    so vocab.json and merges.txt are text) and bpe(): repeatedly merge every
    occurrence of the adjacent pair of lowest merge rank, left to right.
  - The pre-tokenizer split, each regex written out by hand with the
    Unicode classes of tools/tokenizer/gen_unicode_tables.py (\\p{L} letter,
    \\p{N} number, \\s white space: str.isspace() less U+001C..U+001F, as the
    `regex` module's \\s):
      GPT-2  's|'t|'re|'ve|'m|'ll|'d| ?\\p{L}+| ?\\p{N}+| ?[^\\s\\p{L}\\p{N}]+|\\s+(?!\\S)|\\s+
      Qwen2  (?i:'s|'t|'re|'ve|'m|'ll|'d)|[^\\r\\n\\p{L}\\p{N}]?\\p{L}+|\\p{N}| ?[^\\s\\p{L}\\p{N}]+[\\r\\n]*|
             \\s*[\\r\\n]+|\\s+(?!\\S)|\\s+
    When the `regex` module is installed, every golden text's split is also
    compared with the regex itself.
  - A tiny byte-level BPE trainer (most frequent pair first, ties by the
    smaller pair) on tests/data/tokenizers/licenses.txt, every 8th line held
    out as gen_tokenizer_goldens.py does.

Writes into tests/data/tokenizers/:
  bbpe_vocab.json, bbpe_merges.txt   GPT-2's file pair (1000 merges)
  bbpe_gpt2.tokenizer.json           the same as a Hugging Face tokenizer.json,
                                     ByteLevel(add_prefix_space) pre-tokenizer,
                                     merges as "a b" strings
  bbpe_qwen2.tokenizer.json          Qwen2's form: Sequence[Split(pattern),
                                     ByteLevel], merges as [a, b] pairs, added
                                     tokens <|im_start|> <|im_end|>
  bbpe_gpt2.golden                   encodings with GPT-2's split
  bbpe_gpt2_prefix.golden            the same with add_prefix_space
  bbpe_qwen2.golden                  encodings with Qwen2's split
Golden lines: the text's bytes as hex, a tab, the ids separated by spaces.

  python3 tools/tokenizer/gen_bbpe_goldens.py [--check]
"""
import argparse
import collections
import json
import os
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import gen_tokenizer_goldens as spm_goldens  # noqa: E402  (corpus split, shared texts)
import gen_unicode_tables as uni  # noqa: E402

DATA = spm_goldens.DATA
NUM_MERGES = 1000
EOT = "<|endoftext|>"
QWEN2_ADDED = ["<|im_start|>", "<|im_end|>"]

GPT2_PATTERN = r"""'s|'t|'re|'ve|'m|'ll|'d| ?\p{L}+| ?\p{N}+| ?[^\s\p{L}\p{N}]+|\s+(?!\S)|\s+"""
QWEN2_PATTERN = (r"""(?i:'s|'t|'re|'ve|'m|'ll|'d)|[^\r\n\p{L}\p{N}]?\p{L}+|\p{N}| ?[^\s\p{L}\p{N}]+[\r\n]*|"""
                 r"""\s*[\r\n]+|\s+(?!\S)|\s+""")

# Texts the licence lines do not cover, as bytes (some are not UTF-8).
EXTRA = [t.encode("utf-8") for t in spm_goldens.EXTRA] + [t.encode("utf-8") for t in [
    "I'm sure you're right: we've seen they'll say she'd go, it's John's",
    "IT'S I'M WE'VE THEY'LL SHE'D DON'T 'S 'T 'Re 'vE",
    "'s 't ''s '' x's 'sup 'til",
    "digits 1 12 123 1234 12345 1,000,000 3.14 2024-01-01 007",
    "\u0661\u0662\u0663 \u00bd \u2167 \u00b2",
    "a\nb\n\nc\n\n\nd",
    "line\r\nnext\r\n\r\nend\r\n",
    "  \n  \n",
    "\n",
    "\n\n",
    "x \n y",
    "trailing spaces   ",
    "   leading spaces",
    "\ttab\t\tindent\t",
    "mixed \t \n \u00a0 \u3000 white",
    "a\u00a0b\u2003c\u2028d",
    "emoji \U0001F44D\U0001F3FD family \U0001F468\u200D\U0001F469\u200D\U0001F467 flag \U0001F1E9\U0001F1EA",
    "e\u0301 combining caf\u0065\u0301 \u0915\u093f",
    "sep\u001c\u001d\u001e\u001fchars",
    "\u00ad soft\u00adhyphen \u200bzero",
    "punct!!! ...??? (a) [b] {c} <d> \"e\" --f-- __g__",
    "\u4e2d\u6587\u5b57\u7b26 \u65e5\u672c\u8a9e \ud55c\uad6d\uc5b4",
    "'\u017f '\u017fx",
    "\u0391\u03b8\u03ae\u03bd\u03b1 \u041c\u043e\u0441\u043a\u0432\u0430",
    " ",
    "  ",
    "a",
    "'",
]] + [
    b"\xff\xfe invalid \xc3( bytes \xe6\x97",
    b"\xc0\xaf overlong \xed\xa0\x80 surrogate \xf4\x90\x80\x80 high",
]


# ---------------------------------------------------------- GPT-2 bytes ---

def bytes_to_unicode():
    """GPT-2 encoder.py: printable bytes map to themselves, the rest to 256+."""
    bs = list(range(ord("!"), ord("~") + 1)) + list(range(ord("\u00a1"), ord("\u00ac") + 1)) + \
        list(range(ord("\u00ae"), ord("\u00ff") + 1))
    cs = bs[:]
    n = 0
    for b in range(256):
        if b not in bs:
            bs.append(b)
            cs.append(256 + n)
            n += 1
    return bs, dict(zip(bs, [chr(c) for c in cs]))


BYTE_ORDER, BYTE_ENCODER = bytes_to_unicode()
BYTE_DECODER = {c: b for b, c in BYTE_ENCODER.items()}


def to_unicode(data):
    return "".join(BYTE_ENCODER[b] for b in data)


def from_unicode(piece):
    return bytes(BYTE_DECODER[c] for c in piece)


# --------------------------------------------------------------- split ---

def is_letter(c):
    return uni.char_class(ord(c)) == 1


def is_number(c):
    return uni.char_class(ord(c)) == 3


def is_space(c):
    return uni.char_class(ord(c)) == 6 and not 0x1C <= ord(c) <= 0x1F


def is_other(c):  # [^\s\p{L}\p{N}]
    return not (is_space(c) or is_letter(c) or is_number(c))


def run(s, i, pred):
    """The end of the run of characters from i that satisfy pred."""
    while i < len(s) and pred(s[i]):
        i += 1
    return i


def contraction(s, i, fold):
    if s[i] != "'" or i + 1 >= len(s):
        return 0
    rest = s[i + 1:i + 3]
    if fold:  # (?i:...) as the regex module folds: also U+017F LONG S for s
        rest = rest.replace("\u017f", "s").lower()
    if rest[:1] in ("s", "t", "m", "d"):
        return 2
    if rest[:2] in ("re", "ve", "ll"):
        return 3
    return 0


def white_space(s, i):
    """\\s+(?!\\S) then \\s+: the run, less its last character when a
    non-space follows and the run has more than one."""
    j = run(s, i, is_space)
    if j < len(s) and j - i > 1:
        return j - 1
    return j


def split_gpt2(s):
    out = []
    i = 0
    while i < len(s):
        n = contraction(s, i, False)
        if n:
            j = i + n
        else:
            k = i + 1 if s[i] == " " and i + 1 < len(s) else i
            if is_letter(s[k]):
                j = run(s, k, is_letter)
            elif is_number(s[k]):
                j = run(s, k, is_number)
            elif is_other(s[k]):
                j = run(s, k, is_other)
            else:
                j = white_space(s, i)
        out.append(s[i:j])
        i = j
    return out


def split_qwen2(s):
    out = []
    i = 0
    while i < len(s):
        c = s[i]
        n = contraction(s, i, True)
        if n:
            j = i + n
        elif is_letter(c):
            j = run(s, i, is_letter)
        elif c not in "\r\n" and not is_number(c) and i + 1 < len(s) and is_letter(s[i + 1]):
            j = run(s, i + 1, is_letter)
        elif is_number(c):
            j = i + 1
        elif (is_other(c) or (c == " " and i + 1 < len(s) and is_other(s[i + 1]))):
            j = run(s, i + 1 if c == " " else i, is_other)
            j = run(s, j, lambda x: x in "\r\n")
        else:  # white space: \s*[\r\n]+, then \s+(?!\S), \s+
            e = run(s, i, is_space)
            last = max((k for k in range(i, e) if s[k] in "\r\n"), default=-1)
            j = last + 1 if last >= 0 else white_space(s, i)
        out.append(s[i:j])
        i = j
    return out


SPLITS = {"gpt2": split_gpt2, "qwen2": split_qwen2}
PATTERNS = {"gpt2": GPT2_PATTERN, "qwen2": QWEN2_PATTERN}


def check_split_with_regex(texts):
    try:
        import regex
    except ImportError:
        print("(regex module not installed: the hand-written splits are not cross-checked)")
        return
    for name, split in SPLITS.items():
        pat = regex.compile(PATTERNS[name])
        for data in texts:
            s = data.decode("utf-8", "surrogateescape")
            if any(0xDC80 <= ord(c) <= 0xDCFF for c in s):
                continue  # the regex module's classes of lone surrogates are its own
            want = pat.findall(s)
            if split(s) != want:
                raise SystemExit("%s split of %r: %r, the regex gives %r" % (name, s, split(s), want))
    print("the hand-written splits agree with the regex module on every golden text")


# ----------------------------------------------------------------- BPE ---

def bpe(token, ranks):
    """GPT-2 encoder.py's bpe(): merge every occurrence of the lowest-ranked pair."""
    word = list(token)
    while len(word) > 1:
        pairs = set(zip(word, word[1:]))
        best = min(pairs, key=lambda p: ranks.get(p, float("inf")))
        if best not in ranks:
            break
        first, second = best
        new = []
        i = 0
        while i < len(word):
            if i < len(word) - 1 and word[i] == first and word[i + 1] == second:
                new.append(first + second)
                i += 2
            else:
                new.append(word[i])
                i += 1
        word = new
    return word


def encode(data, vocab, ranks, split, add_prefix_space=False):
    s = data.decode("utf-8", "surrogateescape")
    if add_prefix_space and s and not s.startswith(" "):
        s = " " + s
    ids = []
    for chunk in split(s):
        for piece in bpe(to_unicode(chunk.encode("utf-8", "surrogateescape")), ranks):
            ids.append(vocab[piece])
    return ids


def train(lines, num_merges):
    """Byte-level BPE training: count the GPT-2 split's chunks, merge the most
    frequent adjacent pair (ties: the smaller pair) num_merges times."""
    counts = collections.Counter()
    for chunk in split_gpt2("\n".join(lines)):
        counts[to_unicode(chunk.encode("utf-8"))] += 1
    words = [[list(w), f] for w, f in sorted(counts.items())]
    pair_count = collections.Counter()
    where = collections.defaultdict(set)
    for wi, (sym, f) in enumerate(words):
        for p in zip(sym, sym[1:]):
            pair_count[p] += f
            where[p].add(wi)
    vocab = [BYTE_ENCODER[b] for b in BYTE_ORDER]
    known = set(vocab)
    merges = []
    while len(merges) < num_merges:
        best = min((p for p, c in pair_count.items() if c > 0), key=lambda p: (-pair_count[p], p), default=None)
        if best is None:
            break
        merges.append(best)
        merged = best[0] + best[1]
        if merged not in known:
            known.add(merged)
            vocab.append(merged)
        for wi in sorted(where.pop(best)):
            sym, f = words[wi]
            for p in zip(sym, sym[1:]):
                pair_count[p] -= f
            new = []
            i = 0
            while i < len(sym):
                if i < len(sym) - 1 and (sym[i], sym[i + 1]) == best:
                    new.append(merged)
                    i += 2
                else:
                    new.append(sym[i])
                    i += 1
            words[wi][0] = new
            for p in zip(new, new[1:]):
                pair_count[p] += f
                where[p].add(wi)
        pair_count.pop(best, None)
    return vocab, merges


# ---------------------------------------------------------------- files ---

def tokenizer_json(vocab, merges, added, pre_tokenizer, merges_as_pairs):
    model_vocab = {p: i for i, p in enumerate(vocab)}
    doc = {
        "version": "1.0",
        "truncation": None,
        "padding": None,
        "added_tokens": [{"id": i, "content": c, "single_word": False, "lstrip": False, "rstrip": False,
                          "normalized": False, "special": True} for i, c in added],
        "normalizer": None,
        "pre_tokenizer": pre_tokenizer,
        "post_processor": None,
        "decoder": {"type": "ByteLevel", "add_prefix_space": True, "trim_offsets": True, "use_regex": True},
        "model": {"type": "BPE", "dropout": None, "unk_token": None, "continuing_subword_prefix": "",
                  "end_of_word_suffix": "", "fuse_unk": False, "byte_fallback": False,
                  "vocab": model_vocab,
                  "merges": [list(m) for m in merges] if merges_as_pairs else [" ".join(m) for m in merges]},
    }
    return (json.dumps(doc, ensure_ascii=False, indent=1) + "\n").encode("utf-8")


def golden_line(data, ids):
    return data.hex() + "\t" + " ".join(str(i) for i in ids) + "\n"


def derive():
    train_lines, held = spm_goldens.split_corpus()
    vocab, merges = train([l for l in train_lines if l.strip()], NUM_MERGES)
    if len(merges) != NUM_MERGES:
        raise SystemExit("the corpus gave only %d merges" % len(merges))
    gpt2_vocab = vocab + [EOT]  # GPT-2's vocab.json holds <|endoftext|> last
    ids = {p: i for i, p in enumerate(gpt2_vocab)}
    ranks = {m: r for r, m in enumerate(merges)}
    texts = [l.encode("utf-8") for l in held] + EXTRA
    check_split_with_regex(texts)
    files = {}
    files["bbpe_vocab.json"] = (json.dumps(ids, ensure_ascii=False) + "\n").encode("utf-8")
    files["bbpe_merges.txt"] = ("#version: 0.2\n" + "".join("%s %s\n" % m for m in merges)).encode("utf-8")
    files["bbpe_gpt2.tokenizer.json"] = tokenizer_json(
        gpt2_vocab, merges, [(len(vocab), EOT)],
        {"type": "ByteLevel", "add_prefix_space": True, "trim_offsets": True, "use_regex": True}, False)
    qwen_added = [(len(vocab) + k, t) for k, t in enumerate([EOT] + QWEN2_ADDED)]
    files["bbpe_qwen2.tokenizer.json"] = tokenizer_json(
        vocab, merges, qwen_added,
        {"type": "Sequence", "pretokenizers": [
            {"type": "Split", "pattern": {"Regex": QWEN2_PATTERN}, "behavior": "Isolated", "invert": False},
            {"type": "ByteLevel", "add_prefix_space": False, "trim_offsets": False, "use_regex": False}]},
        True)
    for name, split, prefix in [("bbpe_gpt2.golden", split_gpt2, False),
                                ("bbpe_gpt2_prefix.golden", split_gpt2, True),
                                ("bbpe_qwen2.golden", split_qwen2, False)]:
        lines = []
        for data in texts:
            out = encode(data, ids, ranks, split, prefix)
            back = b"".join(from_unicode(gpt2_vocab[i]) for i in out)
            want = (b" " + data) if prefix and data and not data.startswith(b" ") else data
            if back != want:
                raise SystemExit("%s: %r does not decode back" % (name, data))
            lines.append(golden_line(data, out))
        files[name] = "".join(lines).encode("utf-8")
    print("%d merges, %d pieces, %d golden texts" % (len(merges), len(gpt2_vocab), len(texts)))
    return files


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--check", action="store_true", help="re-derive and compare, write nothing")
    args = ap.parse_args()
    bad = 0
    for name, data in derive().items():
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
