# SPDX-License-Identifier: MIT
"""TAP for the dao_torch tests (run by prove): ok(), diag(), done()."""
import sys

_count = 0
_failed = 0


def ok(cond, name, todo=None):
    global _count, _failed
    _count += 1
    line = "%s %d - %s" % ("ok" if cond else "not ok", _count, name)
    if todo:
        line += " # TODO " + todo
    elif not cond:
        _failed += 1
    print(line, flush=True)
    return cond


def skip(name, why):
    global _count
    _count += 1
    print("ok %d - %s # skip %s" % (_count, name, why), flush=True)


def diag(msg):
    for line in str(msg).splitlines():
        print("# " + line, flush=True)


def done():
    print("1..%d" % _count, flush=True)
    sys.exit(1 if _failed else 0)
