"""The user guide's examples run as written (docs are part of the work)."""
import re
from pathlib import Path

import pytest

GUIDE = Path(__file__).resolve().parents[1] / "docs" / "guide.md"
README = Path(__file__).resolve().parents[1] / "README.md"


def blocks(path):
    return re.findall(r"```python\n(.*?)```", path.read_text(), re.S)


@pytest.mark.parametrize("path", [GUIDE, README], ids=["guide", "readme"])
def test_examples_run(path, tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)
    ns: dict = {}
    code = blocks(path)
    assert code
    for block in code:
        exec(compile(block, str(path), "exec"), ns)
