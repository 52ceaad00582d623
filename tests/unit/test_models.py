"""Offline models: the MiniLM embedder, the OpenAI-compatible embedder, token counting, fakes."""

from __future__ import annotations

import json
import os
import subprocess
import sys
import threading
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path
from types import SimpleNamespace
from typing import Any

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from agentmem.errors import InvalidInputError, ModelError
from agentmem.models import embedder as embedder_module
from agentmem.models.embedder import MiniLMEmbedder, OpenAIEmbedder
from agentmem.models.tokens import count_tokens, load_encoding, truncate_to_tokens
from agentmem.protocols import Embedder
from agentmem.testing import HashEmbedder

SENTENCES = [
    "The cat sits on the mat",
    "A cat is sitting on a rug",
    "Quarterly revenue grew 4%",
    "hi",
    "Alice moved to Berlin last June and started a new job at Acme Corp. as a data engineer.",
    "",
    "Bob prefers tea over coffee in the morning",
]


def cosine(a: np.ndarray, b: np.ndarray) -> float:
    return float(a @ b / (np.linalg.norm(a) * np.linalg.norm(b)))


@pytest.fixture(scope="module")
def minilm() -> MiniLMEmbedder:
    return MiniLMEmbedder()


# --- MiniLMEmbedder ---------------------------------------------------------------------------


def test_minilm_satisfies_the_embedder_protocol(minilm: MiniLMEmbedder) -> None:
    assert isinstance(minilm, Embedder)
    assert minilm.name == "all-MiniLM-L6-v2-int8-dynamic"
    assert minilm.dimension == 384


def test_minilm_paraphrase_is_closer_than_unrelated_sentence(minilm: MiniLMEmbedder) -> None:
    cat, paraphrase, revenue = minilm.embed(SENTENCES[:3])
    assert cosine(cat, paraphrase) > 0.6
    assert cosine(cat, paraphrase) > cosine(cat, revenue) + 0.4
    assert cosine(paraphrase, revenue) < 0.2


def test_minilm_query_finds_the_matching_memory(minilm: MiniLMEmbedder) -> None:
    memories = minilm.embed(SENTENCES)
    query = minilm.embed_query("Where does Alice live now?")
    assert int(np.argmax(memories @ query)) == 4


def test_minilm_rows_are_unit_float32(minilm: MiniLMEmbedder) -> None:
    vectors = minilm.embed(SENTENCES)
    assert vectors.shape == (len(SENTENCES), 384)
    assert vectors.dtype == np.float32
    np.testing.assert_allclose(np.linalg.norm(vectors, axis=1), 1.0, atol=1e-5)


@pytest.mark.parametrize("dynamic_int8", [False, True])
def test_minilm_batch_equals_one_by_one_in_any_order(dynamic_int8: bool) -> None:
    # fp32: batch_size=3 splits the texts into batches padded to different widths. int8: the
    # activations' range must be each text's own, not the batch's.
    embedder = MiniLMEmbedder(batch_size=3, dynamic_int8=dynamic_int8)
    one_by_one = np.stack([embedder.embed([text])[0] for text in SENTENCES])
    batched = embedder.embed(SENTENCES)
    np.testing.assert_allclose(batched, one_by_one, atol=1e-4)
    permutation = np.random.default_rng(7).permutation(len(SENTENCES))
    shuffled = embedder.embed([SENTENCES[i] for i in permutation])
    np.testing.assert_allclose(shuffled, one_by_one[permutation], atol=1e-4)


def test_minilm_empty_input_gives_empty_array(minilm: MiniLMEmbedder) -> None:
    vectors = minilm.embed([])
    assert vectors.shape == (0, 384)
    assert vectors.dtype == np.float32


def test_minilm_embed_query_is_one_row_of_embed(minilm: MiniLMEmbedder) -> None:
    query = minilm.embed_query(SENTENCES[0])
    assert query.shape == (384,)
    assert query.dtype == np.float32
    np.testing.assert_allclose(query, minilm.embed([SENTENCES[0]])[0], atol=1e-6)


def test_minilm_calls_beside_once_just_before_the_model_runs(
    minilm: MiniLMEmbedder, monkeypatch: pytest.MonkeyPatch
) -> None:
    events: list[str] = []
    minilm.embed_query("load the model")
    session = embedder_module._load_session(minilm._model_path, minilm._threads, dynamic_int8=True)
    run = type(session).run
    monkeypatch.setattr(
        type(session), "run", lambda self, *a, **k: (events.append("model"), run(self, *a, **k))[1]
    )
    vector = minilm.embed_query_beside("Alice moved to Berlin", lambda: events.append("beside"))
    assert events == ["beside", "model"]
    np.testing.assert_array_equal(vector, minilm.embed_query("Alice moved to Berlin"))
    with pytest.raises(InvalidInputError):
        minilm.embed_query_beside(b"bytes", lambda: events.append("beside"))  # type: ignore[arg-type]
    assert events.count("beside") == 1  # refused before anything started


