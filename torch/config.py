# SPDX-License-Identifier: MIT
# torch/config.py - what torch/torch.mk needs to know about the PyTorch it
# builds against, as make assignments; TORCH_SKIP says why there is none.
import os
import sys
import sysconfig


def out(name, value):
    print("%s := %s" % (name, value))


def main():
    try:
        import torch
    except Exception as e:  # noqa: BLE001 - any failure means no PyTorch
        out("TORCH_SKIP", "no PyTorch for %s (%s)" % (sys.executable, type(e).__name__))
        return
    root = os.path.dirname(torch.__file__)
    include = os.path.join(root, "include")
    if not os.path.exists(os.path.join(include, "ATen", "core", "Tensor.h")):
        out("TORCH_SKIP", "no PyTorch C++ headers in %s" % include)
        return
    pyinclude = sysconfig.get_paths()["include"]
    if not os.path.exists(os.path.join(pyinclude, "Python.h")):
        out("TORCH_SKIP", "no Python headers in %s" % pyinclude)
        return
    out("TORCH_SKIP", "")
    out("TORCH_PYTHON", sys.executable)
    out("TORCH_VERSION", torch.__version__)
    out("TORCH_INCLUDE", include)
    out("TORCH_LIBDIR", os.path.join(root, "lib"))
    out("TORCH_CXX11_ABI", int(torch.compiled_with_cxx11_abi()))
    out("TORCH_CUDA", torch.version.cuda or "")
    out("TORCH_PY_INCLUDE", pyinclude)
    out("TORCH_EXT_SUFFIX", sysconfig.get_config_var("EXT_SUFFIX"))


main()
