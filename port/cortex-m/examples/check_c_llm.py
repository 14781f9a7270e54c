#!/usr/bin/env python3
"""check_c_llm.py: builds and runs the whole-model C example (c-llm/) on one
QEMU board and checks it against the host:

- its generated text equals `attn generate MODEL --prompt PROMPT --steps N`
  on the host, byte for byte;
- the image's `.scratch` and `.kv_state` sections (the model's two buffers,
  in two RAM regions) are exactly the sizes `attn info MODEL --target ...`
  gives for the board (the MODEL_ARENA_BYTES and MODEL_STATE_BYTES of the
  header `attn emit-c` wrote), and at different addresses' regions;
- it printed its instruction counts.

  check_c_llm.py --attn build/host-release/tools/attn --board an386 --cc gcc --work DIR

Standard library only (ctest `c_llm_<board>_<cc>`, tests/integration.cmake).
"""
import argparse
import os
import re
import subprocess
import sys

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.dirname(os.path.dirname(os.path.dirname(HERE)))
PROMPT = "You may copy"
STEPS = 32
TOKENS = 16
CAPACITY = 64


def sections(elf):
    """{name: (size, address)} of an ELF's sections."""
    out = subprocess.run(["arm-none-eabi-size", "-A", elf], check=True, capture_output=True, text=True).stdout
    found = {}
    for line in out.splitlines():
        f = line.split()
        if len(f) == 3 and f[1].isdigit():
            found[f[0]] = (int(f[1]), int(f[2]))
    return found


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--attn", required=True, help="the host attn tools binary")
    ap.add_argument("--board", required=True, choices=["an386", "an547"])
    ap.add_argument("--cc", required=True, choices=["gcc", "clang"])
    ap.add_argument("--work", required=True, help="build directory (the example's BUILD)")
    ap.add_argument("--model", help="the s8 model (default: the Makefile's, imported and quantized into --work)")
    args = ap.parse_args()
    work = os.path.abspath(args.work)
    attn = os.path.abspath(args.attn)
    os.makedirs(work, exist_ok=True)
    make = ["make", "-C", os.path.join(HERE, "c-llm"), "-j2", f"BOARD={args.board}", f"CC={args.cc}",
            f"BUILD={work}", f"ATTN={attn}", f"ATTN_ROOT={ROOT}", f"PROMPT={PROMPT}", f"STEPS={STEPS}",
            f"TOKENS={TOKENS}", f"CAPACITY={CAPACITY}"]
    model = os.path.abspath(args.model) if args.model else os.path.join(work, "tiny_llama.s8.attn")
    if args.model:
        make.append(f"MODEL={model}")
    build = subprocess.run(make + ["all"], capture_output=True, text=True)
    if build.returncode != 0:
        sys.stdout.write(build.stdout + build.stderr)
        raise SystemExit(f"check_c_llm: the build failed ({build.returncode})")
    run = subprocess.run(make + ["-s", "run"], capture_output=True, text=True)
    sys.stdout.write(run.stdout + run.stderr)
    if run.returncode != 0:
        raise SystemExit(f"check_c_llm: the firmware exited with {run.returncode}")
    failures = []
    m = re.search(r"^text: (.*?)\nc-llm: (\d+) tokens; instructions: encoding the prompt (\d+), prefill of (\d+) "
                  r"tokens (\d+), per generated token (\d+)", run.stdout, re.S | re.M)
    if not m:
        raise SystemExit("check_c_llm: no text and instruction counts in the firmware's stdout")
    text = m.group(1)
    host = subprocess.run([attn, "generate", model, "--prompt", PROMPT, "--steps", str(STEPS)], capture_output=True,
                          text=True)
    if host.returncode != 0:
        raise SystemExit(f"check_c_llm: attn generate failed: {host.stderr}")
    want = host.stdout[:-1] if host.stdout.endswith("\n") else host.stdout
    if want.startswith(PROMPT) and not text.startswith(PROMPT):  # generate echoes a tokenizer model's prompt
        want = want[len(PROMPT):]
    print(f"host:  {want!r}\nboard: {text!r}")
    if text != want:
        failures.append("the board's text differs from attn generate's")
    if int(m.group(6)) <= 0:
        failures.append("no instruction count per token")

    target = "cortex-m4" if args.board == "an386" else "cortex-m55"
    info = subprocess.run([attn, "info", model, "--target", target, "--tokens-per-call", str(TOKENS), "--capacity",
                           str(CAPACITY)], capture_output=True, text=True)
    sizes = re.search(r"scratch (\d+) bytes .*\n\s+state (\d+) bytes", info.stdout)
    if info.returncode != 0 or not sizes:
        raise SystemExit(f"check_c_llm: attn info --target failed: {info.stdout}{info.stderr}")
    secs = sections(os.path.join(work, "c-llm.elf"))
    scratch, state = secs.get(".scratch", (0, 0)), secs.get(".kv_state", (0, 0))
    print(f"sections: .scratch {scratch[0]} bytes at {scratch[1]:#x}, .kv_state {state[0]} bytes at {state[1]:#x}; "
          f"attn info --target {target}: scratch {sizes.group(1)}, state {sizes.group(2)}")
    if scratch[0] != int(sizes.group(1)) or state[0] != int(sizes.group(2)):
        failures.append("the image's buffers are not exactly MODEL_ARENA_BYTES and MODEL_STATE_BYTES")
    if (scratch[1] >> 24) == (state[1] >> 24):
        failures.append("the two buffers are in the same RAM region")
    for f in failures:
        print(f"check_c_llm: FAIL: {f}")
    return 1 if failures else 0


if __name__ == "__main__":
    sys.exit(main())
