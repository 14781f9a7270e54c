#!/usr/bin/env python3
"""The case-folding and accent-stripping tables of the WordPiece tokenizer.

Writes src/tokenizer/unicode_fold.cpp from this Python's unicodedata (the
Unicode version is recorded in the file): per code point

  lower   Python's str.lower() of the one character (U+0130 is the only
          code point whose result is two code points: U+0069 U+0307; the
          final-sigma rule of str.lower() needs context and is applied by
          the encoder with the two tables below)
  strip   NFD, then every code point of category Mn dropped (Hangul
          syllables decompose algorithmically and are not in the table)
  cased, case-ignorable
          the two properties str.lower()'s final-sigma rule reads, derived
          from str.lower()'s own behaviour on "A" + c + SIGMA and
          "A" + SIGMA + c, so they are what this Python does

BERT lowercases a token, then NFDs it and drops Mn. The generator checks,
over every code point, that applying the two tables one code point at a
time gives exactly NFD-drop-Mn(str.lower(c)), that no code point folds to
more code points than its UTF-8 bytes (the encoder's max_ids bound), and
that the tables read back (a Python copy of the C++ lookups) give the truth
for every code point. What per-code-point folding cannot do alone is
canonical reordering across code points: after stripping it matters only
for runs of the few non-Mn combining marks (listed in the output), which
the encoder sorts by combining class with the last two tables here (which
code points begin with a non-starter, and those marks' classes).

  python3 tools/tokenizer/gen_unicode_fold.py [--check]
"""
import argparse
import os
import sys
import unicodedata as ud

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
OUT = os.path.join(ROOT, "src", "tokenizer", "unicode_fold.cpp")

N = 0x110000
SIGMA = "\u03a3"
HANGUL_FIRST, HANGUL_LAST = 0xAC00, 0xD7A3


def code_points():
    return [c for c in range(N) if not 0xD800 <= c < 0xE000]


def nfd_drop_mn(s):
    return "".join(ch for ch in ud.normalize("NFD", s) if ud.category(ch) != "Mn")


def is_cased(ch):
    return ch.islower() or ch.isupper() or ch.istitle()


def sigma_properties(ch):
    """(cased, case_ignorable) as str.lower()'s final-sigma rule sees them."""
    cased = is_cased(ch)
    after_cased = ("A" + ch + SIGMA).lower()[-1] == "\u03c2"  # ignorable or cased
    before = ("A" + SIGMA + ch).lower()[1] == "\u03c2"  # ignorable or not cased
    return cased, (before if cased else after_cased)


def ranges(cps):
    out = []
    for c in cps:
        if out and out[-1][1] == c - 1:
            out[-1][1] = c
        else:
            out.append([c, c])
    return out


def packed_ranges(cps):
    """first | (length - 1) << 21, runs longer than 2048 split."""
    words = []
    for a, b in ranges(cps):
        while a <= b:
            n = min(b - a + 1, 2048)
            words.append(a | (n - 1) << 21)
            a += n
    return words


def lower_ranges(lower):
    """(first, count, stride, delta): cp = first + k * stride -> cp + delta."""
    rs = []
    for c in sorted(lower):
        d = ord(lower[c]) - c
        if rs:
            f, n, s, dd = rs[-1]
            last = f + (n - 1) * s
            step = c - last
            if dd == d and n < 1024 and ((n == 1 and step in (1, 2)) or (n > 1 and step == s)):
                rs[-1] = (f, n + 1, step, d)
                continue
        rs.append((c, 1, 1, d))
    return rs


