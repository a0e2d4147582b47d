"""``torchvision.transforms``: ``Compose``, ``ToTensor``, ``Normalize``.

Example:

>>> from ipu_teach.torchvision import transforms
>>> t = transforms.Compose([transforms.ToTensor(), transforms.Normalize((0.5,), (0.5,))])
>>> x = t(np.full((2, 2), 255, np.uint8))
>>> x.shape, x.max().item()
(torch.Size([1, 2, 2]), 1.0)
"""

import numpy as np

from ..torch.tensor import Tensor


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
        data = tensor.data
        mean = np.asarray(self.mean, data.dtype).reshape(-1, 1, 1)
        std = np.asarray(self.std, data.dtype).reshape(-1, 1, 1)
        return Tensor((data - mean) / std)

    def __repr__(self):
        return f"Normalize(mean={self.mean}, std={self.std})"
