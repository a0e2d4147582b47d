"""The IPU runtime's process-wide state lives in ``session.runtime``: ``clear_session`` keeps it, as Graphcore's
Poplar runtime outlives a Keras session, and ``reset_session`` starts it anew, as a new Python process would."""

import numpy as np

import ipu_teach
import ipu_teach.keras as keras
from ipu_teach import ipu, profiling, session
from ipu_teach.ipu import custom_loop


def _use_the_runtime(tmp_path):
    ipu.system.use_system("IPU-M2000")
    config = ipu.config.IPUConfig()
    config.auto_select_ipus = 1
    config.ipu_model.tiles_per_ipu = 16
    config.configure_ipu_system()
    ipu.utils.reset_ipu_seed(7)
    ipu.executable_cache.enable(tmp_path / "cache")
    custom_loop.note_execution("step", steps=2, seconds=1.0)
    with profiling.auto_report(tmp_path / "report"), ipu.ipu_strategy.IPUStrategy().scope():
        model = keras.Sequential([keras.layers.Dense(2, input_shape=(4,))])
        model.compile("sgd", "mse")
        model.fit(np.ones((4, 4), np.float32), np.ones((4, 2), np.float32), batch_size=4, verbose=0)


def test_clear_session_keeps_the_runtime_and_reset_session_starts_it_anew(tmp_path):
    _use_the_runtime(tmp_path)
    used = session.runtime
    assert (used.system_name, used.rounding_seed, used.executable_cache_path) == (
        "IPU-M2000",
        7,
        str(tmp_path / "cache"),
    )
    assert used.configured is ipu.system.current() and list(custom_loop.timings()) == ["step"]
    assert len(profiling.written_reports()) == 1 and used.report_overrides == []
    keras.backend.clear_session()
    assert ipu.system.current() is not None and ipu.executable_cache.cache_path() == str(tmp_path / "cache")
    ipu_teach.reset_session()
    assert session.runtime is used and session.runtime == session.RuntimeState()
    assert ipu.system.current() is None and ipu.system.system_name() == "IPU-POD16"
    assert ipu.executable_cache.cache_path() is None and custom_loop.timings() == {}
    assert profiling.written_reports() == []


def test_restored_afterwards_puts_the_runtime_back():
    config = ipu.config.IPUConfig()
    config.auto_select_ipus = 1
    config.configure_ipu_system()
    before = (session.runtime.configured, session.runtime.system_name, session.runtime.rounding_seed)
    with ipu.system.restored_afterwards():
        ipu.system.use_system("IPU-POD64")
        ipu.utils.reset_ipu_seed(3)
        config.configure_ipu_system()
    assert (session.runtime.configured, session.runtime.system_name, session.runtime.rounding_seed) == before


def test_the_simulated_host_and_poptorchs_marked_losses_are_runtime_state():
    """``clear_session`` keeps the input pipeline's rate (an IPU runtime setting); ``reset_session`` starts anew."""
    from ipu_teach import poptorch, torch

    ipu.host.simulate_input_pipeline(5_000, overlapped=False)
    loss = poptorch.identity_loss(torch.ones(2), reduction="sum")
    assert poptorch.annotations.is_marked_loss(loss)
    keras.backend.clear_session()
    assert (ipu.host.input_pipeline_rate(), ipu.host.input_pipeline_overlapped()) == (5_000.0, False)
    ipu_teach.reset_session()
    assert (ipu.host.input_pipeline_rate(), ipu.host.input_pipeline_overlapped()) == (None, True)
    assert not poptorch.annotations.is_marked_loss(loss) and session.runtime.marked_losses == []


def test_an_open_block_is_taken_off_its_stack_however_it_ends():
    blocks = session.OpenBlocks(["floor"])
    with blocks.pushed("outer") as value:
        assert value == "outer" and blocks == ["floor", "outer"]
        try:
            with blocks.pushed("inner"):
                raise KeyboardInterrupt
        except KeyboardInterrupt:
            pass
        assert blocks[-1] == "outer"
        blocks.append("left open by an abandoned inner block")
    assert blocks == ["floor"]


def test_the_stacks_of_open_blocks_are_open_blocks():
    """What ``with`` blocks hold is one kind of state (``session.OpenBlocks``), emptied as they close."""
    from ipu_teach.autograd import function, tensor
    from ipu_teach.keras.engine import call_context, device
    from ipu_teach.keras.layers import normalization
    from ipu_teach.poptorch import stages

    stacks = (function._recorders, function._scopes, function._repeating, tensor._grad_enabled, call_context._calls)
    stacks += (call_context._traces, normalization._pools, stages._traces, device._stack())
    assert all(isinstance(stack, session.OpenBlocks) for stack in stacks)
    with function.record() as tape, function.scope("layer"), function.repeated_iteration():
        assert function._recorders[-1] is tape and function._scopes[-1] == "layer" and function._repeating
    assert (function._recorders, function._scopes, function._repeating) == ([], [""], [])
