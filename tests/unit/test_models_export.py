"""``agentmem models export-cross-encoder``: optimum is optional, and offline it fails clearly."""

from __future__ import annotations

import sys
import types
from pathlib import Path
from typing import Any

import pytest

from agentmem.cli import main
from agentmem.errors import ModelError, NotAvailableError
from agentmem.models.cross_encoder import CrossEncoderReranker
from agentmem.models.export import export_cross_encoder


def _fake_optimum(monkeypatch: pytest.MonkeyPatch, main_export: Any) -> None:
    onnx_module = types.ModuleType("optimum.exporters.onnx")
    onnx_module.main_export = main_export  # type: ignore[attr-defined]
    monkeypatch.setitem(sys.modules, "optimum", types.ModuleType("optimum"))
    monkeypatch.setitem(sys.modules, "optimum.exporters", types.ModuleType("optimum.exporters"))
    monkeypatch.setitem(sys.modules, "optimum.exporters.onnx", onnx_module)


def _no_optimum(monkeypatch: pytest.MonkeyPatch) -> None:
    # A None entry makes ``import`` raise ImportError, as if the package were not installed.
    for name in ("optimum", "optimum.exporters", "optimum.exporters.onnx"):
        monkeypatch.setitem(sys.modules, name, None)


def test_without_optimum_the_error_says_what_to_install(monkeypatch, tmp_path: Path) -> None:
    _no_optimum(monkeypatch)
    with pytest.raises(NotAvailableError, match=r'pip install "optimum\[onnxruntime\]"'):
        export_cross_encoder(tmp_path / "ce")
    assert not (tmp_path / "ce").exists()


def test_cli_without_optimum_exits_non_zero_without_a_traceback(
    monkeypatch, tmp_path: Path, capsys
) -> None:
    _no_optimum(monkeypatch)
    code = main(["models", "export-cross-encoder", "--out", str(tmp_path / "ce")])
    assert code != 0
    err = " ".join(capsys.readouterr().err.split())  # rich wraps long lines
    assert "optimum[onnxruntime]" in err and "network" in err
    assert "Traceback" not in err


def test_offline_the_error_says_the_network_is_needed(monkeypatch, tmp_path: Path, capsys) -> None:
    def main_export(model: str, **kwargs: Any) -> None:
        raise OSError(f"We couldn't connect to 'https://huggingface.co' to load {model}")

    _fake_optimum(monkeypatch, main_export)
    with pytest.raises(ModelError, match="needs network access") as caught:
        export_cross_encoder(tmp_path / "ce")
    assert isinstance(caught.value.__cause__, OSError)

    code = main(["models", "export-cross-encoder", "--out", str(tmp_path / "ce")])
    assert code != 0
    err = " ".join(capsys.readouterr().err.split())
    assert "network access" in err and "Traceback" not in err


def test_an_export_gives_a_folder_the_reranker_accepts(monkeypatch, tmp_path: Path, capsys) -> None:
    calls: list[tuple[str, dict[str, Any]]] = []

    def main_export(model: str, **kwargs: Any) -> None:
        calls.append((model, kwargs))
        output = Path(kwargs["output"])
        output.mkdir(parents=True, exist_ok=True)
        (output / "model.onnx").write_bytes(b"onnx")
        (output / "tokenizer.json").write_text("{}", encoding="utf-8")

    _fake_optimum(monkeypatch, main_export)
    reranker = export_cross_encoder(tmp_path / "ce", "org/tiny-cross-encoder")
    assert isinstance(reranker, CrossEncoderReranker)
    assert reranker.name == "cross-encoder:ce"
    assert calls == [
        ("org/tiny-cross-encoder", {"output": tmp_path / "ce", "task": "text-classification"})
    ]

    assert main(["models", "export-cross-encoder", "--out", str(tmp_path / "ce2")]) == 0
    assert calls[-1][0] == "cross-encoder/ms-marco-MiniLM-L-6-v2"
    assert "--cross-encoder-dir" in capsys.readouterr().out


def test_an_export_missing_the_tokenizer_is_a_model_error(monkeypatch, tmp_path: Path) -> None:
    def main_export(model: str, **kwargs: Any) -> None:
        Path(kwargs["output"]).mkdir(parents=True, exist_ok=True)
        (Path(kwargs["output"]) / "model.onnx").write_bytes(b"onnx")

    _fake_optimum(monkeypatch, main_export)
    with pytest.raises(ModelError, match="tokenizer.json"):
        export_cross_encoder(tmp_path / "ce")