def build():
    cps = code_points()
    lower, strip = {}, {}
    multi_lower = {}
    for c in cps:
        ch = chr(c)
        lo = ch.lower()
        if len(lo) > 1:
            multi_lower[c] = lo
        elif lo != ch:
            lower[c] = lo
        if not HANGUL_FIRST <= c <= HANGUL_LAST:
            st = nfd_drop_mn(ch)
            if st != ch:
                strip[c] = st
    if list(multi_lower) != [0x130]:
        raise SystemExit("more multi-code-point lowercase results than U+0130: %r" % sorted(multi_lower))
    drop = sorted(c for c, v in strip.items() if v == "")
    single = {c: ord(v) for c, v in strip.items() if len(v) == 1}
    multi = {c: [ord(x) for x in v] for c, v in strip.items() if len(v) > 1}
    if max(len(v) for v in multi.values()) > 3:
        raise SystemExit("a strip result longer than 3 code points")
    bmp = sorted(c for c in single if c < 0x10000 and single[c] < 0x10000)
    wide = sorted(c for c in single if c >= 0x10000 or single[c] >= 0x10000)
    cased, ignorable = [], []
    for c in cps:
        a, b = sigma_properties(chr(c))
        if a:
            cased.append(c)
        if b:
            ignorable.append(c)
    # Canonical reordering after stripping: the code points whose NFD
    # begins with a non-starter (then all of it is one), and the combining
    # marks that are not Mn (they survive stripping) with their classes.
    nonstarter = []
    for c in cps:
        d = [ud.combining(x) for x in ud.normalize("NFD", chr(c))]
        if d[0] != 0:
            if 0 in d:
                raise SystemExit("U+%04X decomposes to a non-starter, then a starter" % c)
            nonstarter.append(c)
    kept = reorder_marks()
    if any(ud.combining(chr(c)) > 255 or c >= 1 << 24 for c in kept):
        raise SystemExit("a kept mark does not pack")
    lr = lower_ranges(lower)
    t = {
        "lower_start": [f | (s - 1) << 21 | (n - 1) << 22 for f, n, s, d in lr],
        "lower_delta": [d for f, n, s, d in lr],
        "drop": packed_ranges(drop),
        "strip_bmp": [c << 16 | single[c] for c in bmp],
        "strip_wide": [x for c in wide for x in (c, single[c])],
        "strip_multi": [x for c in sorted(multi) for x in (c, *(multi[c] + [0] * (3 - len(multi[c]))))],
        "cased": packed_ranges(cased),
        "ignorable": packed_ranges(ignorable),
        "nonstarter": packed_ranges(nonstarter),
        "kept_marks": [c | ud.combining(chr(c)) << 24 for c in kept],
    }
    return t


# A Python copy of the C++ lookups, to check the tables read back.
def find_last(words, key, cp):
    lo, hi = 0, len(words)
    while lo < hi:
        mid = (lo + hi) // 2
        if key(words[mid]) <= cp:
            lo = mid + 1
        else:
            hi = mid
    return lo - 1


def in_ranges(words, cp):
    i = find_last(words, lambda w: w & 0x1FFFFF, cp)
    return i >= 0 and cp <= (words[i] & 0x1FFFFF) + (words[i] >> 21)


def read_lower(t, cp):
    if cp == 0x130:
        return [0x69, 0x307]
    i = find_last(t["lower_start"], lambda w: w & 0x1FFFFF, cp)
    if i >= 0:
        w = t["lower_start"][i]
        first, stride, count = w & 0x1FFFFF, (w >> 21 & 1) + 1, (w >> 22) + 1
        k, r = divmod(cp - first, stride)
        if k < count and r == 0:
            return [cp + t["lower_delta"][i]]
    return [cp]


