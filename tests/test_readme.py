"""README.md runs as written: every shell command and Python snippet, in the order shown, in a fresh folder.

Shell commands are the lines of the ```` ```sh ```` blocks; Python snippets are the ```` ```python ```` blocks,
each followed by a ```` ```text ```` block with the output it prints, which the run must reproduce. The set-up
(`bash .ci/setup ...`) is not run again: this test runs inside what it installed. Commands that take minutes
run in a quick form, each named in ``SUBSTITUTES`` with the reason; a command the README no longer shows
fails the test, so the table cannot go stale. About 50 s on 2 cores (busy) with a warm kernel cache.
"""
from __future__ import annotations

import contextlib
import io
import json
import re
import shlex
import subprocess
import sys
from dataclasses import dataclass
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]
README = ROOT / "README.md"
SETUP = re.compile(r"^bash \.ci/setup( --tests)? && ")       # the set-up part of a command: not re-run


@dataclass(frozen=True)
class Block:
    """A fenced block of README.md: its language tag, its text and the line it starts on."""

    lang: str
    text: str
    line: int


@dataclass(frozen=True)
class Substitute:
    """The quick form a long README command runs in (``argv`` None: not run at all), and why."""

    argv: list[str] | None
    why: str


DRAGLINE_QUICK = ("from verification.dragline import __main__ as m, cycle; "
                  "m.dragline_cycle = lambda quick: cycle.dragline_cycle(True); "
                  "raise SystemExit(m.main(['dragline-out']))")

SUBSTITUTES = {
    ".venv/bin/flexmb verify --out verification-report": Substitute(
        [".venv/bin/flexmb", "verify", "rigid", "--quick", "--out", "verification-report"],
        "every suite takes 2.5-11 minutes: one suite's quick subset, to the same folder"),
    ".venv/bin/python -m pytest -q tests": Substitute(None, "the test suite this test is part of"),
    ".venv/bin/flexmb verify rotating-beam --out rotating-beam-report": Substitute(
        [".venv/bin/flexmb", "verify", "rotating-beam", "--quick", "--out", "rotating-beam-report"],
        "the full suite takes minutes: its quick subset"),
    ".venv/bin/flexmb verify impact --out impact-report": Substitute(
        [".venv/bin/flexmb", "verify", "impact", "--quick", "--out", "impact-report"],
        "the full suite takes minutes: its quick subset"),
    ".venv/bin/python -m verification.dragline dragline-out": Substitute(
        [".venv/bin/python", "-c", DRAGLINE_QUICK],
        "the 50 s cycle takes about 40 s: the same script with the cycle's quick run (18 s of it, 2 s)"),
}

# What each command leaves in the folder (checked after the run; the exit status alone could hide an empty run).
WRITES = {
    ".venv/bin/flexmb verify --out verification-report": ["verification-report/results.json",
                                                          "verification-report/report.html"],
    ".venv/bin/flexmb modes meshes/beam_line.msh --fix root --interface tip -n 6 -o beam_modes.npz --json":
        ["beam_modes.npz"],
    ".venv/bin/flexmb verify rotating-beam --out rotating-beam-report": ["rotating-beam-report/results.json"],
    ".venv/bin/python -m verification.examples.paraview_pendulum out/pendulum": ["out/pendulum.vtkhdf"],
    ".venv/bin/flexmb verify impact --out impact-report": ["impact-report/results.json"],
    ".venv/bin/python -m verification.occupant occupant-study": ["occupant-study/results.csv",
                                                                "occupant-study/hic15.png"],
    ".venv/bin/python -m verification.dragline dragline-out": ["dragline-out/dragline.json"],
}


def blocks(text: str) -> list[Block]:
    """The fenced blocks of a Markdown text, in order."""
    found = []
    for m in re.finditer(r"^```(\w*)\n(.*?)^```$", text, re.M | re.S):
        found.append(Block(m.group(1), m.group(2), text.count("\n", 0, m.start()) + 1))
    return found


