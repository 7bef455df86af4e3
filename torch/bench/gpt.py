# SPDX-License-Identifier: MIT
"""A GPT-style transformer trained on the dao device at a budget below its
step's peak, beside plain PyTorch in memory and beside PyTorch's own offload
of saved activations (torch.autograd.graph.save_on_cpu, pinned), in one run:
step time, tokens/s, bytes each way, peak device bytes and the loss curve.

On a GPU (tools/gpubench/torch-evidence.sh runs it): plain PyTorch on
cuda, save_on_cpu on cuda, then dao on cuda-explicit and cuda-managed at
the plain step's peak / --ratio. On a machine without one (--cpu, the
rehearsal in `make check`): plain PyTorch on the CPU and dao on the host
backend; save_on_cpu needs CUDA and is recorded as skipped.

The JSON result (--out) is rewritten after every run, so what finished is
kept when a deadline (--deadline, epoch seconds) stops the rest; a run that
would not end before it is recorded as skipped.

    PYTHONPATH=build/torch/rel python3 torch/bench/gpt.py --cpu --size tiny --out gpt.json
"""
import argparse
import gc
import json
import math
import os
import platform
import sys
import time
import traceback

import torch

SIZES = {
    # layers, width, heads, vocabulary, sequence, batch
    "tiny": dict(layers=2, width=32, heads=2, vocab=64, seq=16, batch=4),
    "small": dict(layers=4, width=128, heads=4, vocab=512, seq=64, batch=8),
    # GPT-2 small's shape: a step of about 0.2 s and some 10 GiB on an H100.
    "full": dict(layers=12, width=768, heads=12, vocab=32768, seq=512, batch=16),
}


class GPT(torch.nn.Module):
    """Token and position embeddings, pre-norm causal encoder layers from
    torch.nn, a tied language-model head."""

    def __init__(self, layers, width, heads, vocab, seq, **_):
        super().__init__()
        self.tok = torch.nn.Embedding(vocab, width)
        self.pos = torch.nn.Embedding(seq, width)
        for e in (self.tok, self.pos):  # GPT-2's scale: the tied head's logits start near 0
            torch.nn.init.normal_(e.weight, std=0.02)
        layer = torch.nn.TransformerEncoderLayer(width, heads, 4 * width, dropout=0.0,
                                                 activation="gelu", batch_first=True,
                                                 norm_first=True)
        self.blocks = torch.nn.TransformerEncoder(layer, layers)
        self.norm = torch.nn.LayerNorm(width)
        self.register_buffer("mask", torch.triu(torch.full((seq, seq), float("-inf")), 1))

    def forward(self, x):
        pos = torch.arange(x.shape[1], device=x.device)
        h = self.blocks(self.tok(x) + self.pos(pos), mask=self.mask)
        return torch.nn.functional.linear(self.norm(h), self.tok.weight)


def batches(cfg, steps):
    g = torch.Generator().manual_seed(1)
    return [torch.randint(0, cfg["vocab"], (cfg["batch"], cfg["seq"] + 1), generator=g)
            for _ in range(steps)]


class Result:
    def __init__(self, path, deadline):
        self.path, self.deadline = path, deadline
        self.doc = {"host": platform.node(), "date": time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime()),
                    "torch": torch.__version__, "cuda": torch.version.cuda, "runs": []}

    def left(self):
        return self.deadline - time.time() if self.deadline else math.inf

    def write(self):
        if not self.path:
            return
        tmp = self.path + ".tmp"
        with open(tmp, "w") as f:
            json.dump(self.doc, f, indent=1, sort_keys=True)
        os.replace(tmp, self.path)

    def add(self, run):
        self.doc["runs"].append(run)
        self.write()
        print("%-16s %s" % (run["name"], json.dumps({k: v for k, v in run.items()
                                                     if k not in ("name", "losses")})), flush=True)


def train(cfg, data, device, where, hooks=None, on_dao=False):
    """Steps on `device`; the first is a warm-up outside the times. Returns
    the losses and the seconds of each step (each ends with its loss on the
    CPU, which waits for everything the step queued)."""
    if on_dao:
        import dao_torch
    torch.manual_seed(0)
    model = GPT(**cfg).to(device)
    opt = torch.optim.SGD(model.parameters(), lr=0.01, momentum=0.9, weight_decay=1e-4)
    losses, times = [], []
    for x in data:
        t0 = time.perf_counter()
        x = x.to(device)
        opt.zero_grad(set_to_none=True)
        with hooks() if hooks else _nothing():
            logits = model(x[:, :-1])
            loss = torch.nn.functional.cross_entropy(logits.reshape(-1, cfg["vocab"]),
                                                     x[:, 1:].reshape(-1))
            loss.backward()
        opt.step()
        if on_dao:
            dao_torch.iteration()
        losses.append(loss.item())
        # The whole step, the optimizer's kernels too: .item() waits only
        # for what the loss needs on dao.
        if on_dao:
            dao_torch.synchronize()
        elif where == "cuda":
            torch.cuda.synchronize()
        times.append(time.perf_counter() - t0)
        del x, logits, loss
    del model, opt
    gc.collect()
    return losses, times


