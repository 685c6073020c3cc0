#!/usr/bin/env python3
# SPDX-License-Identifier: MIT
"""Turn docs/remap_file_pages.2.md into the troff page docs/man/remap_file_pages.2.

The markdown page is the one the kernel work keeps up to date; this keeps
the installed man page in step with it (make man; tests/cli/run.sh checks
that the committed page is what this script makes).  It knows the subset of
markdown that page uses: '#' title, '##' sections, '###' subsections,
paragraphs, '*' lists, fenced code, `code`, *emphasis* and
"term\\n:   definition" lists.

    docs/man/md2man.py docs/remap_file_pages.2.md > docs/man/remap_file_pages.2
"""
import re
import sys


def escape(text):
    return text.replace("\\", "\\e")


def inline(text):
    """Markdown inline markup to troff font changes."""
    out = []
    for i, part in enumerate(re.split(r"`([^`]*)`", text)):
        if i % 2:
            out.append("\\fB" + escape(part).replace("-", "\\-") + "\\fR")
        else:
            part = escape(part)
            part = re.sub(r"(?<![\w*])\*([^*\s][^*]*?)\*(?![\w*])", r"\\fI\1\\fR", part)
            out.append(part)
    return "".join(out)


def text_line(text):
    """One filled line of text; troff must not read it as a request."""
    line = inline(text.strip())
    if line.startswith((".", "'")):
        line = "\\&" + line
    return line


def convert(lines):
    out = []
    i = 0
    para = []

    def flush():
        if para:
            out.append(text_line(" ".join(p.strip() for p in para)))
            para.clear()

    while i < len(lines):
        line = lines[i].rstrip("\n")
        if line.startswith("<!--"):   # a comment line (the SPDX tag)
            i += 1
            continue
        m = re.match(r"^# (\S+)\((\d)\)\s*(?:\u2014|-)\s*(.*)$", line)
        if m:
            out.append('.TH %s %s 2026-12-03 "%s" "Linux Programmer\'s Manual"'
                       % (m.group(1), m.group(2), m.group(3)))
            i += 1
            continue
        if line.startswith("## "):
            flush()
            out.append(".SH " + line[3:].strip())
            i += 1
            continue
        if line.startswith("### "):
            flush()
            out.append('.SS "' + inline(line[4:].strip()).replace('"', "") + '"')
            i += 1
            continue
        if line.startswith("```"):
            flush()
            out += [".PP", ".in +4n", ".EX"]
            i += 1
            while i < len(lines) and not lines[i].startswith("```"):
                code = escape(lines[i].rstrip("\n"))
                out.append("\\&" + code if code.startswith((".", "'")) else code)
                i += 1
            out += [".EE", ".in"]
            i += 1
            continue
        if line.startswith("* "):
            flush()
            item = [line[2:]]
            i += 1
            while i < len(lines) and lines[i].startswith("  ") and lines[i].strip():
                item.append(lines[i])
                i += 1
            out.append(".IP \\(bu 2")
            out.append(text_line(" ".join(x.strip() for x in item)))
            continue
        if (line.strip() and i + 1 < len(lines) and lines[i + 1].startswith(":   ")):
            flush()
            out.append(".TP")
            out.append(text_line(line))
            i += 1
            defn = [lines[i][4:]]
            i += 1
            while i < len(lines) and lines[i].startswith("    ") and lines[i].strip():
                defn.append(lines[i])
                i += 1
            out.append(text_line(" ".join(x.strip() for x in defn)))
            continue
        if not line.strip():
            flush()
            if out and not out[-1].startswith((".SH", ".SS", ".TH", ".PP")):
                out.append(".PP")
            i += 1
            continue
        para.append(line)
        i += 1
    flush()
    while out and out[-1] == ".PP":
        out.pop()
    # Paragraph breaks straight before a heading or list item are redundant.
    cleaned = []
    for k, l in enumerate(out):
        if l == ".PP" and k + 1 < len(out) and out[k + 1].startswith((".SH", ".SS", ".IP", ".TP", ".PP")):
            continue
        cleaned.append(l)
    # NAME line: "name - what" takes an escaped dash.
    for k, l in enumerate(cleaned):
        if l == ".SH NAME" and k + 1 < len(cleaned):
            cleaned[k + 1] = cleaned[k + 1].replace(" - ", " \\- ", 1)
    return cleaned


def main():
    src = sys.argv[1] if len(sys.argv) > 1 else "docs/remap_file_pages.2.md"
    with open(src, encoding="utf-8") as f:
        lines = f.readlines()
    sys.stdout.write('.\\" Generated from %s by docs/man/md2man.py: edit that file, then make man.\n' % src)
    sys.stdout.write("\n".join(convert(lines)) + "\n")


if __name__ == "__main__":
    main()
