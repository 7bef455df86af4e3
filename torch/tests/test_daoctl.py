# SPDX-License-Identifier: MIT
"""daoctl shows a PyTorch job and its tensors while it runs: after a few
training steps at a budget below the model's needs, `daoctl ps` lists the
process and `daoctl show PID --json` its job name, backend and budget, the
device bytes within the budget, every live storage (as many as the device
counts) with the names label_module gave the parameters."""
import json
import os
import subprocess

import torch

import dao_torch
import tap

DAOCTL = os.environ.get("DAOCTL", "build/bin/daoctl")


def daoctl(*args):
    p = subprocess.run([DAOCTL] + list(args) + ["--json"], capture_output=True, text=True)
    tap.ok(p.returncode == 0, "daoctl %s: status 0 %s" % (" ".join(args), p.stderr.strip()[:200]))
    try:
        return json.loads(p.stdout)
    except ValueError:
        return {}


def main():
    dao_torch.open(backend="host", budget=96 << 10, job="torch-daoctl-test")
    dev = dao_torch.device
    torch.manual_seed(0)
    model = torch.nn.Sequential(torch.nn.Linear(64, 128), torch.nn.ReLU(), torch.nn.Linear(128, 64)).to(dev)
    dao_torch.label_module(model, "net")
    opt = torch.optim.SGD(model.parameters(), lr=0.01, momentum=0.9)
    for _ in range(3):
        opt.zero_grad()
        model(torch.randn(32, 64).to(dev)).square().mean().backward()
        opt.step()
        dao_torch.iteration()
    dao_torch.synchronize()
    st = dao_torch.stats()
    pid = os.getpid()
    ps = daoctl("ps")
    procs = ps.get("processes", [])
    tap.ok(any(p.get("pid") == pid for p in procs), "daoctl ps lists this process (%d)" % pid)
    show = daoctl("show", str(pid))
    proc = show.get("process", {})
    tap.ok(proc.get("job") == "torch-daoctl-test" and proc.get("backend") == "host"
           and proc.get("budget_bytes") == st["budget_bytes"],
           "daoctl show: the job's name, backend and budget (%s)" % {k: proc.get(k) for k in ("job", "backend", "budget_bytes")})
    tap.ok(0 < proc.get("device_bytes", 0) <= proc.get("budget_bytes", 0) and proc.get("evictions", 0) == st["evictions"] > 0,
           "device bytes %s within the budget, %s evictions as the device counts"
           % (proc.get("device_bytes"), proc.get("evictions")))
    bufs = [b for d in show.get("devices", []) for b in d.get("buffers", [])]
    labels = {b.get("label") for b in bufs}
    want = {"net.0.weight", "net.0.bias", "net.2.weight", "net.2.bias"}
    tap.ok(len(bufs) == st["live_buffers"] and want <= labels,
           "its %d buffers (the device counts %d live), the parameters by name: %s"
           % (len(bufs), st["live_buffers"], sorted(want & labels)))
    del model, opt
    tap.ok(dao_torch.close() == 0, "no dao handle leaked")
    tap.done()


main()
