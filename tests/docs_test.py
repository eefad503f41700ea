#!/usr/bin/python3
"""Documentation that runs: every transcript in README.md and docs/*.md is run and its output compared.

A transcript is a fenced code block whose first line starts with `$ `. Each `$ COMMAND` line (a line
ending in ` \\` continues on the next) is run by bash, and the lines after it, up to the next `$ `
line, are what it prints: stdout and stderr as they arrive in one pipe (bnorm's stdout is buffered
there, so a warning on stderr comes before the report). In the expected lines:

    ...          a line of its own: any number of lines (none included)
    [..]         inside a line: any text
    [n]          inside a line: a number (a time, a size: digits, '.', 'e', '+', '-')
    [exit N]     the last line of a command's output: its exit code is N (else it must be 0)

Trailing spaces and trailing empty lines are ignored. A block that is not meant to run is marked
by the line `<!-- doctest: skip: WHY -->` just before its fence (keep them few).

Each block runs in its own scratch folder laid out like the repository root: a copy of testdata/
(the conformance folders linked, read-only), and `build` pointing at the build under test, so
that `build/bnorm ...` and relative paths work as written, and blocks run in parallel.

    docs_test.py --list SOURCE_DIR                   one id per transcript: FILE#N (N counts from 1)
    docs_test.py --run BUILD_DIR SOURCE_DIR FILE#N   run one, exit 1 with a diff when it differs
    docs_test.py --self-test BUILD_DIR SOURCE_DIR    a one-character edit of an example's output,
                                                     or of its exit code, makes the run fail
"""
import difflib
import os
import re
import shutil
import subprocess
import sys
import tempfile
from pathlib import Path

SKIP = re.compile(r"^<!-- doctest: skip: (.+) -->$")
FENCE = re.compile(r"^(```|~~~)")
EXIT = re.compile(r"^\[exit (\d+)\]$")
MARK = "<<bnorm-doctest {} {}>>"
TIMEOUT = 600


def doc_files(source):
    return [source / "README.md"] + sorted((source / "docs").glob("*.md"))


def blocks(path):
    """The transcripts of one markdown file: (number, first line, lines, skip reason or None)."""
    lines = path.read_text(encoding="utf-8").splitlines()
    out, i, n = [], 0, 0
    while i < len(lines):
        if not FENCE.match(lines[i]):
            i += 1
            continue
        fence = lines[i][:3]
        start = i + 1
        j = start
        while j < len(lines) and not lines[j].startswith(fence):
            j += 1
        body = lines[start:j]
        if body and body[0].startswith("$ "):
            n += 1
            skip = None
            if i > 0:
                m = SKIP.match(lines[i - 1].strip())
                if m:
                    skip = m.group(1)
            out.append((n, start + 1, body, skip))
        i = j + 1
    return out


def parse(body):
    """[(command, expected lines, exit code)] of a transcript."""
    steps, i = [], 0
    while i < len(body):
        line = body[i]
        if not line.startswith("$ "):
            raise ValueError(f"line {i + 1} of the block is not a command: {line!r}")
        command = line[2:]
        while command.endswith("\\") and i + 1 < len(body):
            i += 1
            command = command[:-1] + "\n" + body[i]
        i += 1
        expected = []
        while i < len(body) and not body[i].startswith("$ "):
            expected.append(body[i].rstrip())
            i += 1
        while expected and not expected[-1]:
            expected.pop()
        code = 0
        if expected:
            m = EXIT.match(expected[-1])
            if m:
                code = int(m.group(1))
                expected.pop()
        steps.append((command, expected, code))
    return steps


def line_pattern(expected):
    parts = re.split(r"(\[\.\.\]|\[n\])", expected)
    rx = ""
    for p in parts:
        if p == "[..]":
            rx += ".*?"
        elif p == "[n]":
            rx += r"[-+0-9.eE]+"
        else:
            rx += re.escape(p)
    return re.compile(rx + r"\Z")


def matches(expected, got):
    """Whether the got lines match the expected ones (with `...` lines and placeholders)."""
    memo = {}

    def go(i, j):
        key = (i, j)
        if key in memo:
            return memo[key]
        if i == len(expected):
            r = j == len(got)
        elif expected[i] == "...":
            r = any(go(i + 1, k) for k in range(j, len(got) + 1))
        else:
            r = j < len(got) and line_pattern(expected[i]).match(got[j]) is not None and go(i + 1, j + 1)
        memo[key] = r
        return r

    return go(0, 0)


