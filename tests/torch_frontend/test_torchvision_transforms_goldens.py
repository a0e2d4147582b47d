"""torchvision's Resize, ConvertImageDtype and ToPILImage against real torchvision (golden/torchvision_transforms.json,
written by tools/make_torch_goldens.py transforms with the versions it records): resizing a dataset's image (a
PIL image in torchvision, a uint8 array here) gives exactly Pillow's bytes; a float tensor within float32 rounding
of torchvision's antialiased interpolation."""

import json
from pathlib import Path

import numpy as np
import pytest

from ipu_teach import torch
from ipu_teach.torchvision import transforms

GOLDEN = json.loads((Path(__file__).parent / "golden" / "torchvision_transforms.json").read_text())


def test_the_fixture_records_what_made_it():
    assert GOLDEN["torchvision_version"].startswith("0.") and GOLDEN["torch_version"].startswith("2.")


@pytest.mark.parametrize("case", GOLDEN["resizes"], ids=[c["name"] for c in GOLDEN["resizes"]])
def test_resize_matches_torchvision(case):
    image = np.array(case["image"], np.uint8)
    kwargs = dict(case["kwargs"])
    if "interpolation" in kwargs:
        kwargs["interpolation"] = transforms.InterpolationMode(kwargs["interpolation"])
    resize = transforms.Resize(**kwargs)
    expected = np.array(case["output"])
    if case["kind"] == "pil":
        resized = resize(image)
        assert isinstance(resized, np.ndarray) and resized.dtype == np.uint8
        np.testing.assert_array_equal(resized, expected)
    else:
        resized = resize(transforms.ToTensor()(image))
        assert resized.dtype == torch.float32 and tuple(resized.shape) == expected.shape
        np.testing.assert_allclose(resized.numpy(), expected, rtol=0, atol=2e-6)


def test_resize_keeps_a_pil_image_a_pil_image_and_refuses_what_it_cannot_resize():
    image = pytest.importorskip("PIL.Image").fromarray(np.zeros((6, 9), np.uint8))
    assert transforms.Resize(3)(image).size == (4, 3)  # (width, height): the short side 3, the long 9 * 3 / 6
    with pytest.raises(TypeError, match="Size should be int or sequence of one or two ints. Got 2.5"):
        transforms.Resize(2.5)
    with pytest.raises(ValueError, match="max_size = 8 must be strictly greater than the requested size"):
        transforms.Resize(8, max_size=8)(np.zeros((4, 4), np.uint8))
    with pytest.raises(TypeError, match="Resize takes a PIL image, a uint8 image array .* got ndarray of float64"):
        transforms.Resize(8)(np.zeros((4, 4)))
    assert repr(transforms.Resize([10, 20])) == (
        "Resize(size=(10, 20), interpolation=bilinear, max_size=None, antialias=True)"
    )


def test_convert_image_dtype_matches_torchvision():
    convert = GOLDEN["convert"]
    values = torch.tensor(np.array(convert["values"], np.float32))
    integers = torch.tensor(np.array(convert["integers"], np.uint8))
    half = transforms.ConvertImageDtype(torch.half)(values)
    assert half.dtype == torch.float16
    np.testing.assert_array_equal(half.float().numpy(), np.array(convert["float_to_half"], np.float32))
    as_bytes = transforms.ConvertImageDtype(torch.uint8)(values)
    assert as_bytes.dtype == torch.uint8 and as_bytes.tolist() == convert["float_to_uint8"]
    as_floats = transforms.ConvertImageDtype(torch.float)(integers)
    np.testing.assert_array_equal(as_floats.numpy(), np.array(convert["uint8_to_float"], np.float32))
    with pytest.raises(TypeError, match="from uint8 to int32 .* is not simulated"):
        transforms.ConvertImageDtype(torch.int32)(integers)


def test_to_pil_image_matches_torchvision():
    picture = transforms.ToPILImage()(torch.tensor(np.array(GOLDEN["to_pil"]["values"], np.float32)))
    assert picture.mode == "L"
    assert np.asarray(picture).tolist() == GOLDEN["to_pil"]["output"]
