# SPDX-License-Identifier: MIT
"""dao_torch: the dao device for PyTorch.

Tensors on the device are dao buffers, and every operator on them a dao
kernel: libdao keeps the working set within a device budget, moves the rest
to the host and back, and runs the program ahead of the kernels.
Documentation/torch.md is the guide.

    import torch, dao_torch
    dao_torch.open(budget="2G")            # or DAO_* from the environment
    model = model.to(dao_torch.device)
    loss = model(x.to(dao_torch.device)).sum()
    loss.backward()
    print(loss.item())                     # waits for the kernels it needs
    dao_torch.close()
"""
import atexit
import os
import sys

import torch

from . import _C

__all__ = [
    "device", "open", "close", "synchronize", "iteration", "stats", "info",
    "is_open", "label", "label_module", "buffer_id", "manual_seed",
]

# PyTorch 2 lets the PrivateUse1 slot carry a name; 1.13 calls it
# "privateuseone" (torch.device("dao") does not parse there).
if hasattr(torch.utils, "rename_privateuse1_backend"):
    if torch._C._get_privateuse1_backend_name() != "dao":
        torch.utils.rename_privateuse1_backend("dao")

    class _DeviceModule:
        """torch.dao: what PyTorch asks a device's module."""

        @staticmethod
        def is_available():
            return True

        @staticmethod
        def device_count():
            return 1

        @staticmethod
        def current_device():
            return 0

        @staticmethod
        def _is_in_bad_fork():
            return False

        @staticmethod
        def manual_seed_all(seed):
            # Kernels queued before the seed draw with the state before it.
            if _C.is_open():
                _C.synchronize()

        @staticmethod
        def synchronize(device=None):
            _C.synchronize()

    if not hasattr(torch, "dao"):
        torch._register_device_module("dao", _DeviceModule)
    if hasattr(torch.utils, "generate_methods_for_privateuse1_backend"):
        try:
            torch.utils.generate_methods_for_privateuse1_backend()
        except RuntimeError:
            pass  # generated already
    device = torch.device("dao", 0)
else:
    device = torch.device("privateuseone", 0)


def _size(value):
    return None if value is None else str(value)


def open(budget=None, backend=None, policy=None, lookahead=None, trace=None,
         job=None, deterministic=False, check=None, host_budget=None):
    """Open the dao device. Arguments left None take DAO_* from the
    environment (DAO_DEVICE_BUDGET, DAO_BACKEND, DAO_POLICY, DAO_LOOKAHEAD,
    DAO_TRACE, DAO_JOB, DAO_HOST_BUDGET), as in every dao program.
    budget: bytes (int), "64M", "2G" or "25%" of device memory.
    check: verify that every kernel leaves the operands it declares read
    unchanged (host backend; DAO_TORCH_CHECK=1)."""
    if job is None and not os.environ.get("DAO_JOB"):
        job = os.path.basename(sys.argv[0]) if sys.argv and sys.argv[0] else "python"
    _C.open(backend=backend, budget=_size(budget), policy=policy,
            lookahead=int(lookahead or 0), trace=trace, job=job,
            deterministic=bool(deterministic),
            check=-1 if check is None else int(bool(check)),
            host_budget=_size(host_budget))


def close():
    """Drain the queued kernels and close the device; returns how many
    storages were still alive (dao handles leaked)."""
    return _C.close()


def synchronize():
    """Wait for every queued kernel; raises the first kernel failure."""
    _C.synchronize()


def iteration():
    """Mark the end of an iteration (a training step): the pattern just
    seen predicts the next one's, beyond the lookahead window."""
    _C.iteration()


def stats():
    """libdao's counters (bytes moved, evictions, peak device bytes...) and
    the torch layer's (operators, kernels, waits and why)."""
    return _C.stats()


def info():
    """What the open device runs with (backend, policy, budget), or None."""
    return _C.info()


def is_open():
    return _C.is_open()


def label(tensor, name):
    """Name a tensor's storage for daoctl and traces."""
    torch.ops.dao.label(tensor, name)


def label_module(module, prefix=""):
    """Name the storages of a module's parameters and buffers by their
    qualified names (daoctl show PID lists them)."""
    for name, t in list(module.named_parameters(prefix=prefix)) + \
            list(module.named_buffers(prefix=prefix)):
        if t.device.type == device.type:
            label(t, name)


def buffer_id(tensor):
    """The dao handle of a tensor's storage (views share it)."""
    return torch.ops.dao.buffer_id(tensor)


def manual_seed(seed):
    """torch.manual_seed, after the random kernels already queued."""
    if _C.is_open():
        _C.synchronize()
    return torch.manual_seed(seed)


@atexit.register
def _close_at_exit():
    # The tensors still alive end with the process: not leaks.
    if _C.is_open():
        try:
            _C.close(exiting=True)
        except RuntimeError as e:
            print("dao_torch: %s" % e, file=sys.stderr)
