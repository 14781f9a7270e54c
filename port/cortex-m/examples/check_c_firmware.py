#!/usr/bin/env python3
"""check_c_firmware.py: builds and runs the C firmware example (c-firmware/)
on one QEMU board and compares its int8 output, byte for byte, with the host:
`attn run MODEL --input x.npy --raw --causal` on the input the firmware printed.

  check_c_firmware.py --attn build/host-release/tools/attn --board an386 --cc gcc --work DIR

Exits 1 if any output byte differs, if the firmware's output is incomplete, or
if it reports no stack figure. Standard library only (ctest
`c_firmware[BOARD,CC]`, tests/integration.cmake).
"""
import argparse
import os
import re
import struct
import subprocess
import sys

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.dirname(os.path.dirname(os.path.dirname(HERE)))
ROW = re.compile(r"^([xy]) (\d+):((?: [0-9a-f]{2})+)$")


def write_npy_i8(path, rows):
    """An int8 ('|i1') .npy of shape [len(rows), len(rows[0])]."""
    header = "{'descr': '|i1', 'fortran_order': False, 'shape': (%d, %d), }" % (len(rows), len(rows[0]))
    header += " " * (63 - (10 + len(header)) % 64) + "\n"  # 64-byte aligned, newline-terminated
    with open(path, "wb") as f:
        f.write(b"\x93NUMPY\x01\x00" + struct.pack("<H", len(header)) + header.encode("latin1"))
        f.write(bytes(b for row in rows for b in row))


def read_npy_i8(path):
    """The shape and the bytes (0..255) of an int8 .npy."""
    with open(path, "rb") as f:
        data = f.read()
    if data[:6] != b"\x93NUMPY":
        raise SystemExit(f"{path}: not a .npy file")
    hlen = struct.unpack("<H", data[8:10])[0] if data[6] == 1 else struct.unpack("<I", data[8:12])[0]
    start = (10 if data[6] == 1 else 12) + hlen
    header = data[start - hlen:start].decode("latin1")
    if "'|i1'" not in header:
        raise SystemExit(f"{path}: not int8: {header.strip()}")
    shape = tuple(int(n) for n in re.search(r"'shape': \(([^)]*)\)", header).group(1).split(",") if n.strip())
    return shape, data[start:]


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--attn", required=True, help="the host attn tools binary")
    ap.add_argument("--board", required=True, choices=["an386", "an547"])
    ap.add_argument("--cc", required=True, choices=["gcc", "clang"])
    ap.add_argument("--work", required=True, help="build directory (the example's BUILD)")
    ap.add_argument("--model", default=os.path.join(ROOT, "tests", "data", "format", "quant", "mha_self.s8.attn"))
    args = ap.parse_args()
    work = os.path.abspath(args.work)
    os.makedirs(work, exist_ok=True)

    make = ["make", "-C", os.path.join(HERE, "c-firmware"), "-j2", f"BOARD={args.board}", f"CC={args.cc}",
            f"BUILD={work}", f"ATTN={os.path.abspath(args.attn)}", f"ATTN_ROOT={ROOT}",
            f"MODEL={os.path.abspath(args.model)}"]
    build = subprocess.run(make + ["all"], capture_output=True, text=True)
    if build.returncode != 0:
        sys.stdout.write(build.stdout + build.stderr)
        raise SystemExit(f"check_c_firmware: the build failed ({build.returncode})")
    # Semihosting writes to QEMU's stderr or stdout, depending on the version: read both.
    run = subprocess.run(make + ["-s", "run"], stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True)
    sys.stdout.write(run.stdout)
    if run.returncode != 0:
        raise SystemExit(f"check_c_firmware: the firmware exited with {run.returncode}")

    rows = {"x": {}, "y": {}}
    stack = None
    for line in run.stdout.splitlines():
        m = ROW.match(line)
        if m:
            rows[m.group(1)][int(m.group(2))] = [int(b, 16) for b in m.group(3).split()]
        m = re.match(r"^stack: (\d+) bytes$", line)
        if m:
            stack = int(m.group(1))
    if not rows["x"] or sorted(rows["x"]) != list(range(len(rows["x"]))) or sorted(rows["y"]) != sorted(rows["x"]):
        raise SystemExit("check_c_firmware: the firmware printed no complete x and y rows")
    if stack is None or stack <= 0:
        raise SystemExit("check_c_firmware: no 'stack: N bytes' line")
    x = [rows["x"][i] for i in range(len(rows["x"]))]
    got = [b for i in range(len(x)) for b in rows["y"][i]]

    x_npy = os.path.join(work, "x.npy")
    y_npy = os.path.join(work, "y_host.npy")
    write_npy_i8(x_npy, x)
    subprocess.run([args.attn, "run", args.model, "--input", x_npy, "--raw", "--causal", "-o", y_npy], check=True)
    shape, want = read_npy_i8(y_npy)
    if shape != (len(x), len(x[0])) or len(want) != len(got):
        raise SystemExit(f"check_c_firmware: host output shape {shape}, firmware printed {len(x)} x {len(x[0])}")
    bad = [i for i in range(len(got)) if got[i] != want[i]]
    for i in bad[:10]:
        r, c = divmod(i, len(x[0]))
        print(f"  y[{r}][{c}]: firmware {got[i]:02x}, host {want[i]:02x}")
    print(f"c_firmware board={args.board} cc={args.cc}: {len(got)} output bytes, {len(bad)} differ from "
          f"`attn run --raw`, stack {stack} bytes: {'PASS' if not bad else 'FAIL'}")
    return 1 if bad else 0


if __name__ == "__main__":
    sys.exit(main())
