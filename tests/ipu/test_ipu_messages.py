"""Graphcore's INFO and WARNING lines appear when the real system prints them, and not otherwise."""

import pytest
from ipu_test_helpers import configure, cpu_model, data, ipu_model, lines_with

ONLY_ONE_STEP = "has been configured with only 1 steps per execution"
DISTRIBUTED = "Training is distributed across"
ACCUMULATING = "accumulating"


def run_fit(capsys, replicas=1, epochs=1, batch_size=16, n=256, **model_options):
    x, y = data(n)
    configure(replicas)
    model = ipu_model(**model_options)
    capsys.readouterr()
    model.fit(x, y, batch_size=batch_size, epochs=epochs, shuffle=False, verbose=1)
    return capsys.readouterr().out


def test_only_one_step_per_execution_is_noted_before_every_epoch(capsys):
    out = run_fit(capsys, epochs=3)
    notes = lines_with(out, ONLY_ONE_STEP)
    assert len(notes) == 3
    assert (
        notes[0].startswith("INFO:") and "`steps_per_execution` argument passed to the `compile()` method" in notes[0]
    )
    lines = out.splitlines()
    for epoch in (1, 2, 3):  # each note comes right before its epoch's header
        assert lines[lines.index(f"Epoch {epoch}/3") - 1] == notes[0]


def test_more_steps_per_execution_give_no_note(capsys):
    out = run_fit(capsys, epochs=2, steps_per_execution=4)
    assert not lines_with(out, ONLY_ONE_STEP)
    assert not lines_with(out, "WARNING:")


def test_evaluate_notes_one_step_per_execution_once(capsys):
    x, y = data(64)
    configure(1)
    model = ipu_model()
    model.evaluate(x, y, batch_size=16, verbose=0)
    assert len(lines_with(capsys.readouterr().out, ONLY_ONE_STEP)) == 1


def test_two_replicas_report_the_effective_batch_size(capsys):
    out = run_fit(capsys, replicas=2, batch_size=64, steps_per_execution=2)
    assert lines_with(out, DISTRIBUTED) == [
        "INFO:ipu_teach:Training is distributed across 2 replicas, your effective batch size is 128."
    ]


def test_one_replica_without_accumulation_says_nothing_about_effective_batch(capsys):
    out = run_fit(capsys, steps_per_execution=2)
    assert not lines_with(out, "effective batch size")


@pytest.mark.parametrize("replicas,accumulation", [(1, 4), (2, 2)])
def test_accumulation_reports_micro_batch_times_accumulation_times_replicas(capsys, replicas, accumulation):
    out = run_fit(capsys, replicas=replicas, batch_size=16, steps_per_execution=accumulation, accumulation=accumulation)
    [line] = lines_with(out, "effective batch size")
    assert f"{ACCUMULATING} {accumulation} batches per optimizer step" in line
    assert line.endswith(f"your effective batch size is {16 * accumulation * replicas}.")
    assert (DISTRIBUTED in line) == (replicas > 1)


def test_steps_per_execution_larger_than_the_data_is_truncated_with_a_warning(capsys):
    out = run_fit(capsys, n=128, steps_per_execution=100)  # 8 steps of 16
    [warning] = lines_with(out, "WARNING:")
    assert "steps_per_execution=100" in warning and "truncated to 8" in warning
    assert "8/8 [" in out


def test_a_model_on_the_cpu_prints_no_ipu_lines(capsys):
    x, y = data(64)
    configure(2)  # configured, but the model is not in the strategy's scope
    cpu_model().fit(x, y, batch_size=16, verbose=1)
    out = capsys.readouterr().out
    assert not lines_with(out, "INFO:") and not lines_with(out, "WARNING:")
    assert "(simulated)" not in out
