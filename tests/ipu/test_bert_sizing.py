"""A BERT-base encoder built from Keras layers (``examples.bert_encoder``) is sized on one IPU from shapes alone:
its parameters are tf-keras' for the same construction (``golden/attention.json``, tools/make_keras_goldens.py),
and neither its weights nor its activations are allocated on the host."""

import json
import pathlib
import tracemalloc

import pytest

from ipu_teach import ipu
from ipu_teach.examples import bert_encoder, configure_ipus
from ipu_teach.keras import mixed_precision

GOLDEN = json.loads((pathlib.Path(__file__).parents[1] / "keras" / "golden" / "attention.json").read_text())[
    "bert_base"
]


@pytest.fixture(autouse=True)
def float32_policy_after():
    yield
    mixed_precision.set_global_policy(None)


def test_bert_base_has_tf_keras_parameters_and_is_sized_from_shapes_alone():
    configure_ipus(1)
    mixed_precision.set_global_policy("mixed_float16")
    tracemalloc.start()
    try:
        with ipu.utils.shape_only_weights():
            model = bert_encoder(**GOLDEN["arguments"])
        model.compile("sgd", "mse")
        sizing = ipu.utils.estimate(model, batch_size=8, mode="predict")
        peak = tracemalloc.get_traced_memory()[1]
    finally:
        tracemalloc.stop()
    assert model.count_params() == GOLDEN["count_params"] == 108_891_648
    assert [list(w.shape) for w in model.weights] == GOLDEN["weight_shapes"]
    assert list(model.output_shape) == GOLDEN["output_shape"]
    weight_bytes = GOLDEN["count_params"] * 4
    assert sizing.memory_by_category["variables"] >= weight_bytes
    assert peak < weight_bytes / 4  # neither the 436 MB of weights nor the activations (over 1 GB) were made
    made = sum(int(m.per_tile.sum()) for m in sizing.executable.graph.memory if m.category == "activations")
    assert peak < made / 4  # every activation the program makes, live or not at its fullest step
    ops = [
        step.name.split("/")[1].split(":")[0] for step in sizing.executable.graph.forward if step.name.count("/") == 1
    ]
    assert (ops.count("BatchMatMul"), ops.count("MatMul"), ops.count("GELU")) == (2 * 12, 6 * 12, 12)  # on the AMP