def steps(text: str) -> list[tuple[str, Block, Block | None]]:
    """The README's steps in order: ``("sh", block, None)`` per shell command line (the block holds the line
    alone) and ``("python", code, expected output)`` per snippet. A snippet without its output block fails."""
    found, fenced = [], blocks(text)
    for k, b in enumerate(fenced):
        if b.lang == "sh":
            found += [("sh", Block("sh", line.strip(), b.line + 1 + i), None)
                      for i, line in enumerate(b.text.splitlines()) if line.strip()]
        elif b.lang == "python":
            out = fenced[k + 1] if k + 1 < len(fenced) else None
            assert out is not None and out.lang == "text", \
                f"README.md line {b.line}: a Python snippet must be followed by a ```text block of what it prints"
            found.append(("python", b, out))
        elif b.lang == "":
            pytest.fail(f"README.md line {b.line}: a fenced block without a language (sh, python or text)")
    return found


NUMBER = re.compile(r"[-+]?\d+(?:\.\d+)?(?:[eE][-+]?\d+)?")


def output_mismatch(expected: str, printed: str) -> str:
    """``""`` when ``printed`` matches ``expected``: the same text between numbers, integers equal, and each
    decimal number within 2 units of the last digit the README shows (the snippet prints it rounded to those
    digits: 1 unit for rounding at a boundary, 1 for round-off differences between machines and BLAS builds;
    a change of the computed value by more fails). Otherwise a description of the first difference."""
    exp_lines, got_lines = expected.strip().splitlines(), printed.strip().splitlines()
    if len(exp_lines) != len(got_lines):
        return f"{len(got_lines)} lines printed, {len(exp_lines)} expected"
    for exp, got in zip(exp_lines, got_lines):
        if NUMBER.sub("#", exp) != NUMBER.sub("#", got):
            return f"printed {got!r}, expected {exp!r}"
        for e, g in zip(NUMBER.findall(exp), NUMBER.findall(got)):
            digits = re.search(r"\.(\d+)", e.split("e")[0].split("E")[0])
            if digits is None and "e" not in e.lower():
                if int(e) != int(g):
                    return f"printed {got!r}, expected {exp!r} ({g} != {e})"
                continue
            exponent = int(re.split("[eE]", e)[1]) if re.search("[eE]", e) else 0
            unit = 10.0 ** (exponent - (len(digits.group(1)) if digits else 0))
            if abs(float(g) - float(e)) > 2 * unit:
                return f"printed {got!r}, expected {exp!r} ({g} differs from {e} by more than 2 x {unit:g})"
    return ""


def run_python(code: Block) -> str:
    """Run a snippet in a namespace of its own (as a reader pasting it would) and return what it printed."""
    buf = io.StringIO()
    with contextlib.redirect_stdout(buf):
        exec(compile(code.text, f"README.md:{code.line}", "exec"), {"__name__": "__readme__"})
    return buf.getvalue()


def run_shell(command: str, cwd: Path) -> str:
    """Run a README command (or its quick form) in ``cwd``; ``""`` on success, else what went wrong."""
    sub = SUBSTITUTES.get(command)
    if sub is not None and sub.argv is None:
        return ""
    argv = sub.argv if sub is not None else shlex.split(command)
    proc = subprocess.run(argv, cwd=cwd, capture_output=True, text=True, timeout=600)
    if proc.returncode != 0:
        return f"exit status {proc.returncode}\n{proc.stdout[-3000:]}\n{proc.stderr[-3000:]}"
    missing = [f for f in WRITES.get(command, []) if not (cwd / f).is_file()]
    return f"did not write {missing}" if missing else ""


@pytest.fixture
def fresh_clone_folder(tmp_path):
    """A folder that looks like the clone after `bash .ci/setup`: its .venv and sample meshes, nothing else
    (the examples' output lands here, not in the repository)."""
    for name in (".venv", "meshes"):
        (tmp_path / name).symlink_to(ROOT / name, target_is_directory=True)
    return tmp_path


