"""The solutions of notebook 09's exercises run in the notebook's namespace and print what the exercises ask for.

The solutions use the notebook's ``size`` helper and its models, as a learner's ``%load`` does: the test runs the
notebook's defining cells (imports, ``size`` and ``resnet50``; none of its estimates) and then each solution, and
checks what it prints against estimates made here."""

import re

import pytest
from notebook_solutions import defining_namespace
from notebook_solutions import run_solution as run

from ipu_teach import ipu

DEFINING_CELLS = ("%matplotlib inline", "def size(")


@pytest.fixture(scope="module")
def namespace():
    return defining_namespace("09_sizing_a_real_model.ipynb", DEFINING_CELLS)


def test_exercise_1_finds_the_largest_micro_batch_in_mixed_float16_and_what_grew(namespace, capsys):
    out = run("09_exercise_1.py", namespace, capsys)
    largest = int(re.search(r"largest micro-batch that fits in mixed_float16: (\d+)", out).group(1))
    size, resnet50 = namespace["size"], namespace["resnet50"]
    with ipu.system.restored_afterwards():
        assert size(resnet50, largest, policy="mixed_float16").fits
        assert not size(resnet50, largest + 1, policy="mixed_float16").fits
        float16, mixed = size(resnet50, 4), size(resnet50, 4, policy="mixed_float16")
        one_more = size(resnet50, largest + 1).fits
    assert one_more and float16.fits  # float32 weights leave room for fewer images than float16 ones
    assert f"float16        micro-batch 4: fullest tile {float16.max_tile_bytes:,} B, fits: True" in out
    assert f"mixed_float16  micro-batch 4: fullest tile {mixed.max_tile_bytes:,} B, fits: {mixed.fits}" in out
    assert mixed.max_tile_bytes > float16.max_tile_bytes
    grown = {
        role: (int(a.replace(",", "")), int(b.replace(",", "")))
        for role, a, b in re.findall(r"^  (\w[\w ]*?) +([\d,]+) -> +([\d,]+) B on the fullest tile$", out, re.MULTILINE)
    }
    before, after = grown["variables"]
    # the weights' bytes double, float32 for float16: exactly over the IPU, about on one tile, as the two
    # policies' fullest tiles differ and each weight's mapping (grain, tiles used, start tile) with its dtype
    assert after >= 1.9 * before


def test_exercise_2_finds_the_largest_inference_micro_batch_at_each_sequence_length(namespace, capsys):
    out = run("09_exercise_2.py", namespace, capsys)
    found = {
        int(sequence): (int(largest), int(first_over), float(rate.replace(",", "")), int(tokens.replace(",", "")))
        for sequence, largest, first_over, rate, tokens in re.findall(
            r"sequence (\d+): micro-batch (\d+) fits \((\d+) does not\), ([\d,.]+) sequences/s = ([\d,]+) tokens/s", out
        )
    }
    assert list(found) == [128, 384]
    for sequence, (largest, first_over, rate, tokens) in found.items():
        assert first_over == 2 * largest
        assert abs(tokens - rate * sequence) <= 0.5 + 0.05 * sequence  # printed rounded
    assert found[384][0] < found[128][0] and found[384][2] < found[128][2]  # longer sequences: fewer, slower
    size, bert_encoder = namespace["size"], namespace["bert_encoder"]
    largest, first_over, rate, _ = found[384]
    with ipu.system.restored_afterwards():
        fits = size(lambda: bert_encoder(sequence=384), largest, mode="predict", loss="mse")
        over = size(lambda: bert_encoder(sequence=384), first_over, mode="predict", loss="mse")
    assert fits.fits and not over.fits
    assert f"{fits.samples_per_second:,.1f}" == f"{rate:,.1f}"


def test_exercise_3_finds_the_smallest_accumulation_for_80_percent_scaling(namespace, capsys):
    out = run("09_exercise_3.py", namespace, capsys)
    rows = {
        int(accumulation): (int(rate.replace(",", "")), float(scaling))
        for accumulation, rate, scaling in re.findall(
            r"accumulation +(\d+): +([\d,]+) images/s on 16 IPUs, ([\d.]+)% of one replica's per IPU", out
        )
    }
    smallest = int(re.search(r"smallest: accumulation (\d+)", out).group(1))
    assert list(rows) == [2**n for n in range(len(rows))] and max(rows) == smallest
    assert rows[smallest][1] >= 80 > rows[smallest // 2][1]
    assert [scaling for _, scaling in rows.values()] == sorted(scaling for _, scaling in rows.values())
    size, resnet50 = namespace["size"], namespace["resnet50"]
    with ipu.system.restored_afterwards():
        pod = size(resnet50, 4, replicas=16, accumulation=smallest, steps_per_execution=max(64, smallest))
    assert rows[smallest][0] == round(pod.samples_per_second)  # printed as the simulator sized it