def test_an_embedder_without_a_model_to_wait_on_calls_beside_first() -> None:
    events: list[str] = []

    class Recording(HashEmbedder):
        def embed_query(self, text: str) -> np.ndarray:
            events.append("embed")
            return super().embed_query(text)

    vector = embedder_module.embed_query_beside(Recording(), "hi", lambda: events.append("beside"))
    assert events == ["beside", "embed"]
    np.testing.assert_array_equal(vector, HashEmbedder().embed_query("hi"))


def test_minilm_truncates_to_max_length() -> None:
    # [CLS] + six one-token words + [SEP] = 8 tokens: the rest of the longer text is cut off.
    embedder = MiniLMEmbedder(max_length=8)
    long, short = embedder.embed(
        ["one two three four five six seven eight nine ten", "one two three four five six"]
    )
    np.testing.assert_allclose(long, short, atol=1e-5)


def test_minilm_reads_past_the_tokenizer_files_own_128_token_limit(
    minilm: MiniLMEmbedder,
) -> None:
    # The vendored tokenizer.json truncates at 128; the model was trained on 256.
    words = [f"word{i}" for i in range(60)] + ["astronomy telescope galaxy nebula"] * 10
    long_text = " ".join(words)
    first_128_tokens = truncate_minilm_tokens(long_text, 128)
    long, cut = minilm.embed([long_text, first_128_tokens])
    assert cosine(long, cut) < 0.999


def truncate_minilm_tokens(text: str, max_length: int) -> str:
    from tokenizers import Tokenizer

    tokenizer = Tokenizer.from_file(str(embedder_module.MINILM_TOKENIZER_PATH))
    tokenizer.no_padding()
    tokenizer.enable_truncation(max_length=max_length)
    return tokenizer.decode(tokenizer.encode(text).ids)


def test_minilm_session_loads_once_and_is_shared(monkeypatch: pytest.MonkeyPatch) -> None:
    import onnxruntime

    monkeypatch.setattr(embedder_module, "_sessions", {})
    loads: list[str] = []
    real_session = onnxruntime.InferenceSession

    def counting_session(path: str, *args: Any, **kwargs: Any) -> Any:
        loads.append(path)
        return real_session(path, *args, **kwargs)

    monkeypatch.setattr(onnxruntime, "InferenceSession", counting_session)
    first, second = MiniLMEmbedder(threads=2), MiniLMEmbedder(threads=2)
    with ThreadPoolExecutor(max_workers=4) as pool:
        results = list(pool.map(lambda e: e.embed(SENTENCES), [first, second] * 4))
    assert len(loads) == 1
    for result in results[1:]:
        np.testing.assert_allclose(result, results[0], atol=1e-6)


def test_minilm_is_safe_to_call_from_many_threads(minilm: MiniLMEmbedder) -> None:
    expected = minilm.embed(SENTENCES)
    barrier = threading.Barrier(4)

    def run(_: int) -> np.ndarray:
        barrier.wait()
        return minilm.embed(SENTENCES)

    with ThreadPoolExecutor(max_workers=4) as pool:
        for result in pool.map(run, range(4)):
            np.testing.assert_allclose(result, expected, atol=1e-6)


def test_minilm_int8_products_stay_close_to_the_packaged_arithmetic() -> None:
    fp32 = MiniLMEmbedder(dynamic_int8=False)
    int8 = MiniLMEmbedder()
    assert int8.name != fp32.name  # a bank must not mix their vectors
    texts = [t for t in SENTENCES if t]
    a, b = fp32.embed(texts), int8.embed(texts)
    assert min(float(x @ y) for x, y in zip(a, b, strict=True)) > 0.95
    # The ranking a user sees is the same: the paraphrase beats the unrelated sentence.
    query = int8.embed_query("a cat on a mat")
    assert cosine(query, b[1]) > cosine(query, b[2])


