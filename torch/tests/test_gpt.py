# SPDX-License-Identifier: MIT
"""The GPU evidence's program (torch/bench/gpt.py, run on a GPU by
tools/gpubench/torch-evidence.sh) rehearsed on the CPU: plain PyTorch
against dao on the host backend at half the step's peak. Its JSON has
every run, the loss curves equal bit for bit, dao's peak within the
budget with bytes moved each way, save_on_cpu recorded as skipped with
the reason (it needs CUDA), the dao run's trace written where --trace-dir
says, and a deadline already past skips the dao runs, saying so, with
what finished kept."""
import json
import os
import subprocess
import sys
import tempfile
import time

import tap

HERE = os.path.dirname(os.path.abspath(__file__))
GPT = os.path.join(HERE, "..", "bench", "gpt.py")


def run(out, *extra):
    return subprocess.run([sys.executable, GPT, "--cpu", "--size", "tiny", "--steps", "3", "--out", out,
                           "--meta", '{"status": "ok", "build_s": 0}'] + list(extra),
                          capture_output=True, text=True)


def main():
    with tempfile.TemporaryDirectory() as d:
        out = os.path.join(d, "torch.json")
        p = run(out, "--trace-dir", d)
        tap.ok(p.returncode == 0, "gpt.py --cpu ends with status 0 %s" % p.stderr[-500:])
        doc = json.load(open(out)) if os.path.exists(out) else {}
        runs = {r["name"]: r for r in doc.get("runs", [])}
        tap.ok(doc.get("complete") and doc.get("status") == "ok" and list(runs) == ["memory", "save_on_cpu", "dao host"],
               "the JSON has every run in order, the extra fields merged: %s" % list(runs))
        mem, dao = runs.get("memory", {}), runs.get("dao host", {})
        tap.ok(len(mem.get("losses", [])) == 3 and dao.get("losses") == mem["losses"] and dao.get("equal_to_memory"),
               "dao's loss curve equals plain PyTorch's bit for bit: %s" % dao.get("losses"))
        tap.ok(0 < dao.get("peak_device_bytes", 0) <= doc.get("budget_bytes", 0) == mem.get("peak_device_bytes", 0) // 2,
               "dao's peak %s within the budget %s, half the step's peak %s"
               % (dao.get("peak_device_bytes"), doc.get("budget_bytes"), mem.get("peak_device_bytes")))
        tap.ok(dao.get("h2d_bytes", 0) > 0 and dao.get("d2h_bytes", 0) > 0 and dao.get("leaked") == 0
               and dao.get("step_s", 0) > 0 and dao.get("tokens_per_s", 0) > 0,
               "bytes moved each way (%s, %s), step time and tokens/s, no handle leaked"
               % (dao.get("h2d_bytes"), dao.get("d2h_bytes")))
        trace = os.path.join(d, dao.get("trace", "none"))
        head = open(trace).readline() if os.path.exists(trace) else ""
        tap.ok(dao.get("trace") == "torch-host.trace" and head.startswith("dao-trace ") and
               len(dao.get("step_times", [])) == 3 and dao.get("lookahead", 0) > 0 and
               dao.get("policy") == ("plan" if dao.get("evictions", 0) > 0 else "dao"),
               "--trace-dir: the dao run's trace (%s), its steps' times, lookahead and the policy in "
               "force at the end (%s: plan once it evicted, with none chosen), for daosim"
               % (head.strip(), dao.get("policy")))
        tap.ok("CUDA" in runs.get("save_on_cpu", {}).get("skipped", ""),
               "save_on_cpu skipped, saying why: %s" % runs.get("save_on_cpu"))
        out2 = os.path.join(d, "late.json")
        p = run(out2, "--deadline", str(time.time() + 1))
        doc = json.load(open(out2)) if os.path.exists(out2) else {}
        runs = {r["name"]: r for r in doc.get("runs", [])}
        tap.ok(p.returncode == 0 and "losses" in runs.get("memory", {}) and
               runs.get("dao host", {}).get("skipped", "").startswith("time:"),
               "a deadline too near: the in-memory run kept, dao's skipped, saying so: %s" % runs.get("dao host"))
    tap.done()


main()
