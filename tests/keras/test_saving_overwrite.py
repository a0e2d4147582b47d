"""``save(..., overwrite=False)``, ``save_weights`` and ``keras.models.save_model``: an existing file is
replaced only when the user answers "y" to Keras' prompt; where nobody can be asked it is kept and the
save refused with an error naming the file and the argument."""

import builtins
import io
import os
import subprocess
import sys
from pathlib import Path

import pytest
from keras_helpers import tiny_dense_model

import ipu_teach.keras as keras

ROOT = Path(__file__).resolve().parents[2]
SAVES = {
    "model.save": lambda model, path, **kw: model.save(path, **kw),
    "model.save_weights": lambda model, path, **kw: model.save_weights(path, **kw),
    "keras.models.save_model": lambda model, path, **kw: keras.models.save_model(model, path, **kw),
}
CALLER = {"model.save": "model.save", "model.save_weights": "model.save_weights"}
CALLER["keras.models.save_model"] = "model.save"  # it calls model.save, as Keras' does


class Terminal(io.StringIO):
    def isatty(self):
        return True


def answering(answers, prompts):
    """An ``input`` that records its prompts and gives ``answers`` in turn (an exception is raised)."""
    answers = iter(answers)

    def kernel_input(prompt=""):
        prompts.append(prompt)
        answer = next(answers)
        if isinstance(answer, BaseException):
            raise answer
        return answer

    return kernel_input


@pytest.fixture
def existing(tmp_path):
    path = tmp_path / "model.keras"
    path.write_bytes(b"the user's earlier model")
    return path


@pytest.mark.parametrize("save", SAVES)
def test_without_anyone_to_ask_an_existing_file_is_kept_and_the_save_refused(save, existing, monkeypatch):
    monkeypatch.setattr(sys, "stdin", io.StringIO(""))  # a batch job: standard input is not a terminal
    with pytest.raises(FileExistsError) as error:
        SAVES[save](tiny_dense_model(), existing, overwrite=False)
    assert str(error.value) == (
        f"{CALLER[save]}: {str(existing)!r} already exists and overwrite=False, but no one can be asked "
        "(standard input is not a terminal), so the file is kept and nothing was saved. "
        "Pass overwrite=True to replace it, or save under another name"
    )
    assert existing.read_bytes() == b"the user's earlier model"
    assert [p.name for p in existing.parent.iterdir()] == ["model.keras"]


@pytest.mark.parametrize("save", SAVES)
def test_overwrite_false_writes_a_new_file_and_overwrite_true_replaces_without_asking(save, tmp_path, monkeypatch):
    prompts = []
    monkeypatch.setattr(sys, "stdin", Terminal())
    monkeypatch.setattr(builtins, "input", answering([], prompts))
    model, path = tiny_dense_model(), tmp_path / "new.keras"
    SAVES[save](model, path, overwrite=False)
    written = path.read_bytes()
    model.set_weights([w + 1 for w in model.get_weights()])
    SAVES[save](model, path)
    assert prompts == [] and path.read_bytes() != written


@pytest.mark.parametrize("save", SAVES)
def test_in_a_terminal_keras_prompt_is_asked_until_y_or_n_and_n_keeps_the_file(save, existing, monkeypatch, capsys):
    prompts = []
    monkeypatch.setattr(sys, "stdin", Terminal())
    monkeypatch.setattr(builtins, "input", answering(["maybe", " N "], prompts))
    SAVES[save](tiny_dense_model(), existing, overwrite=False)
    assert prompts == [
        f"[WARNING] {existing} already exists - overwrite? [y/n]",
        'Enter "y" (overwrite) or "n" (cancel).',
    ]
    assert existing.read_bytes() == b"the user's earlier model" and capsys.readouterr().out == ""


@pytest.mark.parametrize("save", SAVES)
def test_in_a_terminal_y_replaces_the_file_with_keras_tip(save, existing, monkeypatch, capsys):
    monkeypatch.setattr(sys, "stdin", Terminal())
    monkeypatch.setattr(builtins, "input", answering(["y"], []))
    model = tiny_dense_model()
    SAVES[save](model, existing, overwrite=False)
    assert capsys.readouterr().out == "[TIP] Next time specify overwrite=True!\n"
    fresh = keras.models.load_model(existing) if save != "model.save_weights" else tiny_dense_model()
    if save == "model.save_weights":
        fresh.load_weights(existing)
    for a, b in zip(fresh.get_weights(), model.get_weights()):
        assert (a == b).all()


def test_in_jupyter_the_kernel_asks_and_a_kernel_that_cannot_ask_keeps_the_file(existing, monkeypatch):
    """Jupyter's kernel puts its own ``input`` in place (a box in the notebook); standard input is no terminal.
    Run by nbval or nbconvert, that ``input`` raises StdinNotImplementedError, a NotImplementedError."""
    monkeypatch.setattr(sys, "stdin", io.StringIO(""))
    prompts = []
    monkeypatch.setattr(builtins, "input", answering([NotImplementedError("raw_input was called")], prompts))
    with pytest.raises(FileExistsError, match="no answer could be read from standard input, so the file is kept"):
        tiny_dense_model().save(existing, overwrite=False)
    assert len(prompts) == 1 and existing.read_bytes() == b"the user's earlier model"
    monkeypatch.setattr(builtins, "input", answering(["y"], prompts))
    tiny_dense_model().save(existing, overwrite=False)
    assert keras.models.load_model(existing).count_params() == tiny_dense_model().count_params()


def test_a_closed_terminal_keeps_the_file(existing, monkeypatch):
    monkeypatch.setattr(sys, "stdin", Terminal())
    monkeypatch.setattr(builtins, "input", answering([EOFError()], []))
    with pytest.raises(FileExistsError, match="overwrite=False"):
        tiny_dense_model().save_weights(existing, overwrite=False)
    assert existing.read_bytes() == b"the user's earlier model"


@pytest.mark.skipif(not hasattr(os, "openpty"), reason="needs a pseudo-terminal")
def test_a_script_in_a_real_terminal_is_asked_and_its_answer_kept(existing):
    """The TTY check itself, in a script whose standard input is a pseudo-terminal."""
    script = (
        "import ipu_teach.keras as keras\n"
        "model = keras.Sequential([keras.layers.Dense(3, input_shape=(4,))])\n"
        f"model.save({str(existing)!r}, overwrite=False); print('returned')"
    )
    controller, terminal = os.openpty()
    process = subprocess.Popen([sys.executable, "-c", script], cwd=ROOT, stdin=terminal, stdout=subprocess.PIPE)
    os.close(terminal)
    os.write(controller, b"n\n")
    out, _ = process.communicate(timeout=120)
    os.close(controller)
    assert process.returncode == 0
    assert out.decode() == f"[WARNING] {existing} already exists - overwrite? [y/n]returned\n"
    assert existing.read_bytes() == b"the user's earlier model"