def test_minilm_int8_without_the_onnx_package_says_what_is_missing(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    monkeypatch.setattr(embedder_module, "_sessions", {})
    monkeypatch.setitem(sys.modules, "onnx", None)  # makes ``import onnx`` fail
    with pytest.raises(ModelError, match="'onnx' package"):
        MiniLMEmbedder().embed(["hello"])
    assert MiniLMEmbedder(dynamic_int8=False).embed(["hello"]).shape == (1, 384)


def test_minilm_missing_model_file_raises_model_error(tmp_path: Path) -> None:
    with pytest.raises(ModelError, match="not found"):
        MiniLMEmbedder(model_path=tmp_path / "missing.onnx")


def test_minilm_missing_tokenizer_file_raises_model_error(tmp_path: Path) -> None:
    with pytest.raises(ModelError, match="tokenizer"):
        MiniLMEmbedder(tokenizer_path=tmp_path / "tokenizer.json")


def test_minilm_damaged_model_file_raises_model_error(tmp_path: Path) -> None:
    damaged = tmp_path / "model.onnx"
    damaged.write_bytes(b"not an onnx model")
    embedder = MiniLMEmbedder(model_path=damaged)
    with pytest.raises(ModelError, match="cannot load ONNX"):
        embedder.embed(["hello"])


@pytest.mark.parametrize(
    "kwargs", [{"batch_size": 0}, {"max_length": 1}, {"max_length": 513}, {"threads": 0}]
)
def test_minilm_rejects_bad_arguments(kwargs: dict[str, int]) -> None:
    with pytest.raises(InvalidInputError):
        MiniLMEmbedder(**kwargs)


def test_minilm_rejects_a_bare_string(minilm: MiniLMEmbedder) -> None:
    with pytest.raises(InvalidInputError, match="single string"):
        minilm.embed("The cat sits on the mat")  # type: ignore[arg-type]


# --- OpenAIEmbedder ---------------------------------------------------------------------------


class FakeEmbeddings:
    """Records requests; answers with unnormalised vectors, in reverse order, with indices."""

    def __init__(self, dimension: int, error: Exception | None = None) -> None:
        self.dimension = dimension
        self.error = error
        self.calls: list[dict[str, Any]] = []

    def create(self, *, model: str, input: list[str], dimensions: int) -> SimpleNamespace:
        self.calls.append({"model": model, "input": list(input), "dimensions": dimensions})
        if self.error is not None:
            raise self.error
        data = [
            SimpleNamespace(
                index=i, embedding=[float(len(text) + 1)] + [1.0] * (self.dimension - 1)
            )
            for i, text in enumerate(input)
        ]
        return SimpleNamespace(data=list(reversed(data)))


def fake_client(dimension: int, error: Exception | None = None) -> SimpleNamespace:
    return SimpleNamespace(embeddings=FakeEmbeddings(dimension, error))


def test_openai_embedder_batches_and_normalises() -> None:
    client = fake_client(4)
    embedder = OpenAIEmbedder(client, model="text-embedding-3-small", dimension=4, batch_size=2)
    texts = ["a", "bb", "ccc", "dddd", "eeeee"]
    vectors = embedder.embed(texts)
    assert [call["input"] for call in client.embeddings.calls] == [
        ["a", "bb"],
        ["ccc", "dddd"],
        ["eeeee"],
    ]
    assert {call["model"] for call in client.embeddings.calls} == {"text-embedding-3-small"}
    assert {call["dimensions"] for call in client.embeddings.calls} == {4}
    assert vectors.shape == (5, 4)
    assert vectors.dtype == np.float32
    np.testing.assert_allclose(np.linalg.norm(vectors, axis=1), 1.0, atol=1e-6)
    # The first coordinate grows with text length: the rows came back in input order.
    assert list(np.argsort(vectors[:, 0])) == [0, 1, 2, 3, 4]
    assert isinstance(embedder, Embedder)
    assert embedder.name == "openai:text-embedding-3-small:4"


def test_openai_embedder_query_and_empty_input() -> None:
    client = fake_client(8)
    embedder = OpenAIEmbedder(client, dimension=8)
    assert embedder.embed([]).shape == (0, 8)
    assert client.embeddings.calls == []
    query = embedder.embed_query("hello")
    assert query.shape == (8,)
    assert np.linalg.norm(query) == pytest.approx(1.0, abs=1e-6)


def test_openai_embedder_wraps_provider_errors() -> None:
    provider_error = RuntimeError("429 rate limited")
    embedder = OpenAIEmbedder(fake_client(4, error=provider_error), dimension=4)
    with pytest.raises(ModelError, match="rate limited") as excinfo:
        embedder.embed(["hello"])
    assert excinfo.value.__cause__ is provider_error


def test_openai_embedder_refuses_vectors_of_the_wrong_length() -> None:
    embedder = OpenAIEmbedder(fake_client(3), dimension=4)
    with pytest.raises(ModelError, match="expected"):
        embedder.embed(["hello"])


def test_openai_embedder_refuses_a_malformed_response() -> None:
    client = SimpleNamespace(
        embeddings=SimpleNamespace(create=lambda **_: SimpleNamespace(choices=[]))
    )
    with pytest.raises(ModelError, match="malformed"):
        OpenAIEmbedder(client, dimension=4).embed(["hello"])


# --- tokens -----------------------------------------------------------------------------------


def test_count_tokens_matches_cl100k() -> None:
    assert load_encoding().encode_ordinary("Hello agent memory!") == [9906, 8479, 5044, 0]
    assert count_tokens("Hello agent memory!") == 4
    assert count_tokens("") == 0


def test_special_token_markers_count_as_ordinary_text() -> None:
    # As a special token it would be one token (100257); as text it is several.
    assert count_tokens("<|endoftext|>") > 1
    assert truncate_to_tokens("a <|endoftext|> b", 100) == "a <|endoftext|> b"


def test_truncate_keeps_text_that_fits() -> None:
    assert truncate_to_tokens("Hello agent memory!", 4) == "Hello agent memory!"
    assert truncate_to_tokens("Hello agent memory!", 2) == "Hello agent"
    assert truncate_to_tokens("Hello agent memory!", 0) == ""


def test_truncate_drops_a_split_multibyte_character() -> None:
    text = "🧠🧠🧠 memory"
    for budget in range(count_tokens(text)):
        cut = truncate_to_tokens(text, budget)
        assert "\ufffd" not in cut
        assert text.startswith(cut)
        assert count_tokens(cut) <= budget


@settings(max_examples=300, deadline=None)
@given(text=st.text(max_size=200), budget=st.integers(min_value=0, max_value=60))
def test_truncate_is_a_prefix_within_budget(text: str, budget: int) -> None:
    cut = truncate_to_tokens(text, budget)
    assert text.startswith(cut)
    assert count_tokens(cut) <= budget
    if count_tokens(text) <= budget:
        assert cut == text


def test_tokens_reject_bad_arguments() -> None:
    with pytest.raises(InvalidInputError):
        truncate_to_tokens("hello", -1)
    with pytest.raises(InvalidInputError):
        count_tokens(None)  # type: ignore[arg-type]


# --- HashEmbedder -----------------------------------------------------------------------------


def test_hash_embedder_is_deterministic() -> None:
    first = HashEmbedder().embed(SENTENCES)
    second = HashEmbedder().embed(list(reversed(SENTENCES)))[::-1]
    np.testing.assert_array_equal(first, second)


def test_hash_embedder_is_identical_across_processes() -> None:
    script = (
        "from agentmem.testing import HashEmbedder; "
        "print(HashEmbedder(64).embed_query('Alice likes coffee').tolist())"
    )
    # Different hash seeds: Python's own hash() would give different vectors in each.
    outputs = {
        subprocess.run(
            [sys.executable, "-c", script],
            env={**os.environ, "PYTHONHASHSEED": seed},
            capture_output=True,
            text=True,
            check=True,
        ).stdout
        for seed in ("1", "2")
    }
    assert len(outputs) == 1
    np.testing.assert_allclose(
        json.loads(outputs.pop()),
        HashEmbedder(64).embed_query("Alice likes coffee"),
        atol=1e-6,
    )


def test_hash_embedder_ranks_shared_words_higher() -> None:
    embedder = HashEmbedder()
    query = embedder.embed_query("Alice likes coffee")
    same, one_word, unrelated = embedder.embed(
        ["alice LIKES coffee!", "Alice moved to Berlin", "Quarterly revenue grew 4%"]
    )
    assert cosine(query, same) == pytest.approx(1.0, abs=1e-6)
    assert cosine(query, one_word) > cosine(query, unrelated)
    assert cosine(query, one_word) > 0.2


def test_hash_embedder_shape_norm_and_name() -> None:
    embedder = HashEmbedder(dimension=32)
    assert isinstance(embedder, Embedder)
    assert embedder.name == "hash-32"
    assert embedder.dimension == 32
    assert embedder.embed([]).shape == (0, 32)
    vectors = embedder.embed(["", "...", "some words"])
    assert vectors.dtype == np.float32
    np.testing.assert_allclose(np.linalg.norm(vectors, axis=1), 1.0, atol=1e-6)
    with pytest.raises(InvalidInputError):
        HashEmbedder(dimension=0)
    with pytest.raises(InvalidInputError):
        embedder.embed("some words")  # type: ignore[arg-type]
