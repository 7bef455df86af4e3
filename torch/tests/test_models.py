# SPDX-License-Identifier: MIT
"""Real models on the dao device, bit-identical to plain PyTorch: an MLP
with dropout, torchvision's ResNet-18 and a small transformer (encoder
layers from torch.nn), each trained a few steps (forward, backward, SGD
with momentum and weight decay) at 1/2, 1/3 and 1/4 of its peak device
memory on the host backend. Losses, parameters, gradients, buffers
(batch norm's running statistics) and the optimizer's momentum buffers
must equal the CPU's bit for bit, the device's peak bytes stay within the
budget, and no handle is leaked. DAO_TORCH_MODELS limits the models."""
import gc
import os

import torch
import torchvision

import dao_torch
import tap

DEV = dao_torch.device
STEPS = 3


def mlp():
    torch.manual_seed(0)
    layers = [torch.nn.Linear(128, 256), torch.nn.ReLU(), torch.nn.Dropout(0.2)]
    for _ in range(4):
        layers += [torch.nn.Linear(256, 256), torch.nn.ReLU(), torch.nn.Dropout(0.2)]
    layers.append(torch.nn.Linear(256, 10))
    model = torch.nn.Sequential(*layers)
    x, y = torch.randn(256, 128), torch.randint(0, 10, (256,))
    return model, x, y, torch.nn.functional.cross_entropy


def resnet18():
    torch.manual_seed(0)
    model = torchvision.models.resnet18(num_classes=10)
    x, y = torch.randn(4, 3, 32, 32), torch.randint(0, 10, (4,))
    return model, x, y, torch.nn.functional.cross_entropy


def transformer():
    torch.manual_seed(0)
    layer = torch.nn.TransformerEncoderLayer(64, 4, 128, dropout=0.1, batch_first=True)
    model = torch.nn.Sequential(torch.nn.TransformerEncoder(layer, 3), torch.nn.Linear(64, 64))
    x, y = torch.randn(8, 16, 64), torch.randn(8, 16, 64)
    return model, x, y, torch.nn.functional.mse_loss


MODELS = {"mlp": mlp, "resnet18": resnet18, "transformer": transformer}


def train(make, device):
    """STEPS training steps on `device`; returns what they left, on the CPU."""
    model, x, y, loss_fn = make()
    model = model.to(device)
    model.train()
    if device != "cpu":
        dao_torch.label_module(model)
    opt = torch.optim.SGD(model.parameters(), lr=0.05, momentum=0.9, weight_decay=1e-4)
    torch.manual_seed(1)
    losses = []
    for _ in range(STEPS):
        opt.zero_grad()
        loss = loss_fn(model(x.to(device)), y.to(device))
        loss.backward()
        opt.step()
        losses.append(loss.item())
        if device != "cpu":
            dao_torch.iteration()
    state = {k: v.detach().cpu() for k, v in model.state_dict().items()}
    grads = {k: p.grad.cpu() for k, p in model.named_parameters()}
    momentum = {i: s["momentum_buffer"].cpu() for i, s in enumerate(opt.state.values())}
    return losses, state, grads, momentum


def mismatches(a, b):
    return [k for k in a if not torch.equal(a[k], b[k])]


def run(name, make):
    ref = train(make, "cpu")
    dao_torch.open(backend="host")
    train(make, DEV)
    gc.collect()
    peak = dao_torch.stats()["peak_device_bytes"]
    dao_torch.close()
    tap.diag("%s: peak %d bytes on the device with no limit" % (name, peak))
    for frac in (2, 3, 4):
        budget = peak // frac
        dao_torch.open(backend="host", budget=budget)
        got = train(make, DEV)
        st = dao_torch.stats()
        what = "%s at 1/%d of its peak (%d bytes)" % (name, frac, budget)
        tap.ok(ref[0] == got[0], what + ": losses equal bit for bit %s" % got[0])
        bad = mismatches(ref[1], got[1])
        tap.ok(not bad, what + ": parameters and buffers equal (%d tensors) %s" % (len(ref[1]), bad[:3]))
        bad = mismatches(ref[2], got[2]) + mismatches(ref[3], got[3])
        tap.ok(not bad, what + ": gradients and momentum buffers equal %s" % bad[:3])
        tap.ok(st["peak_device_bytes"] <= st["budget_bytes"] and st["evictions"] > 0,
               what + ": peak %d bytes within the budget %d, %d evictions"
               % (st["peak_device_bytes"], st["budget_bytes"], st["evictions"]))
        del got
        gc.collect()
        tap.ok(dao_torch.close() == 0, what + ": no handle leaked")


def main():
    wanted = os.environ.get("DAO_TORCH_MODELS", ",".join(MODELS)).split(",")
    for name in wanted:
        run(name, MODELS[name])
    tap.done()


main()