def read_strip(t, cp):
    if HANGUL_FIRST <= cp <= HANGUL_LAST:
        s = cp - HANGUL_FIRST
        out = [0x1100 + s // 588, 0x1161 + s % 588 // 28]
        return out + ([0x11A7 + s % 28] if s % 28 else [])
    if in_ranges(t["drop"], cp):
        return []
    m = t["strip_multi"]
    keys = m[0::4]
    i = find_last(keys, lambda k: k, cp)
    if i >= 0 and keys[i] == cp:
        return [x for x in m[4 * i + 1:4 * i + 4] if x]
    if cp < 0x10000:
        b = t["strip_bmp"]
        i = find_last(b, lambda w: w >> 16, cp)
        if i >= 0 and b[i] >> 16 == cp:
            return [b[i] & 0xFFFF]
    w = t["strip_wide"]
    keys = w[0::2]
    i = find_last(keys, lambda k: k, cp)
    if i >= 0 and keys[i] == cp:
        return [w[2 * i + 1]]
    return [cp]


def verify(t):
    bad = 0
    for c in code_points():
        ch = chr(c)
        lo = read_lower(t, c)
        if "".join(map(chr, lo)) != ch.lower():
            bad += 1
        st = read_strip(t, c)
        if "".join(map(chr, st)) != nfd_drop_mn(ch):
            bad += 1
        both = [y for x in lo for y in read_strip(t, x)]
        if "".join(map(chr, both)) != nfd_drop_mn(ch.lower()):
            bad += 1
        if max(len(lo), len(st), len(both)) > len(ch.encode("utf-8", "surrogatepass")):
            raise SystemExit("U+%04X folds to more code points than its UTF-8 bytes" % c)
        cased, ign = sigma_properties(ch)
        if in_ranges(t["cased"], c) != cased or in_ranges(t["ignorable"], c) != ign:
            bad += 1
        if in_ranges(t["nonstarter"], c) != (ud.combining(ud.normalize("NFD", ch)[0]) != 0):
            bad += 1
    if bad:
        raise SystemExit("%d table lookups differ from Python" % bad)


def reorder_marks():
    return [c for c in code_points() if ud.combining(chr(c)) and ud.category(chr(c)) != "Mn"]


def c_array(ctype, name, values, per_line):
    lines = ["const %s %s[] = {" % (ctype, name)]
    for i in range(0, len(values), per_line):
        chunk = values[i:i + per_line]
        if ctype == "int32_t":
            lines.append("    " + ", ".join("%d" % v for v in chunk) + ",")
        else:
            lines.append("    " + ", ".join("0x%08X" % v for v in chunk) + ",")
    lines.append("};")
    return "\n".join(lines)


def table_bytes(t):
    return 4 * sum(len(v) for v in t.values())


TEMPLATE = """\
// tokenizer/unicode_fold.cpp: GENERATED by tools/tokenizer/gen_unicode_fold.py
// from Python {pyver}'s unicodedata, Unicode {uver}. Do not edit; re-run the
// script (--check compares). Lowercasing (str.lower() per code point),
// accent stripping (NFD, then Mn dropped) and the cased / case-ignorable
// properties of str.lower()'s final-sigma rule: {nbytes} bytes of tables.
//
// Per-code-point folding equals BERT's whole-token str.lower() + NFD + drop
// Mn once the caller reorders what canonical ordering reorders across code
// points: a run of these non-Mn combining marks (they survive stripping; a
// code point whose NFD begins with a starter ends a run), sorted stably by
// combining class (kept_mark_class, is_nonstarter):
// {marks}
#include "tokenizer/unicode_fold.h"

namespace attn {{
namespace tok {{

const char* fold_unicode_version() {{ return "{uver}"; }}

namespace {{

// clang-format off
// Lowercase ranges: first | (stride - 1) << 21 | (count - 1) << 22; the
// code points first + k * stride (k < count) lower to themselves + delta.
{lower_start}
{lower_delta}
// Code points that strip to nothing (Mn): first | (length - 1) << 21.
{drop}
// Strip to one code point, both in the BMP: code point << 16 | result.
{strip_bmp}
// Strip to one code point, either outside the BMP: code point, result.
{strip_wide}
// Strip to two or three code points: code point, results (0: none).
{strip_multi}
// Cased and case-ignorable (str.lower()'s final sigma): first | (length - 1) << 21.
{cased}
{ignorable}
// Code points whose NFD begins with a non-starter (ccc != 0): first | (length - 1) << 21.
{nonstarter}
// The combining marks that are not Mn: code point | combining class << 24.
{kept_marks}
// clang-format on

constexpr uint32_t kCpMask = 0x1FFFFFu;

// How many of n entries (keys ascending) have a key <= cp: the last such
// entry is the one before, if any.
template <typename Key>
size_t count_le(size_t n, uint32_t cp, Key key) {{
  size_t lo = 0;
  size_t hi = n;
  while (lo < hi) {{
    const size_t mid = lo + (hi - lo) / 2;
    if (key(mid) <= cp) {{
      lo = mid + 1;
    }} else {{
      hi = mid;
    }}
  }}
  return lo;
}}

template <size_t N>
bool in_ranges(const uint32_t (&words)[N], uint32_t cp) {{
  const size_t i = count_le(N, cp, [&](size_t k) {{ return words[k] & kCpMask; }});
  return i > 0 && cp <= (words[i - 1] & kCpMask) + (words[i - 1] >> 21);
}}

constexpr uint32_t kHangulFirst = 0xAC00;
constexpr uint32_t kHangulLast = 0xD7A3;

}}  // namespace

size_t fold_lower(uint32_t cp, uint32_t out[kMaxFold]) {{
  if (cp == 0x130) {{  // LATIN CAPITAL LETTER I WITH DOT ABOVE: "i" + COMBINING DOT ABOVE
    out[0] = 0x69;
    out[1] = 0x307;
    return 2;
  }}
  constexpr size_t n = sizeof(kLowerStart) / sizeof(kLowerStart[0]);
  const size_t i = count_le(n, cp, [](size_t k) {{ return kLowerStart[k] & kCpMask; }});
  out[0] = cp;
  if (i > 0) {{
    const uint32_t w = kLowerStart[i - 1];
    const uint32_t stride = ((w >> 21) & 1u) + 1;
    const uint32_t off = cp - (w & kCpMask);
    if (off % stride == 0 && off / stride <= (w >> 22)) {{
      out[0] = static_cast<uint32_t>(static_cast<int32_t>(cp) + kLowerDelta[i - 1]);
    }}
  }}
  return 1;
}}

size_t fold_strip_accents(uint32_t cp, uint32_t out[kMaxFold]) {{
  if (cp >= kHangulFirst && cp <= kHangulLast) {{  // L V (T), Unicode 3.12
    const uint32_t s = cp - kHangulFirst;
    out[0] = 0x1100 + s / 588;
    out[1] = 0x1161 + (s % 588) / 28;
    if (s % 28 == 0) return 2;
    out[2] = 0x11A7 + s % 28;
    return 3;
  }}
  if (in_ranges(kDrop, cp)) return 0;
  constexpr size_t nm = sizeof(kStripMulti) / sizeof(kStripMulti[0]) / 4;
  size_t i = count_le(nm, cp, [](size_t k) {{ return kStripMulti[4 * k]; }});
  if (i > 0 && kStripMulti[4 * (i - 1)] == cp) {{
    size_t n = 0;
    for (size_t k = 1; k < 4; ++k) {{
      if (kStripMulti[4 * (i - 1) + k] != 0) out[n++] = kStripMulti[4 * (i - 1) + k];
    }}
    return n;
  }}
  if (cp < 0x10000) {{
    constexpr size_t nb = sizeof(kStripBmp) / sizeof(kStripBmp[0]);
    i = count_le(nb, cp, [](size_t k) {{ return kStripBmp[k] >> 16; }});
    if (i > 0 && kStripBmp[i - 1] >> 16 == cp) {{
      out[0] = kStripBmp[i - 1] & 0xFFFFu;
      return 1;
    }}
  }}
  constexpr size_t nw = sizeof(kStripWide) / sizeof(kStripWide[0]) / 2;
  i = count_le(nw, cp, [](size_t k) {{ return kStripWide[2 * k]; }});
  out[0] = i > 0 && kStripWide[2 * (i - 1)] == cp ? kStripWide[2 * (i - 1) + 1] : cp;
  return 1;
}}

bool is_cased(uint32_t cp) {{ return in_ranges(kCased, cp); }}

bool is_case_ignorable(uint32_t cp) {{ return in_ranges(kCaseIgnorable, cp); }}

bool is_nonstarter(uint32_t cp) {{ return in_ranges(kNonStarter, cp); }}

uint8_t kept_mark_class(uint32_t cp) {{
  for (const uint32_t m : kKeptMarks) {{
    if ((m & 0xFFFFFFu) == cp) return static_cast<uint8_t>(m >> 24);
  }}
  return 0;
}}

}}  // namespace tok
}}  // namespace attn
"""


def render(t):
    marks = reorder_marks()
    mark_lines = []
    line = ""
    for c in marks:
        item = "U+%04X(%d)" % (c, ud.combining(chr(c)))
        if len(line) + len(item) + 1 > 100:
            mark_lines.append(line.rstrip())
            line = ""
        line += item + " "
    mark_lines.append(line.rstrip())
    return TEMPLATE.format(
        pyver="%d.%d" % sys.version_info[:2], uver=ud.unidata_version, nbytes=table_bytes(t),
        marks="\n// ".join(mark_lines),
        lower_start=c_array("uint32_t", "kLowerStart", t["lower_start"], 8),
        lower_delta=c_array("int32_t", "kLowerDelta", t["lower_delta"], 12),
        drop=c_array("uint32_t", "kDrop", t["drop"], 8),
        strip_bmp=c_array("uint32_t", "kStripBmp", t["strip_bmp"], 8),
        strip_wide=c_array("uint32_t", "kStripWide", t["strip_wide"], 8),
        strip_multi=c_array("uint32_t", "kStripMulti", t["strip_multi"], 8),
        cased=c_array("uint32_t", "kCased", t["cased"], 8),
        ignorable=c_array("uint32_t", "kCaseIgnorable", t["ignorable"], 8),
        nonstarter=c_array("uint32_t", "kNonStarter", t["nonstarter"], 8),
        kept_marks=c_array("uint32_t", "kKeptMarks", t["kept_marks"], 8))


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--check", action="store_true", help="regenerate and compare, write nothing")
    args = ap.parse_args()
    t = build()
    verify(t)
    text = render(t)
    sizes = ", ".join("%s %d B" % (k, 4 * len(v)) for k, v in t.items())
    print("Unicode %s: %d bytes of tables (%s)" % (ud.unidata_version, table_bytes(t), sizes))
    if args.check:
        with open(OUT, encoding="utf-8") as f:
            same = f.read() == text
        print("check: %s" % ("ok" if same else "FAILED: src/tokenizer/unicode_fold.cpp differs"))
        return 0 if same else 1
    with open(OUT, "w", encoding="utf-8") as f:
        f.write(text)
    return 0


if __name__ == "__main__":
    sys.exit(main())
