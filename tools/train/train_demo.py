#!/usr/bin/python3
"""Train the block demo model: does a sequence contain 佛跳墙?

tools/demo.sh now runs the whole BERT-style encoder of tests/data/demo_encoder
(tools/train/train_demo_encoder.py), which shares this script's data (vocab.txt,
test.txt, calib.txt). This script's model, two attention blocks with the
embeddings, residuals and head left to user code, stays as demo.attn: the
fixture of tests/demo_test.cpp (`attn quantize --residual`).

The task explains attention: a [CLS] token at position 0 must find the three
tokens 佛, 跳, 墙 adjacent and in this order anywhere in a 31-token sequence.
Negatives are hard: the three tokens scattered, adjacent in a wrong order, or
only two of them (often adjacent: 佛跳 or 跳墙).

Model (11,586 parameters, no LayerNorm and no MLP so that it quantizes
well: the residual stream is a plain sum the demo computes itself):

    x  = tok_emb[ids] + pos_emb                    [32, 32]
    x  = x + block0(x)                             nn.MultiheadAttention(32, 4 heads), self-attention
    x  = x + block1(x)                             nn.MultiheadAttention(32, 4 heads), self-attention
    logits = head_w @ x[0] + head_b                [2]: 0 = no, 1 = yes

Writes (deterministic for a given seed):
    tests/data/demo/vocab.txt   one token per line (UTF-8); the line number is the id
    tests/data/demo/test.txt    held-out set: "label id id ... id" per line (32 ids)
    tests/data/demo/calib.txt   calibration set for `attn quantize`, same format
    tests/data/demo/logits.txt  PyTorch's logits of the first 32 test sequences
    tests/data/demo/demo.attn   the model, exported with tools/export/attn_export.py (attn import), with the
                                embeddings and the head as user tensors tok_emb, pos_emb,
                                head_w, head_b
    --state PATH                the PyTorch state_dict (default out/demo_state.pt: out/ is the
                                untracked folder tools/demo.sh writes its models to)

Run with Debian's python3 (it has torch):  /usr/bin/python3 tools/train/train_demo.py
It takes about 2.5 minutes on one busy core (1500 steps of 256 fresh sequences)
and reaches 99.9% on the held-out set; a rerun writes byte-identical files.
"""
import argparse
import os
import random
import sys
import time

import torch
import torch.nn as nn

SEQ = 32  # [CLS] + 31 tokens
EMBED = 32
HEADS = 4
CLS, FO, TIAO, QIANG = 0, 1, 2, 3
# 60 filler tokens: common characters, none of them 佛 跳 墙.
FILLERS = ("的一是不了人我在有他这中大来上国个到说们为子和你地出道也时年"
           "得就那要下以生会自着去之过家学对可里后小么心多天而能好都然没")
VOCAB = ["[CLS]", "佛", "跳", "墙"] + list(FILLERS)
assert len(FILLERS) == 60 and len(set(VOCAB)) == len(VOCAB)
REPO = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))


def has_dish(seq):
    """True if 佛 跳 墙 occur adjacent and in this order (seq without [CLS])."""
    return any(seq[i:i + 3] == [FO, TIAO, QIANG] for i in range(len(seq) - 2))


def make_example(rng, positive):
    """One sequence of SEQ ids starting with [CLS], and its label."""
    n = SEQ - 1
    while True:
        seq = [rng.randrange(4, len(VOCAB)) for _ in range(n)]
        if positive:
            p = rng.randrange(n - 2)
            seq[p:p + 3] = [FO, TIAO, QIANG]
        else:
            kind = rng.randrange(3)
            if kind == 0:  # scattered: all three, at random distinct places
                for tok, p in zip((FO, TIAO, QIANG), rng.sample(range(n), 3)):
                    seq[p] = tok
            elif kind == 1:  # adjacent, wrong order
                perm = rng.choice([[FO, QIANG, TIAO], [TIAO, FO, QIANG], [TIAO, QIANG, FO],
                                   [QIANG, FO, TIAO], [QIANG, TIAO, FO]])
                p = rng.randrange(n - 2)
                seq[p:p + 3] = perm
            else:  # only two of them, mostly adjacent and in order (佛跳, 跳墙)
                pair = rng.choice([[FO, TIAO], [TIAO, QIANG], [FO, QIANG]])
                if rng.random() < 0.7:
                    p = rng.randrange(n - 1)
                    seq[p:p + 2] = pair
                else:
                    for tok, p in zip(pair, rng.sample(range(n), 2)):
                        seq[p] = tok
        # Distractors: sometimes sprinkle extra 佛/跳/墙 tokens anywhere.
        for _ in range(rng.choice([0, 0, 1, 2])):
            seq[rng.randrange(n)] = rng.choice([FO, TIAO, QIANG])
        if has_dish(seq) == positive:
            return [CLS] + seq, int(positive)


def make_set(rng, count):
    xs, ys = [], []
    for i in range(count):
        x, y = make_example(rng, positive=(i % 2 == 0))
        xs.append(x)
        ys.append(y)
    return torch.tensor(xs, dtype=torch.long), torch.tensor(ys, dtype=torch.long)