def scratch(source, build, top):
    """A folder laid out like the repository root for one block."""
    root = Path(top)
    shutil.copytree(source / "testdata", root / "testdata", ignore=shutil.ignore_patterns("onnx-node-1.23"))
    os.symlink(source / "testdata" / "onnx-node-1.23", root / "testdata" / "onnx-node-1.23")
    os.symlink(build, root / "build")
    for name in ("bench", "scripts", "docs"):
        os.symlink(source / name, root / name)
    (root / "tmp").mkdir()
    return root


def run_block(build, source, body, label):
    """Runs one transcript; returns a list of failure texts (empty: it passed)."""
    steps = parse(body)
    failures = []
    with tempfile.TemporaryDirectory(prefix="bnorm-doctest-") as top:
        root = scratch(source, build, top)
        script = ["set +e"]
        for k, (command, _, _) in enumerate(steps):
            script.append(command)
            script.append(f"echo \"{MARK.format(k, '$?')}\"")
        env = dict(os.environ, NO_COLOR="1", LC_ALL="C.UTF-8", TMPDIR=str(root / "tmp"))
        env.pop("CI", None)
        r = subprocess.run(["bash", "-c", "\n".join(script)], cwd=root, stdout=subprocess.PIPE,
                           stderr=subprocess.STDOUT, env=env, timeout=TIMEOUT)
        text = r.stdout.decode("utf-8", errors="replace")
        rest = text
        for k, (command, expected, code) in enumerate(steps):
            m = re.search(re.escape(f"<<bnorm-doctest {k} ") + r"(\d+)>>\n?", rest)
            if not m:
                failures.append(f"{label}: `$ {command}` did not finish (the shell ended early)\n{rest}")
                break
            got = [l.rstrip() for l in rest[:m.start()].split("\n")]
            while got and not got[-1]:
                got.pop()
            rest = rest[m.end():]
            got_code = int(m.group(1))
            if got_code != code:
                failures.append(f"{label}: `$ {command}` exited {got_code}, the docs say {code}"
                                + ("" if code else " (show another code with a last line `[exit N]`)")
                                + "\n  what it printed:\n    " + "\n    ".join(got))
            if not matches(expected, got):
                diff = difflib.unified_diff(expected, got, "the docs", "what bnorm printed", lineterm="")
                failures.append(f"{label}: `$ {command}` printed something else:\n" + "\n".join(diff))
    return failures


def find(source, block_id):
    name, _, n = block_id.rpartition("#")
    path = source / name
    for number, line, body, skip in blocks(path):
        if number == int(n):
            return path, line, body, skip
    raise SystemExit(f"no transcript {block_id}")


def main(argv):
    if len(argv) >= 2 and argv[0] == "--list":
        source = Path(argv[1]).resolve()
        for path in doc_files(source):
            for number, line, body, skip in blocks(path):
                print(f"{path.relative_to(source)}#{number}")
        return 0
    if len(argv) == 4 and argv[0] == "--run":
        build, source = Path(argv[1]).resolve(), Path(argv[2]).resolve()
        path, line, body, skip = find(source, argv[3])
        label = f"{path.relative_to(source)}:{line}"
        if skip:
            print(f"{label}: not run: {skip}")
            return 0
        failures = run_block(build, source, body, label)
        for f in failures:
            print(f, file=sys.stderr)
        if not failures:
            print(f"{label}: {len(parse(body))} command(s) print what the docs show")
        return 1 if failures else 0
    if len(argv) == 3 and argv[0] == "--self-test":
        build, source = Path(argv[1]).resolve(), Path(argv[2]).resolve()
        path, line, body, _ = find(source, "README.md#1")
        label = f"{path.relative_to(source)}:{line}"
        problems = []
        if run_block(build, source, body, label):
            problems.append(f"{label} fails as written")
        # One character of the expected output changed.
        k = next(i for i, l in enumerate(body) if not l.startswith("$ ") and l.strip() and l != "...")
        edited = list(body)
        edited[k] = edited[k][:-1] + ("x" if edited[k][-1] != "x" else "y")
        if not run_block(build, source, edited, label + " (edited)"):
            problems.append(f"a one-character edit of line {k + 1} of {label} still passes")
        # An exit code that is not the one shown.
        wrong_code = list(body) + ["[exit 1]"]
        if not run_block(build, source, wrong_code, label + " (exit 1)"):
            problems.append(f"{label} with [exit 1] still passes")
        for p in problems:
            print(p, file=sys.stderr)
        if not problems:
            print(f"{label}: passes as written; fails with one character of its output changed, and with another exit code")
        return 1 if problems else 0
    print(__doc__, file=sys.stderr)
    return 2


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
