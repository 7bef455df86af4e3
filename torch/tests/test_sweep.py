# SPDX-License-Identifier: MIT
"""The operator sweep: every operator of PyTorch's own op database that
supports float32 on the CPU, on its first samples (made on the dao device:
factory functions and random fills included), as a function, in place and
with out= (from empty tensors: resized), on the host backend at a small
budget with the checker on (a kernel that writes an operand it declared
read, or draws random numbers undeclared, fails). Each result must equal
plain PyTorch's on the CPU bit for bit (within a tolerance for the few the
CPU itself does not reproduce); where the CPU itself raises, dao
must raise too; where dao cannot do what the CPU does, it must say so with
an error naming the operator (counted, listed). One TAP line per operator.
"""
import gc
import itertools
import os
import sys
import types
import unittest
import warnings

# PyTorch's test helpers import expecttest (not packaged in Debian 12) for
# the base class of their TestCase; the op database needs nothing else.
if "expecttest" not in sys.modules:
    _shim = types.ModuleType("expecttest")
    _shim.TestCase = unittest.TestCase
    _shim.ACCEPT = False
    sys.modules["expecttest"] = _shim

import torch  # noqa: E402
from torch.testing._internal.common_methods_invocations import op_db  # noqa: E402
from torch.utils._pytree import tree_flatten, tree_map  # noqa: E402

import dao_torch  # noqa: E402
import tap  # noqa: E402

BUDGET = 1 << 20
SAMPLES = int(os.environ.get("DAO_SWEEP_SAMPLES", "2"))
DEV = dao_torch.device

# Operators whose outputs are uninitialised memory: shapes are compared.
UNINITIALISED = {"empty", "empty_like", "new_empty", "new_empty_strided"}

# Operators whose CPU results depend on memory they do not initialise
# (LAPACK's gelsy workspace through linalg.lstsq): the CPU differs from
# itself across threads and allocations, so dao is held to a tolerance.
NOT_REPRODUCIBLE = {"linalg.lstsq"}

# Known divergences, each explained in Documentation/torch.md.
KNOWN = {
    ("addr", "inplace"): "the CPU's addr_ raises on a 0-d self; the composite addr_ resizes it",
}


def reopen():
    if dao_torch.is_open():
        dao_torch.close()
    dao_torch.open(backend="host", budget=BUDGET, check=True)


def host(x):
    if isinstance(x, torch.device) and x.type == DEV.type:
        return torch.device("cpu")
    if isinstance(x, torch.Tensor):
        return x.detach().cpu() if x.device.type != "cpu" else x.detach().clone()
    return x


def own(x):
    return x.detach().clone() if isinstance(x, torch.Tensor) else x


def bits(t):
    t = t.resolve_conj().resolve_neg().contiguous()
    return t.reshape(-1).view(torch.uint8) if t.numel() else t


def compare(a, b, exact=True):
    fa, sa = tree_flatten(a)
    fb, sb = tree_flatten(b)
    if len(fa) != len(fb):
        return "results differ in structure"
    for x, y in zip(fa, fb):
        if isinstance(x, torch.Tensor) != isinstance(y, torch.Tensor):
            return "a tensor against a %s" % type(y).__name__
        if not isinstance(x, torch.Tensor):
            if x != y and not (isinstance(x, float) and x != x and y != y):
                return "value %r, dao %r" % (x, y)
            continue
        y = y.cpu()
        if (x.dtype, x.shape) != (y.dtype, y.shape):
            return "%s%s, dao %s%s" % (x.dtype, tuple(x.shape), y.dtype, tuple(y.shape))
        if exact and not torch.equal(bits(x), bits(y)):
            return "values differ"
        if not exact and not torch.allclose(x, y, rtol=1e-4, atol=1e-5, equal_nan=True):
            return "values differ beyond the CPU's own run-to-run spread"
    return None


def call(fn, sample, on_dao, out=None, conv=None):
    """Run fn on the sample (dao tensors, or CPU copies of them);
    ('ok', results, inputs after) or ('raise', message)."""
    conv = conv or (own if on_dao else host)
    dao_torch.synchronize()
    torch.manual_seed(7)
    try:
        inp = tree_map(conv, sample.input)
        args = tree_map(conv, sample.args)
        kwargs = tree_map(conv, sample.kwargs)
        if out is not None:
            kwargs["out"] = out
        res = fn(inp, *args, **kwargs)
        return ("ok", tree_map(host, res), tree_map(host, inp))
    except Exception as e:  # noqa: BLE001 - any error is an outcome
        return ("raise", "%s: %s" % (type(e).__name__, str(e).split("\n")[0][:160]))


