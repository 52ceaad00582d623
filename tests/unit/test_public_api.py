"""The public namespace: complete, sorted, and free of work at import time."""

from __future__ import annotations

import subprocess
import sys

import agentmem


def test_all_is_sorted_and_complete():
    public = {name for name in vars(agentmem) if not name.startswith("_")}
    modules = {name for name in public if type(getattr(agentmem, name)).__name__ == "module"}
    assert agentmem.__all__ == sorted(public - modules, key=str.casefold)


def test_import_loads_no_model():
    code = (
        "import sys\n"
        "import agentmem\n"
        "heavy = {'onnxruntime', 'spacy', 'tiktoken', 'chromadb.api.models', 'dateparser'}\n"
        "print(sorted(m for m in heavy if m in sys.modules))\n"
    )
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    assert out.stdout.strip() == "[]"
