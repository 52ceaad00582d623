"""The int8 rewrite of an ONNX model's weight products (agentmem.models.quantize)."""

from __future__ import annotations

import numpy as np
import onnx
import onnxruntime as ort
import pytest
from onnx import TensorProto, helper, numpy_helper

from agentmem.errors import ModelError
from agentmem.models.quantize import WEIGHT_RANGE, quantize_weight_products

RNG = np.random.default_rng(3)
W_PLAIN = RNG.normal(size=(8, 6)).astype(np.float32)
W_STORED = RNG.integers(-127, 128, size=(6, 5)).astype(np.int8)
W_SCALE = np.float32(0.01)


def two_layer_model() -> bytes:
    """y = ((x @ W_plain) @ (int8 W_stored × scale)) and s = h @ h^T, an activation product."""
    nodes = [
        helper.make_node("MatMul", ["x", "w_plain"], ["h"], name="dense1"),
        helper.make_node("Cast", ["w_stored"], ["w_stored_f"], to=TensorProto.FLOAT),
        helper.make_node("Mul", ["w_stored_f", "w_scale"], ["w_dequant"]),
        helper.make_node("MatMul", ["h", "w_dequant"], ["y"], name="dense2"),
        helper.make_node("Transpose", ["h"], ["h_t"]),
        helper.make_node("MatMul", ["h", "h_t"], ["s"], name="scores"),
    ]
    graph = helper.make_graph(
        nodes,
        "two_layers",
        [helper.make_tensor_value_info("x", TensorProto.FLOAT, ["n", 8])],
        [
            helper.make_tensor_value_info("y", TensorProto.FLOAT, ["n", 5]),
            helper.make_tensor_value_info("s", TensorProto.FLOAT, ["n", "n"]),
        ],
        [
            numpy_helper.from_array(W_PLAIN, "w_plain"),
            numpy_helper.from_array(W_STORED, "w_stored"),
            numpy_helper.from_array(np.array(W_SCALE), "w_scale"),
        ],
    )
    model = helper.make_model(graph, opset_imports=[helper.make_opsetid("", 17)])
    return model.SerializeToString()


def run(model: bytes, x: np.ndarray) -> list[np.ndarray]:
    session = ort.InferenceSession(model, providers=["CPUExecutionProvider"])
    return session.run(["y", "s"], {"x": x})


def test_weight_products_run_in_int8_and_stay_close() -> None:
    original = two_layer_model()
    quantized = quantize_weight_products(original)
    graph = onnx.load_from_string(quantized).graph
    ops = [node.op_type for node in graph.node]
    assert ops.count("MatMulInteger") == 2
    assert ops.count("MatMul") == 1  # h @ h^T: both sides are activations
    # The fp32 weights and the dequantizing nodes are gone, not kept beside their int8 copy.
    names = {init.name for init in graph.initializer}
    assert not names & {"w_plain", "w_stored", "w_scale"}
    assert not {"w_stored_f", "w_dequant"} & {out for node in graph.node for out in node.output}

    x = RNG.normal(size=(4, 8)).astype(np.float32)
    (y, s), (y_q, s_q) = run(original, x), run(quantized, x)
    assert np.abs(y_q - y).max() < 0.05 * np.abs(y).max()
    assert np.abs(s_q - s).max() < 0.05 * np.abs(s).max()


def test_weights_use_seven_bits_with_a_scale_per_output_column() -> None:
    graph = onnx.load_from_string(quantize_weight_products(two_layer_model())).graph
    weights = {init.name: numpy_helper.to_array(init) for init in graph.initializer}
    (plain,) = [v for k, v in weights.items() if k.startswith("dense1") and k.endswith("_w")]
    (scale,) = [v for k, v in weights.items() if k.startswith("dense1") and k.endswith("_scale")]
    assert plain.dtype == np.int8 and np.abs(plain).max() == WEIGHT_RANGE
    assert scale.shape == (6,)
    np.testing.assert_allclose(plain * scale, W_PLAIN, atol=scale.max() / 2 + 1e-7)


def test_bytes_that_are_not_a_model_raise_model_error() -> None:
    with pytest.raises(ModelError, match="ONNX"):
        quantize_weight_products(b"\xff\xfe not a protobuf")
