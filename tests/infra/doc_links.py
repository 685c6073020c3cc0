#!/usr/bin/env python3
# SPDX-License-Identifier: MIT
"""Check the Markdown documentation of the tree, printing TAP.

For every Markdown file git tracks (outside kernel/patches), one test: each
relative link [text](target) names a file or folder that exists, and a
#fragment names a heading of the target Markdown file (GitHub's anchors:
lower case, punctuation dropped, spaces to dashes).  Links inside code
blocks and inline code are not links.  One more test: no document names an
internal issue number in its prose (code blocks hold stack frames such as
"#0"), which readers outside the project cannot look up.

    tests/infra/doc_links.py [--root DIR]
"""
import os
import re
import subprocess
import sys


LINK = re.compile(r"!?\[(?:[^\]\\]|\\.)*\]\(([^()\s]+)(?:\s+\"[^\"]*\")?\)")
HEADING = re.compile(r"^(#{1,6})\s+(.*?)\s*#*\s*$")
ISSUE = re.compile(r"[Ii]ssues? #?[0-9]+|#[0-9]{1,3}\b")


def prose_lines(text, blank_code=True):
    """Yield (line number, line) outside fenced code, inline code blanked."""
    fence = None
    for number, line in enumerate(text.split("\n"), 1):
        stripped = line.lstrip()
        if fence:
            if stripped.startswith(fence):
                fence = None
            continue
        if stripped.startswith("```") or stripped.startswith("~~~"):
            fence = stripped[:3]
            continue
        yield number, re.sub(r"`[^`]*`", "``", line) if blank_code else line


def anchor(heading):
    """The anchor GitHub gives a heading."""
    text = re.sub(r"[`*]", "", heading).strip().lower()
    text = re.sub(r"[^\w\- ]", "", text)
    return text.replace(" ", "-")


def anchors_of(path, cache={}):
    if path not in cache:
        seen = {}
        found = set()
        with open(path, encoding="utf-8") as f:
            for _, line in prose_lines(f.read(), blank_code=False):
                m = HEADING.match(line)
                if not m:
                    continue
                base = anchor(m.group(2))
                n = seen.get(base, 0)
                seen[base] = n + 1
                found.add(base if n == 0 else f"{base}-{n}")
        cache[path] = found
    return cache[path]


def check_file(root, doc):
    """Return (problems, skipped, count) for one document."""
    problems, skipped, count = [], [], 0
    with open(os.path.join(root, doc), encoding="utf-8") as f:
        text = f.read()
    for number, line in prose_lines(text):
        for target in LINK.findall(line):
            if re.match(r"^[a-z][a-z0-9+.-]*:", target):
                continue  # http:, https:, mailto:
            count += 1
            path, _, fragment = target.partition("#")
            if path:
                rel = os.path.normpath(os.path.join(os.path.dirname(doc), path))
            else:
                rel = doc
            full = os.path.join(root, rel)
            if not os.path.exists(full):
                problems.append(f"{doc}:{number}: {target}: no such file")
                continue
            if fragment and rel.endswith(".md") and fragment not in anchors_of(full):
                problems.append(f"{doc}:{number}: {target}: no heading with anchor #{fragment}")
    return problems, skipped, count


def main():
    root = "."
    if len(sys.argv) == 3 and sys.argv[1] == "--root":
        root = sys.argv[2]
    elif len(sys.argv) != 1:
        print(__doc__.strip().split("\n")[-1].strip(), file=sys.stderr)
        return 2
    files = subprocess.run(["git", "-C", root, "ls-files", "*.md"], check=True,
                           capture_output=True, text=True).stdout.split()
    docs = sorted(f for f in files if not f.startswith("kernel/patches/"))
    print(f"1..{len(docs) + 1}")
    failed = 0
    for n, doc in enumerate(docs, 1):
        problems, skipped, count = check_file(root, doc)
        if problems:
            failed += 1
            print(f"not ok {n} - {doc}: {len(problems)} of {count} links broken")
            for p in problems:
                print(f"#   {p}")
        elif skipped and len(skipped) == count:
            print(f"ok {n} - {doc}: {count} links # SKIP all to documents not in this tree")
        else:
            print(f"ok {n} - {doc}: {count} links resolve"
                  + (f" ({len(skipped)} to documents not in this tree)" if skipped else ""))
    hits = []
    for doc in docs:
        if not (doc == "README.md" or doc == "HACKING.md" or doc.startswith("docs/")):
            continue
        with open(os.path.join(root, doc), encoding="utf-8") as f:
            # prose only: code blocks hold stack frames such as "#0"
            for number, line in prose_lines(f.read()):
                if ISSUE.search(line):
                    hits.append(f"{doc}:{number}: {line.strip()[:100]}")
    n = len(docs) + 1
    if hits:
        failed += 1
        print(f"not ok {n} - README.md, HACKING.md and docs/ name no internal issue number: {len(hits)} lines do")
        for h in hits:
            print(f"#   {h}")
    else:
        print(f"ok {n} - README.md, HACKING.md and docs/ name no internal issue number")
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
