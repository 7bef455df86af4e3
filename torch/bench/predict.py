# SPDX-License-Identifier: MIT
"""Predict before the run: a training step on the dao device recorded with
DAO_TRACE, replayed by daosim on a device file of this machine's measured
rates, against the time the host backend took for the same step.

    make predict-torch      (or: PYTHONPATH=build/torch/rel python3 torch/bench/predict.py)

What is timed is what daosim models: the device's side. The program (the
GPT-style model of gpt.py, --steps training steps at its peak / --ratio)
is submitted whole, deterministic, with a lookahead larger than it, so the
executor starts nothing until the job waits once at the end; the wait is
the measured time, and daosim replays the trace at the same budget, policy
and lookahead. Deterministic runs make the same decisions on both sides
(test_sim_backend_match), so the bytes each way and the evictions must be
equal; the time is a model, and the margin (--margin) says how far it may
be.

The device file (printed) is this machine's: copies are memcpy on the
host backend's copy thread (h2d_gbps, d2h_gbps: a 64 MiB tensor copy), a
kernel is a PyTorch CPU operator on the executor thread (tflops: a 256 x
256 matmul on one thread; mem_gbps: an add over 16 MiB; launch_ns: what a
16-element operator costs the executor, dispatch and all, the mean over
five kinds)."""
import argparse
import json
import os
import platform
import subprocess
import sys
import tempfile
import time

import torch

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import gpt  # noqa: E402

import dao_torch  # noqa: E402

LOOKAHEAD = 65536
# The host backend places each buffer at a multiple of its arena's unit
# (HOST_UNIT, libdao/src/backend/host.c); daosim's device places bytes.
# The trace replayed for the host backend has its buffers rounded up to it,
# so that both see the same bytes.
HOST_UNIT = 256


