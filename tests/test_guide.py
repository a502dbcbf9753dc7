"""The user guide's examples run as written (docs are part of the work); the README's: tests/test_readme.py."""
import re
from pathlib import Path

GUIDE = Path(__file__).resolve().parents[1] / "docs" / "guide.md"


def blocks(path):
    return re.findall(r"```python\n(.*?)```", path.read_text(), re.S)


def test_examples_run(tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)
    ns: dict = {}
    code = blocks(GUIDE)
    assert code
    for block in code:
        exec(compile(block, str(GUIDE), "exec"), ns)