class _nothing:
    def __enter__(self):
        return self

    def __exit__(self, *a):
        return False


def where_raised(e):
    """The last frames of an exception's traceback, innermost last: which
    line of the model or of PyTorch raised it."""
    return [fs.filename.rsplit("/", 2)[-1] + ":%d %s" % (fs.lineno, fs.name)
            for fs in traceback.extract_tb(e.__traceback__)[-6:]]


def summary(name, cfg, losses, times, **extra):
    steady = times[1:] or times
    step = sorted(steady)[len(steady) // 2]
    return dict(name=name, losses=losses, step_s=step, steps=len(times), step_times=times,
                tokens_per_s=cfg["batch"] * cfg["seq"] / step, **extra)


def saved_bytes(cfg, data, device):
    """The bytes save_on_cpu moves each way per step: every tensor autograd
    saves on the device in the forward pass (counted by a pass of our own
    hooks; save_on_cpu copies each to pinned host memory and back)."""
    torch.manual_seed(0)
    model = GPT(**cfg).to(device)
    total = [0]

    def pack(t):
        if t.device.type == "cuda":
            total[0] += t.numel() * t.element_size()
        return t
    with torch.autograd.graph.saved_tensors_hooks(pack, lambda t: t):
        x = data[0].to(device)
        model(x[:, :-1]).sum()
    del model
    gc.collect()
    return total[0]


def main():
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    p.add_argument("--size", choices=sorted(SIZES), default="tiny")
    p.add_argument("--cpu", action="store_true", help="no GPU: the CPU and the host backend")
    p.add_argument("--ratio", type=float, default=2.0, help="the plain step's peak / the budget")
    p.add_argument("--steps", type=int, default=4, help="steps per run, the first a warm-up")
    p.add_argument("--backends", default=None, help="dao backends, comma-separated")
    p.add_argument("--out", default=None, help="the JSON result, rewritten after every run")
    p.add_argument("--deadline", type=float, default=0, help="epoch seconds to end by")
    p.add_argument("--meta", default="{}", help="a JSON object merged into the result")
    p.add_argument("--trace-dir", default=None,
                   help="write each dao run's DAO_TRACE there (torch-BACKEND.trace), for daosim")
    args = p.parse_args()
    cfg = SIZES[args.size]
    res = Result(args.out, args.deadline)
    res.doc.update(json.loads(args.meta))
    res.doc.update(size=args.size, config=cfg, ratio=args.ratio, steps=args.steps)
    where = "cpu" if args.cpu else "cuda"
    if where == "cuda" and not torch.cuda.is_available():
        res.doc["skipped"] = "torch %s sees no CUDA device" % torch.__version__
        res.write()
        print("gpt: skipped: " + res.doc["skipped"])
        return 0
    # Deterministic mode: the same kernels in the same order give the same
    # bits, so the loss curves compare exactly.
    os.environ.setdefault("CUBLAS_WORKSPACE_CONFIG", ":4096:8")
    # warn_only: an operator without a deterministic kernel is named, not fatal.
    torch.use_deterministic_algorithms(True, warn_only=True)
    torch.backends.cudnn.benchmark = False
    data = batches(cfg, args.steps)
    # When dao_torch is imported matters to PyTorch's autograd engine
    # (Documentation/torch.md, "CUDA beside dao"). On cuda: after the plain
    # runs, since from PyTorch 2.8 a named PrivateUse1 backend becomes the
    # process's accelerator and a CUDA backward then fails in the engine
    # (pytorch/pytorch#161129). On the CPU: before the first backward, the
    # moment the engine counts the devices it keeps a queue for.
    if where == "cpu":
        import dao_torch

    # 1. Plain PyTorch, everything in memory: the reference curve and peak.
    t0 = time.time()
    if where == "cuda":
        torch.cuda.empty_cache()
        torch.cuda.reset_peak_memory_stats()
        free0, total = torch.cuda.mem_get_info()
        res.doc.update(device_name=torch.cuda.get_device_name(0), device_free_bytes=free0,
                       device_total_bytes=total)
    try:
        ref, times = train(cfg, data, where, where)
    except Exception as e:  # noqa: BLE001 - recorded: nothing compares without it
        res.add(dict(name="memory", error="%s: %s" % (type(e).__name__, e), where=where_raised(e)))
        return 1
    if where == "cuda":
        peak = torch.cuda.max_memory_allocated()
    else:
        # No allocator to ask on the CPU: dao's own peak with no limit.
        dao_torch.open(backend="host", deterministic=True)
        train(cfg, data[:1], dao_torch.device, "dao", on_dao=True)
        peak = dao_torch.stats()["peak_device_bytes"]
        dao_torch.close()
    res.add(summary("memory", cfg, ref, times, peak_device_bytes=peak, h2d_bytes=0, d2h_bytes=0,
                    device=where, seconds=time.time() - t0))
    once = time.time() - t0
    budget = int(peak / args.ratio)
    res.doc["budget_bytes"] = budget

    # 2. save_on_cpu: activations to pinned host memory and back.
    if where != "cuda":
        res.add(dict(name="save_on_cpu", skipped="needs CUDA (pinned host memory, a device to offload from)"))
    elif res.left() < 2 * once + 5:
        res.add(dict(name="save_on_cpu", skipped="time: %.0f s left" % res.left()))
    else:
        t0 = time.time()
        torch.cuda.empty_cache()
        torch.cuda.reset_peak_memory_stats()
        losses, times = train(cfg, data, where, where,
                              hooks=lambda: torch.autograd.graph.save_on_cpu(pin_memory=True))
        moved = saved_bytes(cfg, data, where)
        res.add(summary("save_on_cpu", cfg, losses, times, equal_to_memory=losses == ref,
                        peak_device_bytes=torch.cuda.max_memory_allocated(),
                        h2d_bytes=moved, d2h_bytes=moved, seconds=time.time() - t0))

    # 3. dao at the budget, on each backend.
    import dao_torch
    backends = (args.backends or ("host" if where == "cpu" else "cuda-explicit,cuda-managed")).split(",")
    for be in backends:
        name = "dao " + be
        if res.left() < 4 * once + 5:
            res.add(dict(name=name, skipped="time: %.0f s left" % res.left()))
            continue
        if where == "cuda":
            # What PyTorch's caching allocator kept from the runs before
            # goes back to the card: libdao allocates its own.
            gc.collect()
            torch.cuda.empty_cache()
        if be == "cuda-managed":
            # Managed memory holds every tensor of the step: never more
            # than the card has free now.
            free, _ = torch.cuda.mem_get_info()
            if peak > free * 15 // 16:
                res.add(dict(name=name, skipped="the step's %d bytes of managed memory are more than "
                             "15/16 of the %d bytes free" % (peak, free)))
                continue
        t0 = time.time()
        trace = os.path.join(args.trace_dir, "torch-%s.trace" % be) if args.trace_dir else None
        try:
            dao_torch.open(backend=be, budget=budget, deterministic=True, trace=trace)
            losses, times = train(cfg, data, dao_torch.device, "dao", on_dao=True)
            st = dao_torch.stats()
            # The policy in force at the end: with none chosen, plan from
            # a mark after the first eviction (libdao.md, DAO_POLICY).
            conf = dao_torch.info()
            leaked = dao_torch.close()
        except Exception as e:  # noqa: BLE001 - recorded, the next run goes on
            if dao_torch.is_open():
                dao_torch.close()
            res.add(dict(name=name, error="%s: %s" % (type(e).__name__, e), where=where_raised(e)))
            continue
        run = summary(name, cfg, losses, times, equal_to_memory=losses == ref,
                      peak_device_bytes=st["peak_device_bytes"], budget_bytes=st["budget_bytes"],
                      h2d_bytes=st["h2d_bytes"], d2h_bytes=st["d2h_bytes"], evictions=st["evictions"],
                      stall_ns=st["stall_ns"], waits=st["waits"], leaked=leaked,
                      seconds=time.time() - t0, policy=conf["policy"],
                      lookahead=conf["lookahead"])
        if trace:
            run["trace"] = os.path.basename(trace)
        mem = res.doc["runs"][0]["step_s"]
        run["vs_memory"] = run["step_s"] / mem
        res.add(run)
    res.doc["complete"] = True
    res.write()
    return 0


if __name__ == "__main__":
    sys.exit(main())
