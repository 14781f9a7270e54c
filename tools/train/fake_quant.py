#!/usr/bin/python3
"""A simple int8 fake quantization for estimating how a float model quantizes.

The scheme follows attn's s8 blocks (attn/attention_fixed.h): weights int8
symmetric per output channel (rows of an [out, in] matrix; rows of an
embedding table), activations int8 asymmetric per tensor with min/max
calibration. It is an estimate of the accuracy an s8 model can reach, not a
model of attn's integer kernels (those also round softmax, norms and
activations in fixed point).

    fq = ActQuant()
    fq.mode = "calib"; model(calib batches, fq=fq)   # record min/max per name
    fq.mode = "quant"; model(test batches, fq=fq)    # round to int8 at every fq(name, x)
    quantize_weights_(state_dict-like {name: tensor}, names)  # in place
    q, fq = quantized(Model(), model, names, calib)   # all three, on a copy
"""
import torch


class ActQuant:
    """fq(name, x): identity ("off"), records min/max ("calib"), or rounds x to
    int8 with the recorded range ("quant")."""

    def __init__(self):
        self.mode = "off"
        self.ranges = {}
        self.skip = lambda name: False  # names left in float

    def __call__(self, name, x):
        if self.mode == "off" or self.skip(name):
            return x
        if self.mode == "calib":
            lo, hi = x.min().item(), x.max().item()
            if name in self.ranges:
                plo, phi = self.ranges[name]
                lo, hi = min(lo, plo), max(hi, phi)
            self.ranges[name] = (lo, hi)
            return x
        lo, hi = self.ranges[name]
        lo, hi = min(lo, 0.0), max(hi, 0.0)  # zero is exact
        scale = max(hi - lo, 1e-12) / 255.0
        zp = max(-128, min(127, round(-128 - lo / scale)))
        q = torch.clamp(torch.round(x / scale) + zp, -128, 127)
        return (q - zp) * scale


def quantize_rows(w):
    """int8 symmetric per row (output channel): the rounded float weights."""
    amax = w.abs().amax(dim=-1, keepdim=True).clamp_min(1e-12)
    scale = amax / 127.0
    return torch.clamp(torch.round(w / scale), -127, 127) * scale


@torch.no_grad()
def quantize_weights_(module, names):
    """Replace the parameters `names` of `module` (2-D: [out, in] or [rows, E])
    by their per-row int8 roundings."""
    params = dict(module.named_parameters())
    for name in names:
        p = params[name]
        p.copy_(quantize_rows(p))


def quantized(fresh, model, names, calib, skip=None):
    """`fresh` (a new model of model's architecture) with model's weights, its
    parameters `names` int8 (quantize_weights_), in eval mode, and an ActQuant
    calibrated by one fresh(calib, fq) (the names `skip` accepts stay float),
    returned in "quant" mode: (fresh, fq)."""
    fresh.load_state_dict(model.state_dict())
    fresh.eval()
    quantize_weights_(fresh, names)
    fq = ActQuant()
    if skip is not None:
        fq.skip = skip
    fq.mode = "calib"
    with torch.no_grad():
        fresh(calib, fq)
    fq.mode = "quant"
    return fresh, fq
