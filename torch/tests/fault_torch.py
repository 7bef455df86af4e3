# SPDX-License-Identifier: MIT
"""The torch device as a job of issue 26's sweep (tests/faults/faults.t,
Documentation/libdao.md "Faults injected"): an MLP with dropout trained two
steps (SGD with momentum and weight decay) on the dao device, host backend,
under a budget that makes it evict, and on the CPU.

Exit 0: losses, parameters, buffers, gradients and momentum equal the
CPU's bit for bit and no handle was leaked at close. Exit 10: a dao call
raised; its message (printed) must name a clear status. Anything else
(another exit, a signal, a hang) is what the sweep counts as a failure.
Not named test_*: it is not a test of its own (torch.mk's check-torch runs
those)."""
import sys

import torch

import dao_torch

BUDGET = 1 << 20  # a third of the model's peak on the device: it evicts
STEPS = 2


def train(device):
    torch.manual_seed(0)
    layers = [torch.nn.Linear(64, 128), torch.nn.ReLU(), torch.nn.Dropout(0.2)]
    for _ in range(3):
        layers += [torch.nn.Linear(128, 128), torch.nn.ReLU(), torch.nn.Dropout(0.2)]
    layers.append(torch.nn.Linear(128, 10))
    model = torch.nn.Sequential(*layers).to(device)
    x, y = torch.randn(256, 64), torch.randint(0, 10, (256,))
    opt = torch.optim.SGD(model.parameters(), lr=0.05, momentum=0.9, weight_decay=1e-4)
    torch.manual_seed(1)
    losses = []
    for _ in range(STEPS):
        opt.zero_grad()
        loss = torch.nn.functional.cross_entropy(model(x.to(device)), y.to(device))
        loss.backward()
        opt.step()
        losses.append(loss.item())
        if device != "cpu":
            dao_torch.iteration()
    got = [t.detach().cpu() for t in model.state_dict().values()]
    got += [p.grad.cpu() for p in model.parameters()]
    got += [s["momentum_buffer"].cpu() for s in opt.state.values()]
    return losses, got


def main():
    want = train("cpu")
    try:
        dao_torch.open(backend="host", budget=BUDGET)
        got = train(dao_torch.device)
    except (RuntimeError, MemoryError) as e:
        print("fault_torch: stopped: %s" % e, file=sys.stderr)
        return 10
    if got[0] != want[0] or len(got[1]) != len(want[1]) or \
            not all(torch.equal(a, b) for a, b in zip(got[1], want[1])):
        print("fault_torch: DEFECT: results differ from the CPU's", file=sys.stderr)
        return 2
    del got
    try:
        leaked = dao_torch.close()
    except (RuntimeError, MemoryError) as e:
        print("fault_torch: stopped at close: %s" % e, file=sys.stderr)
        return 10
    if leaked:
        print("fault_torch: DEFECT: %d handles leaked at close" % leaked, file=sys.stderr)
        return 3
    return 0


sys.exit(main())