def empty_outs(res, device):
    return tree_map(lambda t: torch.empty(0, dtype=t.dtype, device=device)
                    if isinstance(t, torch.Tensor) else t, res)


def check_one(op, variant, fn, i, sample, refused):
    """One sample of one variant: None when dao agrees, else the problem."""
    out_ref = out_dao = None
    if variant == "out":
        first = call(fn, sample, False)
        if first[0] != "ok" or not isinstance(first[1], (torch.Tensor, tuple)):
            return None
        out_ref = empty_outs(first[1], "cpu")
        out_dao = empty_outs(first[1], DEV)
    ref = call(fn, sample, False, out_ref)
    got = call(fn, sample, True, out_dao)
    failed = dao_torch._C.failure()
    if failed:
        reopen()
        if failed.startswith("checker:"):
            return failed
        if ref[0] == "raise":
            return None  # the CPU raises, dao's kernel failed: both refuse
        if "dao: " in failed:
            refused.append("%s[%d]: %s" % (variant, i, failed))
            return None
        return "a kernel failed: " + failed
    if ref[0] == "raise" and got[0] == "raise":
        return None
    if ref[0] == "raise":
        return "the CPU raises (%s), dao does not" % ref[1]
    if got[0] == "raise":
        if got[1].split(": ", 1)[-1].startswith("dao: "):
            refused.append("%s[%d]: %s" % (variant, i, got[1]))
            return None
        return "dao raises %s" % got[1]
    if op.name in UNINITIALISED:
        fa, _ = tree_flatten(ref[1])
        fb, _ = tree_flatten(got[1])
        same = [x.shape for x in fa] == [x.shape for x in fb]
        return None if same else "shapes differ"
    exact = op.name not in NOT_REPRODUCIBLE
    problem = compare(ref[1], got[1], exact) or compare(ref[2], got[2], exact)
    if problem and out_ref is not None:
        problem = compare(out_ref, out_dao, exact)
    return problem


def main():
    warnings.simplefilter("ignore")
    reopen()
    ops = [op for op in op_db if torch.float32 in op.supported_dtypes("cpu")]
    only = sys.argv[1:]
    refused_all = 0
    samples = s = None
    for op in ops:
        if only and op.name not in only:
            continue
        name = op.name + ("." + op.variant_test_name if op.variant_test_name else "")
        try:
            samples = list(itertools.islice(
                op.sample_inputs(DEV, torch.float32, requires_grad=False), SAMPLES))
        except Exception as e:  # noqa: BLE001
            reopen()
            refusal = str(e).startswith("dao: ")
            tap.ok(refusal, "%s: its samples cannot be made on the device%s: %s"
                   % (name, ", refused with a dao error" if refusal else "", e))
            continue
        variants = [("fn", op.op)]
        if op.inplace_variant is not None:
            variants.append(("inplace", op.inplace_variant))
        if op.supports_out:
            variants.append(("out", op.op))
        problems, known, refused = [], [], []
        for variant, fn in variants:
            for i, s in enumerate(samples):
                p = check_one(op, variant, fn, i, s, refused)
                if p and (op.name, variant) in KNOWN:
                    known.append("%s[%d]: %s" % (variant, i, p))
                elif p:
                    problems.append("%s[%d]: %s" % (variant, i, p))
        refused_all += len(refused)
        label = "%s (%d samples)" % (name, len(samples))
        if refused:
            label += ", refused with a dao error: " + "; ".join(refused)[:300]
        if known:
            tap.ok(False, label + ": " + "; ".join(known)[:300],
                   todo=KNOWN[(op.name, known[0].split("[")[0])])
        else:
            tap.ok(not problems, label + (": " + "; ".join(problems)[:400] if problems else ""))
    del samples, s
    gc.collect()
    st = dao_torch.stats()
    tap.diag("refused with a dao error: %d samples" % refused_all)
    tap.diag("waits: %s" % st["wait_reasons"])
    tap.ok(dao_torch.close() == 0, "no dao handle leaked")
    tap.done()


main()