class DemoModel(nn.Module):
    def __init__(self):
        super().__init__()
        self.tok_emb = nn.Embedding(len(VOCAB), EMBED)
        self.pos_emb = nn.Parameter(torch.randn(SEQ, EMBED) * 0.5)
        self.blocks = nn.ModuleList(
            [nn.MultiheadAttention(EMBED, HEADS, batch_first=True) for _ in range(2)])
        self.head = nn.Linear(EMBED, 2)

    def forward(self, ids, need_weights=False):
        x = self.tok_emb(ids) + self.pos_emb  # [B, SEQ, E]
        weights = []
        for blk in self.blocks:
            y, w = blk(x, x, x, need_weights=need_weights, average_attn_weights=False)
            x = x + y
            weights.append(w)
        logits = self.head(x[:, 0])  # [B, 2]
        return (logits, weights) if need_weights else logits


def write_set(path, xs, ys):
    """One sequence a line: the label, then SEQ token ids."""
    with open(path, "w", encoding="utf-8") as f:
        for x, y in zip(xs.tolist(), ys.tolist()):
            f.write(f"{y} " + " ".join(map(str, x)) + "\n")


def accuracy(model, xs, ys):
    with torch.no_grad():
        return (model(xs).argmax(-1) == ys).float().mean().item()


def train(model, opt, sched, train_rng, steps, batch, val_acc):
    """The demos' training loop: `steps` steps of `batch` fresh sequences from
    train_rng, cross-entropy, gradients clipped to norm 1, the loss and val_acc()
    printed every 250 steps. Returns the seconds it took."""
    loss_fn = nn.CrossEntropyLoss()
    t0 = time.time()
    for step in range(1, steps + 1):
        xb, yb = make_set(train_rng, batch)
        loss = loss_fn(model(xb), yb)
        opt.zero_grad()
        loss.backward()
        nn.utils.clip_grad_norm_(model.parameters(), 1.0)
        opt.step()
        sched.step()
        if step % 250 == 0 or step == steps:
            print(f"step {step:5d}  loss {loss.item():.4f}  val acc {val_acc():.4f}"
                  f"  {time.time() - t0:.0f} s", flush=True)
    return time.time() - t0


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--seed", type=int, default=7)
    ap.add_argument("--steps", type=int, default=1500)
    ap.add_argument("--batch", type=int, default=256)
    ap.add_argument("--test-size", type=int, default=1000)
    ap.add_argument("--out", default=os.path.join(REPO, "tests", "data", "demo"))
    ap.add_argument("--state", default=os.path.join(REPO, "out", "demo_state.pt"))
    ap.add_argument("--threads", type=int, default=1)
    args = ap.parse_args()

    torch.set_num_threads(args.threads)
    torch.manual_seed(args.seed)
    train_rng = random.Random(args.seed)
    test_rng = random.Random(args.seed + 1000)  # held out: its own stream
    test_x, test_y = make_set(test_rng, args.test_size)
    val_x, val_y = make_set(random.Random(args.seed + 2000), 2000)

    model = DemoModel()
    n_params = sum(p.numel() for p in model.parameters())
    print(f"parameters: {n_params}")
    opt = torch.optim.AdamW(model.parameters(), lr=3e-3, weight_decay=0.01)
    sched = torch.optim.lr_scheduler.OneCycleLR(opt, max_lr=3e-3, total_steps=args.steps,
                                                pct_start=0.1)
    train(model, opt, sched, train_rng, args.steps, args.batch, lambda: accuracy(model, val_x, val_y))

    model.eval()
    acc = accuracy(model, test_x, test_y)
    print(f"held-out f32 accuracy: {acc * 100:.2f}% on {len(test_y)} sequences")

    os.makedirs(args.out, exist_ok=True)
    with open(os.path.join(args.out, "vocab.txt"), "w", encoding="utf-8") as f:
        f.write("\n".join(VOCAB) + "\n")
    write_set(os.path.join(args.out, "test.txt"), test_x, test_y)
    # Calibration set for `attn quantize`: the training distribution, not the test set.
    write_set(os.path.join(args.out, "calib.txt"), *make_set(random.Random(args.seed + 3000), 256))
    # PyTorch's logits of the first test sequences: the demo checks attn against them.
    with torch.no_grad():
        logits = model(test_x[:32]).tolist()
    with open(os.path.join(args.out, "logits.txt"), "w", encoding="utf-8") as f:
        f.write("".join(f"{a:.7e} {b:.7e}\n" for a, b in logits))
    os.makedirs(os.path.dirname(os.path.abspath(args.state)), exist_ok=True)
    torch.save(model.state_dict(), args.state)
    print(f"wrote vocab.txt, test.txt, calib.txt, logits.txt in {args.out}; {args.state}")
    export(model, os.path.join(args.out, "demo.attn"))
    return 0 if acc >= 0.99 else 1


# User tensors of the .attn file: name in the file -> key in the state_dict.
USER_TENSORS = {"tok_emb": "tok_emb.weight", "pos_emb": "pos_emb", "head_w": "head.weight",
                "head_b": "head.bias"}


def export(model, path):
    """Write the .attn through tools/export/attn_export.py (its Python API)."""
    sys.path.insert(0, os.path.join(REPO, "tools", "export"))
    import attn_export  # noqa: E402

    data = attn_export.export(model, path, extras=USER_TENSORS)
    print(f"wrote {path} ({len(data)} bytes)")


if __name__ == "__main__":
    sys.exit(main())
