"""The Python examples in the README and the user guides run as written.

Each file's ```python blocks run in order in one namespace (later blocks may
use names from earlier ones), output silenced.
"""
import contextlib
import io
import re
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parent.parent
PAGES = ["README.md", "docs/getting-started.md", "docs/model-comparison.md"]


@pytest.mark.parametrize("page", PAGES)
def test_python_blocks_run(page, tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)
    blocks = re.findall(r"```python\n(.*?)```", (ROOT / page).read_text(), re.S)
    assert blocks, f"{page} has no python examples"
    namespace = {}
    for number, block in enumerate(blocks):
        with contextlib.redirect_stdout(io.StringIO()), contextlib.redirect_stderr(io.StringIO()):
            exec(compile(block, f"{page} block {number + 1}", "exec"), namespace)
