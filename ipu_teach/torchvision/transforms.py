"""``torchvision.transforms``: ``Compose``, ``ToTensor``, ``Normalize``, ``Resize``, ``ConvertImageDtype``,
``ToPILImage``.

Resizing and PIL images use Pillow, as torchvision does (installed with matplotlib; ``pip install pillow``): a
dataset's image (a uint8 array here, a PIL image in torchvision) is resized by Pillow exactly as torchvision
resizes a PIL image; a float tensor is resized channel by channel as a Pillow float image, within float32
rounding of torchvision's antialiased interpolation.

Example:

>>> from ipu_teach.torchvision import transforms
>>> t = transforms.Compose([transforms.ToTensor(), transforms.Normalize((0.5,), (0.5,))])
>>> x = t(np.full((2, 2), 255, np.uint8))
>>> x.shape, x.max().item()
(torch.Size([1, 2, 2]), 1.0)
"""

import enum
import importlib

import numpy as np

from ..torch.tensor import Tensor, dtypes


def _pil():
    """Pillow's Image module, or an error saying how to install it."""
    try:
        return importlib.import_module("PIL.Image")
    except ImportError:
        raise ImportError(
            "torchvision's Resize and ToPILImage work on Pillow images: install Pillow (pip install pillow; "
            "matplotlib brings it)"
        ) from None


class InterpolationMode(enum.Enum):
    """How ``Resize`` interpolates (torchvision's names; Pillow's filters)."""

    NEAREST = "nearest"
    BILINEAR = "bilinear"
    BICUBIC = "bicubic"

    @property
    def pillow(self):
        return getattr(_pil().Resampling, self.name)


class Compose:
    """The transforms applied in turn, as one.

    Example:

    >>> import numpy as np
    >>> from ipu_teach import torchvision
    >>> transform = torchvision.transforms.Compose(
    ...     [torchvision.transforms.ToTensor(), torchvision.transforms.Normalize((0.5,), (0.5,))]
    ... )
    >>> transform(np.full((2, 2), 255, np.uint8)).numpy().ravel().tolist()
    [1.0, 1.0, 1.0, 1.0]
    """

    def __init__(self, transforms):
        self.transforms = list(transforms)

    def __call__(self, image):
        for transform in self.transforms:
            image = transform(image)
        return image

    def __repr__(self):
        return "Compose(\n" + "".join(f"    {t}\n" for t in self.transforms) + ")"


class ToTensor:
    """An image (H, W) or (H, W, C), uint8 0-255 or float, as a float32 tensor (C, H, W), uint8 scaled to [0, 1].

    Example:

    >>> import numpy as np
    >>> from ipu_teach import torchvision
    >>> tensor = torchvision.transforms.ToTensor()(np.full((28, 28), 255, np.uint8))
    >>> tensor.shape, tensor.max().item()
    (torch.Size([1, 28, 28]), 1.0)
    """

    def __call__(self, image):
        array = np.asarray(image)
        if array.ndim == 2:
            array = array[:, :, None]
        if array.ndim != 3:
            raise TypeError(f"pic should be 2/3 dimensional. Got {array.ndim} dimensions.")
        chw = array.transpose(2, 0, 1)
        if array.dtype == np.uint8:
            return Tensor(chw.astype(np.float32) / np.float32(255))
        return Tensor(np.ascontiguousarray(chw, dtype=np.float32))

    def __repr__(self):
        return "ToTensor()"


class Normalize:
    """``(x - mean) / std`` per channel of a (C, H, W) tensor.

    Example:

    >>> from ipu_teach import torch, torchvision
    >>> normalize = torchvision.transforms.Normalize((0.1307,), (0.3081,))
    >>> round(normalize(torch.zeros(1, 2, 2))[0, 0, 0].item(), 4)
    -0.4242
    """

    def __init__(self, mean, std, inplace=False):
        self.mean, self.std = tuple(mean), tuple(std)
        if any(s == 0 for s in self.std):
            raise ValueError(f"std evaluated to zero after conversion to float32, leading to division by zero: {std}")

    def __call__(self, tensor):
        data = tensor.array
        mean = np.asarray(self.mean, data.dtype).reshape(-1, 1, 1)
        std = np.asarray(self.std, data.dtype).reshape(-1, 1, 1)
        return Tensor((data - mean) / std)

    def __repr__(self):
        return f"Normalize(mean={self.mean}, std={self.std})"


