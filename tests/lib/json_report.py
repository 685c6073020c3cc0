#!/usr/bin/env python3
# SPDX-License-Identifier: MIT
"""Checks memdbg's log_format=json output (docs/report-json.md).

    json_report.py FILE KIND [STACK=FUNC,FUNC...]...

Every line of FILE that starts with '{' must be one JSON object with the
fields every report carries; the first object of kind KIND must have each
named stack (access, free, allocation; for memory-leaks the allocation
stack of its first leak), each a list of frames with pc, module and
offset, whose functions include FUNC... in that order.  Prints what is
wrong and exits 1, or exits 0."""
import json
import re
import sys

COMMON = {"schema_version": int, "kind": str, "memdbg_version": str, "pid": int, "options": str}
HEX = re.compile(r"^0x[0-9a-f]+$")


def fail(why):
    print(f"json_report: {why}")
    sys.exit(1)


def check_frames(name, frames, want):
    if not isinstance(frames, list) or not frames:
        fail(f"stack {name} is not a non-empty list: {frames!r}")
    for f in frames:
        if not HEX.match(f.get("pc", "")):
            fail(f"stack {name}: frame without a hex pc: {f}")
        if f.get("module") is not None and not HEX.match(f.get("offset") or ""):
            fail(f"stack {name}: frame with a module but no hex offset: {f}")
        if "line" in f and (not isinstance(f["line"], int) or "file" not in f):
            fail(f"stack {name}: a line without a file: {f}")
    functions = [f.get("function", "") for f in frames]
    at = 0
    for w in want:
        while at < len(functions) and not re.fullmatch(w, functions[at]):
            at += 1
        if at == len(functions):
            fail(f"stack {name} lacks {w} (in order) among {functions}")
        at += 1
    if not any("file" in f and "line" in f for f in frames):
        fail(f"stack {name}: no frame has file and line")


def main():
    path, kind, stacks = sys.argv[1], sys.argv[2], sys.argv[3:]
    objects = []
    with open(path, "rb") as fh:
        for raw in fh:
            if not raw.startswith(b"{"):
                continue
            try:
                text = raw.decode("utf-8")   # strict: the writer emits UTF-8 only
            except UnicodeDecodeError as e:
                fail(f"a report line is not UTF-8: {e}")
            if not text.endswith("\n") or text.count("\n") != 1:
                fail("a report is not one line")
            try:
                objects.append(json.loads(text))
            except json.JSONDecodeError as e:
                fail(f"a report line is not JSON: {e}: {text[:200]}")
    if not objects:
        fail(f"no JSON report in {path}")
    for o in objects:
        for k, t in COMMON.items():
            if not isinstance(o.get(k), t):
                fail(f"report lacks {k} ({t.__name__}): {sorted(o)}")
        if o["schema_version"] != 1:
            fail(f"schema_version {o['schema_version']}")
    match = [o for o in objects if o["kind"] == kind]
    if not match:
        fail(f"no report of kind {kind}; kinds: {[o['kind'] for o in objects]}")
    o = match[0]
    if kind == "memory-leaks":
        if not o.get("leaks"):
            fail("memory-leaks without leaks")
        for leak in o["leaks"]:
            if leak.get("kind") not in ("direct", "indirect") or not isinstance(leak.get("size"), int) \
                    or not isinstance(leak.get("count"), int):
                fail(f"bad leak record {leak}")
        owner = o["leaks"][0]["stacks"]
    else:
        if not HEX.match(o.get("address", "")) or o.get("direction") not in ("read", "write", "unknown") \
                or not isinstance(o.get("thread"), int) or "size" not in o:
            fail(f"address, size, direction or thread missing or malformed: {o}")
        owner = o["stacks"]
    for spec in stacks:
        name, _, funcs = spec.partition("=")
        if name not in owner:
            fail(f"no stack {name}; stacks: {sorted(owner)}")
        check_frames(name, owner[name], [f for f in funcs.split(",") if f])
    print(f"ok {kind}: {len(objects)} report(s)")


main()
