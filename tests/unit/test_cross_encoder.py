"""CrossEncoderReranker on a tiny ONNX cross-encoder the test builds itself.

The model is embeddings → mean pool over the attention mask → linear → one logit, with a
WordLevel tokenizer whose pair template is BERT's. One dimension is enough: each token's
embedding is its vote, so a pair's logit is the mean vote of its tokens.
"""

from __future__ import annotations

from datetime import UTC, datetime
from pathlib import Path

import numpy as np
import pytest

onnx = pytest.importorskip("onnx")
from onnx import TensorProto, helper  # noqa: E402
from tokenizers import Tokenizer, models, normalizers, pre_tokenizers, processors  # noqa: E402

import agentmem  # noqa: E402
from agentmem.errors import InvalidInputError, ModelError  # noqa: E402
from agentmem.models.cross_encoder import (  # noqa: E402
    CrossEncoderReranker,
    dated_text,
    readable_date,
)
from agentmem.recall.candidates import Candidate  # noqa: E402
from agentmem.types import Memory  # noqa: E402

# Every other token (query words, [CLS], [SEP], date words) votes 0.
VOTES = {"tea": 12.0, "2024": 6.0, "coffee": -6.0}
VOCAB = ["[PAD]", "[UNK]", "[CLS]", "[SEP]", "alice", "drink", "drinks", "tea", "coffee",
         "likes", "every", "day", "what", "does", "date", "2024", "2025", "march"]  # fmt: skip
BIAS = -1.0


def build_cross_encoder(folder: Path, *, token_type_ids: bool = True) -> Path:
    """Write model.onnx and tokenizer.json of a tiny cross-encoder into ``folder``."""
    folder.mkdir(parents=True, exist_ok=True)
    table = np.array([[VOTES.get(t, 0.0)] for t in VOCAB], dtype=np.float32)
    nodes = [
        helper.make_node("Gather", ["table", "input_ids"], ["embedded"]),  # (B, T, 1)
        helper.make_node("Cast", ["attention_mask"], ["mask"], to=TensorProto.FLOAT),
        helper.make_node("Unsqueeze", ["mask", "last"], ["mask3"]),
        helper.make_node("Mul", ["embedded", "mask3"], ["kept"]),
        helper.make_node("ReduceSum", ["kept", "time"], ["summed"], keepdims=0),  # (B, 1)
        helper.make_node("ReduceSum", ["mask3", "time"], ["count"], keepdims=0),
        helper.make_node("Div", ["summed", "count"], ["pooled"]),
        helper.make_node("MatMul", ["pooled", "weight"], ["scaled"]),
        helper.make_node("Add", ["scaled", "bias"], ["logits"]),
    ]
    inputs = [
        helper.make_tensor_value_info("input_ids", TensorProto.INT64, ["batch", "seq"]),
        helper.make_tensor_value_info("attention_mask", TensorProto.INT64, ["batch", "seq"]),
    ]
    if token_type_ids:  # BERT exports have it; the model may ignore it
        inputs.append(
            helper.make_tensor_value_info("token_type_ids", TensorProto.INT64, ["batch", "seq"])
        )
    graph = helper.make_graph(
        nodes,
        "tiny-cross-encoder",
        inputs,
        [helper.make_tensor_value_info("logits", TensorProto.FLOAT, ["batch", 1])],
        initializer=[
            helper.make_tensor("table", TensorProto.FLOAT, table.shape, table.flatten()),
            helper.make_tensor("last", TensorProto.INT64, [1], [2]),
            helper.make_tensor("time", TensorProto.INT64, [1], [1]),
            helper.make_tensor("weight", TensorProto.FLOAT, [1, 1], [1.0]),
            helper.make_tensor("bias", TensorProto.FLOAT, [1], [BIAS]),
        ],
    )
    model = helper.make_model(graph, opset_imports=[helper.make_opsetid("", 17)])
    model.ir_version = 8
    onnx.checker.check_model(model)
    onnx.save(model, folder / "model.onnx")

    tokenizer = Tokenizer(models.WordLevel({t: i for i, t in enumerate(VOCAB)}, unk_token="[UNK]"))
    tokenizer.normalizer = normalizers.Lowercase()
    tokenizer.pre_tokenizer = pre_tokenizers.Whitespace()
    tokenizer.post_processor = processors.TemplateProcessing(
        single="[CLS] $A [SEP]",
        pair="[CLS] $A [SEP] $B:1 [SEP]:1",
        special_tokens=[("[CLS]", 2), ("[SEP]", 3)],
    )
    tokenizer.save(str(folder / "tokenizer.json"))
    return folder


def expected(query: str, document: str) -> float:
    """What the tiny model must give: sigmoid(mean vote of the pair's tokens + bias)."""
    tokens = ["[CLS]", *_words(query), "[SEP]", *_words(document), "[SEP]"]
    logit = np.mean([VOTES.get(t, 0.0) for t in tokens]) + BIAS
    return float(1 / (1 + np.exp(-logit)))


def _words(text: str) -> list[str]:
    return [word for word, _ in pre_tokenizers.Whitespace().pre_tokenize_str(text.lower())]


@pytest.fixture(scope="module")
def model_dir(tmp_path_factory: pytest.TempPathFactory) -> Path:
    return build_cross_encoder(tmp_path_factory.mktemp("cross-encoder"))


def memory(text: str, occurred: datetime | None = None) -> Memory:
    return Memory(
        "m-" + text, "b", text, "world", occurred, occurred, datetime(2025, 3, 4, tzinfo=UTC)
    )


