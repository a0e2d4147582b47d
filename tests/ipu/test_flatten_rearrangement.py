"""A flatten in PyTorch's channel-first order of a convolution's output: poplin holds that output with its channels
grouped innermost, so the flattened values are not contiguous on the tiles and the next product copies them into its
own layout, one region per value (issue 20). A Keras model's channels-last Flatten keeps each group together and
stays a view."""

import numpy as np
import pytest

import ipu_teach.keras as keras
from ipu_teach import hardware, ipu, poptorch, torch
from ipu_teach.autograd import Tensor, ops, record
from ipu_teach.autograd.cost import Rearrangement
from ipu_teach.examples import configure_ipus
from ipu_teach.ipu import memory_layout
from ipu_teach.torch import nn


def _conv_output(shape=(2, 6, 6, 3), filters=4):
    x = Tensor(np.zeros(shape, np.float32))
    kernel = Tensor(np.zeros((3, 3, shape[-1], filters), np.float32))
    return ops.conv2d(x, kernel, Tensor(np.zeros(filters, np.float32)))


def _reshape_record(x, shape):
    with record() as tape:
        ops.reshape(x, shape)
    (rec,) = tape
    return rec


def test_a_convolutions_output_keeps_its_channels_grouped_through_element_wise_ops_and_permutes():
    y = _conv_output()
    assert y.layout == 3  # channels last, grouped innermost (poplin's createOutput)
    assert ops.relu(y).layout == 3  # popops clones its input's layout
    assert ops.transpose(y, perm=(0, 3, 1, 2)).layout == 1  # a view: the channels move to axis 1
    assert Tensor(np.zeros((2, 4, 4, 4), np.float32)).layout is None  # the host's data, in its own order


def test_flattening_channels_first_copies_every_value_as_a_region_of_its_own():
    nchw = ops.transpose(_conv_output(), perm=(0, 3, 1, 2))  # (2, 4, 4, 4)
    rec = _reshape_record(nchw, (2, 64))
    assert rec.forward.vector == (Rearrangement(128, 128),)
    assert rec.forward.flops == 0 and rec.forward.bytes_in == 128 * 4
    assert rec.backward.vector == (Rearrangement(128, 128),)  # the gradient goes back into the channel groups


@pytest.mark.parametrize(
    "source, shape",
    [
        ("channels last", (2, 64)),  # Keras' own Flatten: each channel group's values stay together
        ("host", (2, 64)),  # data in its own order
        ("channels first", (2, 4, 16)),  # the channel axis kept as an axis of its own
        ("one channel", (2, 16)),  # one channel: the positions stay contiguous
    ],
)
def test_other_reshapes_stay_views(source, shape):
    x = {
        "channels last": lambda: _conv_output(),
        "host": lambda: Tensor(np.zeros((2, 4, 4, 4), np.float32)),
        "channels first": lambda: ops.transpose(_conv_output(), perm=(0, 3, 1, 2)),
        "one channel": lambda: ops.transpose(_conv_output(filters=1), perm=(0, 3, 1, 2)),
    }[source]()
    rec = _reshape_record(x, shape)
    assert rec.forward.vector == () and rec.forward.bytes_in == 0


def test_a_reshape_that_keeps_the_channel_axis_keeps_the_layout_for_a_later_flatten():
    nchw = ops.transpose(_conv_output(), perm=(0, 3, 1, 2))
    rows = ops.reshape(nchw, (2, 4, 16))
    assert rows.layout == 1
    assert _reshape_record(rows, (2, 64)).forward.vector == (Rearrangement(128, 128),)


def _keras_graph(channels_first: bool):
    """The train graph of a small CNN flattened as Keras does, or first permuted to channels first (torch's order)."""
    configure_ipus(1)
    with ipu.ipu_strategy.IPUStrategy().scope():
        inputs = keras.Input(shape=(10, 10, 1))
        x = keras.layers.Conv2D(8, 3, activation="relu")(inputs)
        if channels_first:
            x = keras.layers.Permute((3, 1, 2))(x)
        x = keras.layers.Flatten()(x)
        model = keras.Model(inputs, keras.layers.Dense(4)(x))
        model.compile("sgd", "mse")
        model.fit(np.zeros((8, 10, 10, 1), np.float32), np.zeros((8, 4), np.float32), batch_size=8, verbose=0)
    return model.get_ipu_executable("train").graph


def test_the_lowered_copy_is_an_exchange_whose_messages_are_the_regions():
    graph = _keras_graph(channels_first=True)
    elements = 8 * 8 * 8 * 8  # batch x rows x columns x channels of the convolution's output
    forward = [s for s in graph.forward if s.name.split("/")[-1].startswith("Reshape")]
    backward = [s for s in graph.backward if "/Reshape" in s.name]
    for step in forward + backward:
        assert not step.cycles.any()  # no vertex: a Poplar Copy is exchange alone
        assert step.received.sum() == elements * 4
        assert step.messages.sum() == elements and step.sends.sum() == elements
    assert len(forward) == 1 and len(backward) == 1
    plain = _keras_graph(channels_first=False)
    assert not [s for s in plain.steps if "Reshape" in s.name]  # channels last: a view, no step


def test_the_copys_regions_add_exchange_code():
    def exchange_code(graph):
        return sum(int(m.per_tile.sum()) for m in graph.memory if m.category == "internal exchange code")

    grown = exchange_code(_keras_graph(True)) - exchange_code(_keras_graph(False))
    code = hardware.CODE  # each region a message received (and one sent), forward and backward
    per_region = code.exchange_instructions_per_message_received + code.exchange_instructions_per_message_sent
    assert grown >= 8**4 * 2 * per_region * code.instruction_bytes


class _TorchCNN(nn.Module):
    def __init__(self):
        super().__init__()
        self.conv = nn.Conv2d(1, 8, 3)
        self.fc = nn.Linear(8 * 8 * 8, 4)

    def forward(self, x):
        return self.fc(torch.flatten(torch.relu(self.conv(x)), start_dim=1))


def test_poptorch_flatten_after_a_conv2d_is_the_copy_as_poptorch_traces_it():
    torch.manual_seed(0)
    model = poptorch.inferenceModel(_TorchCNN().eval())
    model(torch.zeros(8, 1, 10, 10))
    graph = model.get_ipu_executable().graph
    (step,) = [s for s in graph.forward if s.name.split("/")[-1].startswith("Reshape")]
    assert step.messages.sum() == 8**4 and not step.cycles.any()
    per_tile = memory_layout.mapped_bytes(8**4, 4, graph.spec.tiles)
    np.testing.assert_array_equal(step.received, per_tile)
