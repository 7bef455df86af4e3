# SPDX-License-Identifier: MIT
"""Predict before the run (torch/bench/predict.py): a training run of the
GPT-style model on the host backend at half its peak, recorded with a
trace, replays in daosim with the same decisions: daosim reads the trace,
replays as many kernels as dao ran, with the same evictions, fetches and
write-backs, moving the same bytes each way up to the host arena's
rounding of each buffer (deterministic, the same budget, policy, lookahead
and rates). Times are printed, not asserted: `make predict-torch` checks
daosim's time on this machine's measured rates against its margin."""
import os
import sys
import tempfile

import torch

import tap

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "bench"))
import predict  # noqa: E402


def main():
    torch.set_num_threads(1)
    with tempfile.TemporaryDirectory() as d:
        # The rates the host backend gives the policy (host.c: one core's
        # nominal ones): the prefetch horizon follows modeled time, so the
        # same decisions need the same rates.
        rates = dict(h2d_gbps=8, d2h_gbps=8, tflops=0.02, mem_gbps=8, launch_ns=0)
        r = predict.predict("tiny", 2, 2.0, d, rates=rates)
        m, s, t = r["measured"]["stats"], r["sim"], r["trace"]
        tap.ok(t["kernels"] == m["kernels_run"] and s["kernels"] == t["kernels"] and t["kernels"] > 100,
               "daosim replays the trace: %d kernels, as dao ran %d" % (t["kernels"], m["kernels_run"]))
        tap.ok(t["budget_bytes"] == r["budget"] and m["peak_device_bytes"] <= r["budget"] and m["evictions"] > 0,
               "at the run's budget %d (half its peak %d), which evicted %d times"
               % (r["budget"], r["peak"], m["evictions"]))
        for k in ("evictions", "fetches", "writebacks"):
            tap.ok(m[k] == s[k], "%s: the host backend's %d, daosim's %d" % (k, m[k], s[k]))
        # daosim's buffers are rounded up to the arena's unit: each copy
        # may count up to HOST_UNIT - 1 bytes more than the host moved.
        for k, n in (("h2d_bytes", m["fetches"] + m["prefetches"]), ("d2h_bytes", m["writebacks"])):
            tap.ok(m[k] > 0 and 0 <= s[k] - m[k] < predict.HOST_UNIT * max(n, 1),
                   "%s: the host backend's %d, daosim's %d (%d copies, rounded to %d bytes)"
                   % (k, m[k], s[k], n, predict.HOST_UNIT))
        tap.diag("measured %.4f s on the host backend, daosim %.4f s on nominal rates"
                 % (r["measured"]["run_s"], s["modeled_ns"] / 1e9))
    tap.done()


main()
