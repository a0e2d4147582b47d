"""Graphcore's public PopTorch tutorials (tests/torch_scripts/public, verbatim) with ``ipu-teach run`` (issue 23).

Those that need a data set ipu-teach cannot have offline stop at once with an error that says which files to put
where, before any training; tests/torch_scripts/public/README.md records how far each gets with its data."""

from pathlib import Path

from script_runner import run_script

PUBLIC = Path(__file__).parent / "torch_scripts" / "public"


def test_the_basics_tutorial_without_fashion_mnist_names_the_files_and_both_folders(tmp_path):
    home = tmp_path / "home"
    result = run_script(
        PUBLIC / "basics" / "walkthrough_code_only.py",
        cwd=tmp_path,
        timeout=120,
        env_overrides={"HOME": str(home), "KERAS_HOME": str(home / ".keras"), "MPLBACKEND": "Agg"},
    )
    assert result.returncode == 1, result.stdout + result.stderr
    last = result.stderr.strip().splitlines()[-1]
    assert last == (
        "FileNotFoundError: FashionMNIST: ipu-teach works offline and bundles no FashionMNIST; put "
        f"train-images-idx3-ubyte(.gz), train-labels-idx1-ubyte(.gz) in {home}/.torch/datasets/FashionMNIST/raw "
        "(the folder torchvision downloads them to, from https://github.com/zalandoresearch/fashion-mnist), or the "
        f"four .gz files in {home}/.keras/datasets/fashion-mnist, Keras' cache"
    )
    assert "Graph compilation" not in result.stderr  # it stopped before compiling anything
