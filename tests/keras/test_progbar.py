"""The progress bar as fit prints it: clean lines off a terminal, one rewritten line on one."""

import io
import re
import sys

from keras_helpers import tiny_classification, tiny_dense_model

from ipu_teach.keras.progbar import Progbar

TIMING = r"\d+s \d+(us|ms|s)/step"


class Terminal(io.StringIO):
    def isatty(self):
        return True


def fitted_output(monkeypatch, stream, **fit_kwargs):
    x, y = tiny_classification(n=40)
    model = tiny_dense_model()
    model.compile("sgd", "sparse_categorical_crossentropy", metrics=["accuracy"])
    monkeypatch.setattr(sys, "stdout", stream)
    model.fit(x, y, batch_size=4, epochs=2, **fit_kwargs)
    monkeypatch.undo()
    return stream.getvalue()


def test_non_terminal_prints_clean_lines(monkeypatch):
    out = fitted_output(monkeypatch, io.StringIO())
    assert "\r" not in out and "\b" not in out
    lines = out.splitlines()
    assert lines[0] == "Epoch 1/2" and lines[2] == "Epoch 2/2" and len(lines) == 4
    for line in (lines[1], lines[3]):
        assert re.fullmatch(r"10/10 \[={30}\] - " + TIMING + r" - loss: \d\.\d{4} - accuracy: \d\.\d{4}", line), line


def test_terminal_rewrites_one_line(monkeypatch):
    out = fitted_output(monkeypatch, Terminal())
    first_epoch = out.split("Epoch 2/2\n")[0]
    updates = first_epoch.split("\r")[1:]
    assert len(updates) == 11  # one update per step with 10 steps, then Keras' end of the epoch
    assert re.match(r" 1/10 \[==>\.{27}\] - ETA: \d+s - loss: ", updates[0])
    assert re.match(r"10/10 \[={30}\] - ETA: 0s - loss: ", updates[-2])
    assert updates[-1].endswith("\n") and all(not u.endswith("\n") for u in updates[:-1])
    assert re.fullmatch(r"10/10 \[={30}\] - " + TIMING + r" - loss: \d\.\d{4} - accuracy: \d\.\d{4}\n", updates[-1])


def test_verbose_0_prints_nothing(monkeypatch):
    assert fitted_output(monkeypatch, io.StringIO(), verbose=0) == ""


def test_verbose_2_prints_one_line_per_epoch(monkeypatch):
    lines = fitted_output(monkeypatch, Terminal(), verbose=2).splitlines()
    assert [line for line in lines if line.startswith("Epoch")] == ["Epoch 1/2", "Epoch 2/2"]
    assert len(lines) == 4 and "\r" not in "".join(lines)
    assert re.fullmatch(r"10/10 - \d+s - loss: \d\.\d{4} - accuracy: \d\.\d{4} - \d+(us|ms|s)/step", lines[1])


def test_small_values_use_scientific_notation_like_keras():
    stream = io.StringIO()
    Progbar(2, stream=stream).update(2, [("loss", 0.0004), ("accuracy", 1.0)], elapsed=3.0)
    assert (
        stream.getvalue() == "2/2 [==============================] - 3s 2s/step - loss: 4.0000e-04 - accuracy: 1.0000\n"
    )


def test_evaluate_prints_the_tutorial_style_line(monkeypatch):
    x, y = tiny_classification(n=20)
    model = tiny_dense_model()
    model.compile("sgd", "sparse_categorical_crossentropy", metrics=["accuracy"])
    stream = io.StringIO()
    monkeypatch.setattr(sys, "stdout", stream)
    loss, accuracy = model.evaluate(x, y, batch_size=8)
    monkeypatch.undo()
    assert re.fullmatch(
        r"3/3 \[={30}\] - " + TIMING + f" - loss: {loss:.4f} - accuracy: {accuracy:.4f}\n", stream.getvalue()
    )


def test_eta_uses_keras_format_and_a_shorter_line_blanks_the_rest():
    stream = Terminal()
    bar = Progbar(1000, stream=stream)
    bar.update(50, [("loss", 1.5)], elapsed=50.0)  # 950 steps to go at 1 s each: ETA 15:50
    bar.update(990, [("loss", 1.25)], elapsed=990.0)  # ETA 10s: a shorter line
    first, second = stream.getvalue().split("\r")[1:]
    assert " - ETA: 15:50 - loss: 1.5000" in first
    assert second.startswith(" 990/1000 [============================>.] - ETA: 10s - loss: 1.2500")
    assert len(second) == len(first) and second.endswith("  ")
    bar.update(1000, [("loss", 1.0)], elapsed=4000.0)
    assert stream.getvalue().endswith("1000/1000 [==============================] - 4000s 4s/step - loss: 1.0000\n")
    assert Progbar(10, stream=stream)._timing(0, 0.0, False) == " - ETA: 0s"


def test_validation_values_end_the_epoch_line_at_verbose_1_and_2(monkeypatch):
    x, y = tiny_classification(n=40)
    for verbose, stream in ((1, io.StringIO()), (1, Terminal()), (2, Terminal())):
        out = fitted_output(monkeypatch, stream, verbose=verbose, validation_data=(x[:8], y[:8]))
        last = out.split("Epoch 2/2\n")[1].split("\r")[-1]
        assert re.search(
            r" - loss: \d\.\d{4} - accuracy: \d\.\d{4} - val_loss: \d\.\d{4} - val_accuracy: \d\.\d{4}", last
        ), (verbose, last)
