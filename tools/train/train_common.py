"""What the training scripts (train_demo_encoder.py, train_tiny_llama.py) share:
their common command-line options and their optimizer."""
import argparse

import torch


def training_parser(doc, seed, batch, weight_decay):
    """An argument parser with --seed, --steps, --batch, --lr, --weight-decay and --threads."""
    ap = argparse.ArgumentParser(description=doc.split("\n")[0])
    ap.add_argument("--seed", type=int, default=seed)
    ap.add_argument("--steps", type=int, default=1500)
    ap.add_argument("--batch", type=int, default=batch)
    ap.add_argument("--lr", type=float, default=3e-3)
    ap.add_argument("--weight-decay", type=float, default=weight_decay)
    ap.add_argument("--threads", type=int, default=1)
    return ap


def one_cycle_adamw(model, args, pct_start, **adamw):
    """AdamW with weight decay on the matrices only (not on biases and norms),
    under a one-cycle learning rate of peak args.lr over args.steps steps."""
    decay = [p for p in model.parameters() if p.dim() == 2]
    no_decay = [p for p in model.parameters() if p.dim() != 2]
    opt = torch.optim.AdamW([{"params": decay, "weight_decay": args.weight_decay},
                             {"params": no_decay, "weight_decay": 0.0}], lr=args.lr, **adamw)
    sched = torch.optim.lr_scheduler.OneCycleLR(opt, max_lr=args.lr, total_steps=args.steps, pct_start=pct_start)
    return opt, sched