def test_readme_runs_as_written(fresh_clone_folder, monkeypatch):
    if not (ROOT / ".venv" / "bin" / "flexmb").exists():
        pytest.skip("no .venv: run bash .ci/setup first")
    monkeypatch.chdir(fresh_clone_folder)
    failures = []
    for kind, block, expected in steps(README.read_text()):
        if kind == "sh":
            command = SETUP.sub("", block.text)
            problem = run_shell(command, fresh_clone_folder)
        else:
            try:
                problem = output_mismatch(expected.text, run_python(block))
            except Exception as exc:                    # noqa: BLE001 -- reported with the snippet's line
                problem = f"{type(exc).__name__}: {exc}"
        if problem:
            failures.append(f"README.md line {block.line}: {block.text.splitlines()[0]!r}: {problem}")
    assert not failures, "\n".join(failures)
    report = json.loads((fresh_clone_folder / "verification-report" / "results.json").read_text())
    assert report["quick"] is True and list(report["suites"]) == ["rigid"]


def test_every_substitute_names_a_readme_command():
    """A substitute for a command the README no longer shows would leave its new form untested."""
    commands = {SETUP.sub("", b.text) for kind, b, _ in steps(README.read_text()) if kind == "sh"}
    assert set(SUBSTITUTES) | set(WRITES) <= commands, sorted(set(SUBSTITUTES) | set(WRITES) - commands)


def test_every_snippet_shows_its_output():
    snippets = [b for kind, b, _ in steps(README.read_text()) if kind == "python"]
    assert len(snippets) >= 2 and all("print(" in b.text for b in snippets)


@pytest.mark.parametrize("printed, problem", [
    ("tip at t = 2.0 s: x = 1.412 m\ncount 10", ""),                 # 1 unit of the last digit
    ("tip at t = 2.0 s: x = 1.414 m\ncount 10", "by more than 2 x 0.001"),
    ("tip at t = 2.0 s: x = 1.411 m\ncount 11", "(11 != 10)"),
    ("tip at t = 2.0 s: y = 1.411 m\ncount 10", "expected"),
    ("tip at t = 2.0 s: x = 1.411 m", "1 lines printed, 2 expected"),
])
def test_output_comparison(printed, problem):
    """The comparison the README test relies on can fail: a number off by 3 units of its last digit, another
    count, other text, a missing line."""
    found = output_mismatch("tip at t = 2.0 s: x = 1.411 m\ncount 10", printed)
    assert (problem in found and found) if problem else found == ""


def test_default_outputs_are_ignored_by_git():
    """The folders and files the README's commands write (and the examples' defaults) are in .gitignore, so a
    reader who runs them in the clone does not see them as changes."""
    if not (ROOT / ".git").exists():
        pytest.skip("not a git checkout")
    names = sorted({f.split("/")[0] + ("/" if "/" in f else "") for files in WRITES.values() for f in files})
    proc = subprocess.run(["git", "check-ignore", "--no-index", *names], cwd=ROOT, capture_output=True, text=True)
    assert sorted(proc.stdout.split()) == names, f"not ignored: {sorted(set(names) - set(proc.stdout.split()))}"


def test_the_pendulum_example_writes_by_default_into_an_ignored_folder(monkeypatch, capsys):
    """Without a path the ParaView example writes ``out/pendulum.vtkhdf`` (it wrote ``pendulum.vtkhdf`` into the
    current folder, which .gitignore does not cover)."""
    from verification.examples import paraview_pendulum as example

    class Written:
        def export_paraview(self, path):
            return {"vtkhdf": f"{path}.vtkhdf"}

    monkeypatch.setattr(example, "run", Written)
    example.main([])
    path = capsys.readouterr().out.split()[-1]
    assert path == "out/pendulum.vtkhdf"
    if (ROOT / ".git").exists():
        assert subprocess.run(["git", "check-ignore", "-q", "--no-index", path], cwd=ROOT).returncode == 0