def host_sized(trace, out):
    """The trace with every buffer's bytes rounded up to HOST_UNIT."""
    with open(trace) as f, open(out, "w") as g:
        for line in f:
            w = line.split(" ")
            if w[0] == "b":
                w[2] = str(-(-int(w[2]) // HOST_UNIT) * HOST_UNIT)
                line = " ".join(w)
                if not line.endswith("\n"):
                    line += "\n"
            g.write(line)


def best(fn, repeat=5):
    out = None
    for _ in range(repeat):
        t0 = time.perf_counter()
        fn()
        t = time.perf_counter() - t0
        out = t if out is None else min(out, t)
    return out


def measure_rates():
    """This machine's rates, as the host backend sees them."""
    n = 16 << 20  # floats: 64 MiB
    a, b = torch.empty(n), torch.ones(n)
    copy = (4 * n) / best(lambda: a.copy_(b))
    m = 4 << 20
    x, y, z = torch.ones(m), torch.ones(m), torch.empty(m)
    mem = (3 * 4 * m) / best(lambda: torch.add(x, y, out=z))
    p, q, r = torch.randn(256, 256), torch.randn(256, 256), torch.empty(256, 256)
    flops = (2 * 256 ** 3 * 8) / best(lambda: [torch.mm(p, q, out=r) for _ in range(8)])
    # The executor's cost of one tiny operator, all of it overhead: the
    # mean over the kinds a training step is made of (a fresh output, an
    # out= argument, in place, a reduction).
    dao_torch.open(backend="host", budget="64M", lookahead=LOOKAHEAD, deterministic=True)
    s = [torch.ones(16).to(dao_torch.device) for _ in range(3)]
    dao_torch.synchronize()
    k = 1000
    keep = []
    for _ in range(k):
        keep.append(torch.relu(s[0]))
        keep.append(s[0] * s[1])
        torch.add(s[0], s[1], out=s[2])
        s[2].mul_(0.5)
        keep.append(s[2].sum())
    t0 = time.perf_counter()
    dao_torch.synchronize()
    launch = (time.perf_counter() - t0) / (5 * k)
    del s, keep
    dao_torch.close()
    return dict(h2d_gbps=copy / 1e9, d2h_gbps=copy / 1e9, tflops=flops / 1e12,
                mem_gbps=mem / 1e9, launch_ns=launch * 1e9)


def device_file(rates, path):
    with open(path, "w") as f:
        f.write("# this machine as the host backend runs it (torch/bench/predict.py)\n")
        f.write("name host-measured\n")
        for k in ("h2d_gbps", "d2h_gbps", "tflops", "mem_gbps"):
            f.write("%s %.6g\n" % (k, rates[k]))
        if round(rates["launch_ns"]) > 0:
            f.write("launch_ns %d\n" % round(rates["launch_ns"]))
        f.write("memory_gib %d\n" % 64)
        f.write("contiguous 1\n")  # the host arena: one range per buffer, as the host backend places them


def program(cfg, steps, device):
    """The traced program: the model onto the device, `steps` training
    steps, the losses summed on the device (no wait inside)."""
    torch.manual_seed(0)
    model = gpt.GPT(**cfg).to(device)
    opt = torch.optim.SGD(model.parameters(), lr=0.01, momentum=0.9, weight_decay=1e-4)
    total = None
    for x in gpt.batches(cfg, steps):
        x = x.to(device)
        opt.zero_grad(set_to_none=True)
        logits = model(x[:, :-1])
        loss = torch.nn.functional.cross_entropy(logits.reshape(-1, cfg["vocab"]), x[:, 1:].reshape(-1))
        loss.backward()
        opt.step()
        total = loss.detach() if total is None else total + loss.detach()
        if device != "cpu":
            dao_torch.iteration()
    return total


def measure_run(cfg, steps, budget, trace):
    # The policy daosim replays it with, chosen: with none chosen the job
    # would take plan at a mark after its first eviction (libdao.md,
    # DAO_POLICY), which a replay under one named policy does not do.
    dao_torch.open(backend="host", budget=budget, lookahead=LOOKAHEAD, deterministic=True, trace=trace,
                   policy="dao")
    t0 = time.perf_counter()
    total = program(cfg, steps, dao_torch.device)
    submit = time.perf_counter() - t0
    t0 = time.perf_counter()
    dao_torch.synchronize()
    run = time.perf_counter() - t0
    st = dao_torch.stats()  # before the read below, which the trace does not record
    loss = total.item()
    del total
    dao_torch.close()
    return dict(submit_s=submit, run_s=run, loss=loss, stats=st)


def peak_of(cfg, steps):
    dao_torch.open(backend="host", deterministic=True)
    program(cfg, steps, dao_torch.device).item()
    peak = dao_torch.stats()["peak_device_bytes"]
    dao_torch.close()
    return peak


def daosim(trace, budget, devfile):
    exe = os.environ.get("DAOSIM", "build/bin/daosim")
    out = subprocess.run([exe, "--budget", str(budget), "--policy", "dao", "--lookahead", str(LOOKAHEAD),
                          "--device", devfile, "--time-bound-limit", "0", "--json", trace],
                         check=True, capture_output=True, text=True).stdout
    t = json.loads(out)["traces"][0]
    return t, t["policies"][0]


def predict(size, steps, ratio, workdir, rates=None):
    """Everything one prediction needs; returns a dict of the figures."""
    cfg = gpt.SIZES[size]
    rates = rates or measure_rates()
    devfile = os.path.join(workdir, "host.device")
    device_file(rates, devfile)
    peak = peak_of(cfg, steps)
    budget = int(peak / ratio)
    trace = os.path.join(workdir, "step.trace")
    got = measure_run(cfg, steps, budget, trace)
    host_sized(trace, trace + ".host")
    t, sim = daosim(trace + ".host", budget, devfile)
    return dict(size=size, steps=steps, ratio=ratio, peak=peak, budget=budget, rates=rates,
                devfile=open(devfile).read(), measured=got, trace=t, sim=sim,
                error=(sim["modeled_ns"] / 1e9 - got["run_s"]) / got["run_s"])


def main():
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    p.add_argument("--size", choices=sorted(gpt.SIZES), default="small")
    p.add_argument("--steps", type=int, default=3)
    p.add_argument("--ratio", type=float, default=2.0, help="the step's peak / the budget")
    p.add_argument("--margin", type=float, default=0.5,
                   help="the largest |daosim - measured| / measured accepted (exit 1 beyond it)")
    args = p.parse_args()
    torch.set_num_threads(1)  # the executor's kernels on one core, as the rates are measured
    with tempfile.TemporaryDirectory() as d:
        r = predict(args.size, args.steps, args.ratio, d)
    m, s = r["measured"], r["sim"]
    print("dao_torch prediction, %s, torch %s, %s" % (platform.node(), torch.__version__,
                                                        time.strftime("%Y-%m-%d")))
    print("device file:\n  " + r["devfile"].strip().replace("\n", "\n  "))
    print("model: gpt.py %s, %d steps, budget %d bytes (peak %d / %.3g), %d kernels"
          % (args.size, args.steps, r["budget"], r["peak"], args.ratio, r["trace"]["kernels"]))
    print("%-22s %14s %14s" % ("", "host backend", "daosim"))
    print("%-22s %14.4f %14.4f" % ("seconds", m["run_s"], s["modeled_ns"] / 1e9))
    for k in ("h2d_bytes", "d2h_bytes", "evictions", "fetches", "writebacks"):
        print("%-22s %14d %14d" % (k, m["stats"][k], s[k]))
    print("job thread, submitting: %.4f s (not modeled: it ran before the executor started)" % m["submit_s"])
    ok = abs(r["error"]) <= args.margin
    print("error (daosim - measured) / measured: %+.1f%%, margin %.0f%%: %s"
          % (100 * r["error"], 100 * args.margin, "within" if ok else "OUTSIDE"))
    return 0 if ok else 1


if __name__ == "__main__":
    sys.exit(main())