class Resize:
    """Resize an image to ``size``: an int matches the shorter side (the longer keeps the aspect ratio, rounded
    down, at most ``max_size``), a pair ``(h, w)`` is the size. PIL images and uint8 arrays (H, W) or (H, W, C)
    come back as the same kind; tensors (..., H, W) as float32 tensors."""

    def __init__(self, size, interpolation=InterpolationMode.BILINEAR, max_size=None, antialias=True):
        if isinstance(size, int):
            size = [size]
        if not (isinstance(size, (list, tuple)) and len(size) in (1, 2) and all(isinstance(n, int) for n in size)):
            raise TypeError(f"Size should be int or sequence of one or two ints. Got {size!r}")
        if max_size is not None and len(size) != 1:
            raise ValueError(
                "max_size should only be passed if size specifies the length of the smaller edge, i.e. size "
                f"should be an int or a sequence of length 1 in torchscript mode, got {size!r}"
            )
        self.size, self.max_size = list(size), max_size
        self.interpolation = InterpolationMode(interpolation)
        self.antialias = antialias

    def output_size(self, height: int, width: int) -> tuple:
        """``(new height, new width)`` for an image of ``height x width`` (torchvision's rule)."""
        if len(self.size) == 2:
            return tuple(self.size)
        short, long = (width, height) if width <= height else (height, width)
        new_short, new_long = self.size[0], int(self.size[0] * long / short)
        if self.max_size is not None:
            if self.max_size <= new_short:
                raise ValueError(
                    f"max_size = {self.max_size} must be strictly greater than the requested size for the smaller "
                    f"edge size = {self.size}"
                )
            if new_long > self.max_size:
                new_short, new_long = int(self.max_size * new_short / new_long), self.max_size
        return (new_long, new_short) if width <= height else (new_short, new_long)

    def __call__(self, image):
        image_module = _pil()
        if isinstance(image, Tensor):
            data = image.array.astype(np.float32)
            height, width = self.output_size(*data.shape[-2:])
            planes = [
                np.asarray(image_module.fromarray(plane, "F").resize((width, height), self.interpolation.pillow))
                for plane in data.reshape(-1, *data.shape[-2:])
            ]
            return Tensor(np.stack(planes).reshape(*data.shape[:-2], height, width))
        if isinstance(image, image_module.Image):
            height, width = self.output_size(image.height, image.width)
            return image.resize((width, height), self.interpolation.pillow)
        array = np.asarray(image)
        if array.dtype != np.uint8 or array.ndim not in (2, 3):
            raise TypeError(
                f"Resize takes a PIL image, a uint8 image array (H, W) or (H, W, C), or a tensor; got "
                f"{type(image).__name__} of {array.dtype} with {array.ndim} dimensions"
            )
        return np.asarray(self(image_module.fromarray(array)))

    def __repr__(self):
        size = tuple(self.size) if len(self.size) == 2 else self.size
        return (
            f"Resize(size={size}, interpolation={self.interpolation.value}, max_size={self.max_size}, "
            f"antialias={self.antialias})"
        )


class ConvertImageDtype:
    """A tensor image's values in another dtype, rescaled as torchvision rescales them: integers 0..max to floats
    0..1, floats 0..1 to integers 0..max (times max + 1 - 0.001, truncated), floats to floats unchanged."""

    def __init__(self, dtype):
        self.dtype = dtype

    def __call__(self, image):
        source, target = image.array.dtype, np.dtype(dtypes.to_numpy(self.dtype))
        if source.kind == "f" and target.kind == "f":
            return Tensor(image.array.astype(target))
        if source.kind == "f":
            top = float(np.iinfo(target).max)
            return Tensor((image.array * (top + 1.0 - 1e-3)).astype(target))
        if target.kind == "f":
            return Tensor(image.array.astype(target) / target.type(np.iinfo(source).max))
        raise TypeError(f"ConvertImageDtype: from {source} to {target} (integers to integers) is not simulated")

    def __repr__(self):
        return "ConvertImageDtype()"


class ToPILImage:
    """A tensor (C, H, W) (floats 0..1 scaled to 0..255) or an array (H, W[, C]) as a PIL image: mode L for one
    channel, RGB for three."""

    def __init__(self, mode=None):
        self.mode = mode

    def __call__(self, picture):
        if isinstance(picture, Tensor):
            data = picture.array
            if data.ndim == 2:
                data = data[None]
            if data.dtype.kind == "f":
                data = (data * 255).astype(np.uint8)
            array = data.transpose(1, 2, 0)
        else:
            array = np.asarray(picture)
        if array.ndim == 3 and array.shape[2] == 1:
            array = array[:, :, 0]
        return _pil().fromarray(array, self.mode)

    def __repr__(self):
        return "ToPILImage()" if self.mode is None else f"ToPILImage(mode={self.mode})"
