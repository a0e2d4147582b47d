"""``History.epoch_timings``: each epoch's simulated seconds and seconds per step, as its progress line shows
them, the public way for a benchmark to read what ``fit`` printed."""

from ipu_test_helpers import configure, data, ipu_model

from ipu_teach.keras.progbar import format_duration, format_per_step


def test_each_epochs_timing_is_what_its_progress_line_shows(capsys):
    configure(1)
    x, y = data(64)
    model = ipu_model(steps_per_execution=4)
    history = model.fit(x, y, batch_size=8, epochs=3, verbose=2)
    lines = [line for line in capsys.readouterr().out.splitlines() if line.startswith("8/8 - ")]
    assert len(history.epoch_timings) == len(lines) == 3
    for (seconds, per_step), line in zip(history.epoch_timings, lines):
        assert line.startswith(f"8/8 - {format_duration(seconds)} - loss: ")
        assert line.endswith(f" - {format_per_step(per_step)} (simulated)")
    first, later = history.epoch_timings[0][0], history.epoch_timings[1][0]
    assert first > later  # the first epoch pays the simulated compile


def test_a_new_fit_starts_a_new_record():
    configure(1)
    x, y = data(32)
    model = ipu_model()
    model.fit(x, y, batch_size=8, epochs=2, verbose=0)
    assert len(model.fit(x, y, batch_size=8, epochs=1, verbose=0).epoch_timings) == 1