def test_dates_are_rendered_from_occurrence_else_mention():
    assert readable_date(datetime(2025, 3, 4, 9, tzinfo=UTC)) == "March 4, 2025"
    assert dated_text(memory("Alice likes tea")) == "[Date: March 4, 2025] Alice likes tea"
    occurred = datetime(2024, 6, 1, tzinfo=UTC)
    assert dated_text(memory("x", occurred)) == "[Date: June 1, 2024] x"


def test_scores_are_the_sigmoid_of_the_models_logits_in_batches(model_dir: Path):
    texts = ["Alice likes tea", "Alice drinks coffee every day", "Alice likes tea every day",
             "what", "tea tea", "coffee"]  # fmt: skip
    candidates = [Candidate(memory(t)) for t in texts]
    query = "What does Alice drink?"
    for batch_size in (1, 4, 32):  # batches padded to their own longest pair agree
        scores = CrossEncoderReranker(model_dir, batch_size=batch_size).rerank(query, candidates)
        want = [expected(query, dated_text(c.memory)) for c in candidates]
        assert scores == pytest.approx(want, abs=1e-5)
    assert all(0.0 <= s <= 1.0 for s in scores)
    assert scores[0] > scores[2] > scores[1]  # fewer non-voting words: a stronger tea vote


def test_the_occurrence_date_reaches_the_model(model_dir: Path):
    reranker = CrossEncoderReranker(model_dir)
    then = Candidate(memory("Alice likes tea", datetime(2024, 6, 1, tzinfo=UTC)))
    now = Candidate(memory("Alice likes tea"))
    dated, undated = reranker.rerank("tea", [then, now])
    assert dated > undated  # "2024" votes for it; the mention date says 2025


def test_a_model_without_token_type_ids_runs(tmp_path: Path):
    folder = build_cross_encoder(tmp_path / "plain", token_type_ids=False)
    (score,) = CrossEncoderReranker(folder).rerank("tea", [Candidate(memory("tea"))])
    assert score == pytest.approx(expected("tea", dated_text(memory("tea"))), abs=1e-5)


def test_it_reranks_recall_and_records_its_name_and_score(model_dir: Path, tmp_path: Path):
    reranker = CrossEncoderReranker(model_dir)
    with agentmem.AgentMemory(tmp_path / "store", reranker=reranker) as mem:
        bank = mem.bank("b")
        bank.retain("Alice drinks coffee every day.", mentioned_at="2025-03-04T09:00:00Z")
        bank.retain("Alice likes tea.", mentioned_at="2025-03-04T09:00:00Z")
        query = "What does Alice drink?"
        offline = bank.recall(query, rerank=False, reinforce=False)
        assert offline[0].memory.text.startswith("Alice drinks coffee")
        assert offline[0].strategy_details["rerank"]["reranker"] == "calibrated"
        reranked = bank.recall(query, reinforce=False)
        assert reranked[0].memory.text.startswith("Alice likes tea")
        details = reranked[0].strategy_details["rerank"]
        assert details["reranker"] == f"cross-encoder:{model_dir.name}"
        assert details["score"] == pytest.approx(
            expected(query, dated_text(reranked[0].memory)), abs=1e-5
        )
        assert [h.memory.id for h in bank.recall(query, rerank=True, reinforce=False)] == [
            h.memory.id for h in reranked
        ]
        bank.configure(rerank=False)  # the bank's own default
        assert bank.recall(query, reinforce=False)[0].memory.id == offline[0].memory.id


def test_rerank_true_without_a_configured_reranker_is_refused(tmp_path: Path):
    with agentmem.AgentMemory(tmp_path / "store") as mem:
        bank = mem.bank("b")
        bank.retain("Alice likes tea.")
        with pytest.raises(InvalidInputError, match="rerank=True needs a reranker"):
            bank.recall("tea", rerank=True)
        with pytest.raises(InvalidInputError, match="rerank must be"):
            bank.recall("tea", rerank="yes")  # type: ignore[arg-type]
        with pytest.raises(InvalidInputError, match="rerank must be"):
            bank.configure(rerank="always")


def test_missing_or_malformed_folders_raise_clear_errors(tmp_path: Path):
    with pytest.raises(ModelError, match="folder not found"):
        CrossEncoderReranker(tmp_path / "nowhere")
    empty = tmp_path / "empty"
    empty.mkdir()
    with pytest.raises(ModelError, match="no ONNX model"):
        CrossEncoderReranker(empty)
    (empty / "model.onnx").write_bytes(b"not a model")
    with pytest.raises(ModelError, match="no tokenizer.json"):
        CrossEncoderReranker(empty)
    (empty / "tokenizer.json").write_text("{}")
    broken = CrossEncoderReranker(empty)
    with pytest.raises(ModelError, match="cannot load tokenizer"):
        broken.rerank("q", [Candidate(memory("tea"))])
    with pytest.raises(InvalidInputError):
        CrossEncoderReranker(empty, batch_size=0)


def test_a_damaged_onnx_file_is_a_model_error(model_dir: Path, tmp_path: Path):
    folder = tmp_path / "damaged"
    folder.mkdir()
    (folder / "tokenizer.json").write_bytes((model_dir / "tokenizer.json").read_bytes())
    (folder / "model.onnx").write_bytes(b"\x00garbage")
    with pytest.raises(ModelError, match="cannot load ONNX cross-encoder"):
        CrossEncoderReranker(folder).rerank("tea", [Candidate(memory("tea"))])
