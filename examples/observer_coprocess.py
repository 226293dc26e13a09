#!/usr/bin/env python3
"""examples/observer_coprocess.py - a long-running observer in Python,
for perc run-observer --coprocess: for each dirty cell of column doc,
it reads the document and writes its length in bytes to column len.

    perc init --observe doc db
    perc -d db run-observer --coprocess doc -- examples/observer_coprocess.py

The runner writes "run TXN ROW COLUMN" on our standard input; we write
requests of perc shell's language on our standard output and read each
answer, one line, from standard input; "done 0" commits the run, any
other status aborts it.  Words are escaped: a space is \\x20, a tab \\t,
a newline \\n, a backslash \\\\, other bytes outside 0x20-0x7e \\xhh, and
the empty word is \\e.
"""
import re
import sys


def unescape(word):
    """The bytes an escaped word stands for."""
    if word == "\\e":
        return b""
    out = bytearray()
    for m in re.finditer(r"\\x([0-9a-fA-F]{2})|\\(.)|([^\\]+)", word):
        if m.group(1):
            out.append(int(m.group(1), 16))
        elif m.group(2):
            out += {"t": b"\t", "n": b"\n", "\\": b"\\"}[m.group(2)]
        else:
            out += m.group(3).encode("latin-1")
    return bytes(out)


def escape(data):
    """data as a word of a request."""
    if not data:
        return "\\e"
    out = []
    for b in data:
        if b == 0x5C:
            out.append("\\\\")
        elif 0x20 < b <= 0x7E:
            out.append(chr(b))
        else:
            out.append("\\x%02x" % b)
    return "".join(out)


def ask(*words):
    """Send one request; its answer as (status, rest)."""
    sys.stdout.write(" ".join(words) + "\n")
    sys.stdout.flush()
    answer = sys.stdin.readline()
    if not answer:
        sys.exit(0)                     # the runner has gone
    status, _, rest = answer.rstrip("\n").partition(" ")
    return status, rest


def main():
    for line in sys.stdin:              # the end of input: end of work
        verb, txn, row, column = line.split()
        if verb != "run":
            sys.exit(1)
        status, value = ask("get", "-t", txn, row, "doc")
        if status not in ("ok", "none"):
            ask("done", "1")            # an error: abort, run again later
            continue
        doc = unescape(value) if status == "ok" and value else b""
        status, _ = ask("set", "-t", txn, row, "len", escape(
            str(len(doc)).encode()))
        ask("done", "0" if status == "ok" else "1")


if __name__ == "__main__":
    main()
