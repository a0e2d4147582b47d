"""``torchvision.datasets`` offline: MNIST (its files, else ipu-teach's bundled MNIST), FashionMNIST and CIFAR10
from files you provide.

torchvision keeps MNIST-like data sets as IDX files in ``<root>/<Name>/raw`` (``train-images-idx3-ubyte`` and
the label and test files, optionally ``.gz``): when they are there they are read (a checked IDX header, no
pickle). Otherwise MNIST comes from ``keras.datasets.mnist`` (the full set in Keras' cache, else the real subset
bundled with ipu-teach, announced in one printed line) and FashionMNIST from ``keras.datasets.fashion_mnist``
(Keras' cache); ``download=True`` downloads nothing (the simulator is offline). Without the files, FashionMNIST
and CIFAR10 raise an error naming the files and the folders. CIFAR10 is
read from its binary version (``<root>/cifar-10-batches-bin`` or ``cifar-10-binary.tar.gz``), as
``keras.datasets.cifar10``: torchvision's own ``cifar-10-batches-py`` is pickles, which ipu-teach never loads.

Without a transform a sample's image is a uint8 numpy array (H, W) or (H, W, C) where torchvision gives a PIL
image; ``transforms.ToTensor`` takes either.

Example:

>>> from ipu_teach import torchvision
>>> test = torchvision.datasets.MNIST("data", train=False)
ipu-teach: MNIST ...
>>> image, label = test[0]
>>> image.shape, image.dtype, type(label)
((28, 28), dtype('uint8'), <class 'int'>)
"""

import gzip
from pathlib import Path

import numpy as np

from ..keras.datasets import cifar10, fashion_mnist, mnist
from ..keras.datasets.keras_cache import DatasetNotFoundError
from ..keras.datasets.mnist import keras_datasets_dir
from ..torch.utils.data import Dataset

IDX_FILES = {
    True: ("train-images-idx3-ubyte", "train-labels-idx1-ubyte"),
    False: ("t10k-images-idx3-ubyte", "t10k-labels-idx1-ubyte"),
}


def read_idx(path: Path) -> np.ndarray:
    """An IDX file (LeCun's format: zero bytes, a type byte 0x08 for uint8, the rank, big-endian sizes, data)."""
    raw = (gzip.decompress if path.suffix == ".gz" else bytes)(path.read_bytes())
    if len(raw) < 4 or raw[:2] != b"\0\0" or raw[2] != 0x08:
        raise ValueError(f"{path} is not an IDX file of unsigned bytes (it should start 00 00 08)")
    rank = raw[3]
    shape = tuple(int.from_bytes(raw[4 + 4 * i : 8 + 4 * i], "big") for i in range(rank))
    data = np.frombuffer(raw, np.uint8, offset=4 + 4 * rank)
    if data.size != int(np.prod(shape)):
        raise ValueError(f"{path}: the header says {shape} values, the file holds {data.size}: it is cut short")
    return data.reshape(shape).copy()


def _find(folder: Path, name: str):
    return next((p for p in (folder / name, folder / f"{name}.gz") if p.is_file()), None)


class _ImageDataset(Dataset):
    def __init__(self, images, labels, transform, target_transform):
        self.data, self.targets = images, labels
        self.transform, self.target_transform = transform, target_transform

    def __getitem__(self, index):
        image, target = self.data[index], int(self.targets[index])
        if self.transform is not None:
            image = self.transform(image)
        if self.target_transform is not None:
            target = self.target_transform(target)
        return image, target

    def __len__(self):
        return len(self.data)


class MNIST(_ImageDataset):
    """MNIST's 28x28 digits: IDX files in ``<root>/MNIST/raw`` when there, else ``keras.datasets.mnist``.

    Example:

    >>> from ipu_teach import torchvision
    >>> train = torchvision.datasets.MNIST("mnist_data/", train=True, download=True)
    ipu-teach: MNIST ...
    >>> image, label = train[0]
    >>> image.shape, label in range(10)
    ((28, 28), True)
    """

    classes = [f"{d} - {name}" for d, name in enumerate("zero one two three four five six seven eight nine".split())]

    def __init__(self, root, train=True, transform=None, target_transform=None, download=False):
        self.root, self.train = root, train
        images, labels = self._read(Path(root).expanduser() / type(self).__name__ / "raw", train)
        super().__init__(images, labels, transform, target_transform)

    @classmethod
    def _read(cls, folder, train):
        found = [_find(folder, name) for name in IDX_FILES[train]]
        if all(found):
            return read_idx(found[0]), read_idx(found[1])
        return cls._fallback(folder, train)

    @classmethod
    def _fallback(cls, folder, train):
        (x_train, y_train), (x_test, y_test) = mnist.load_data()
        return (x_train, y_train) if train else (x_test, y_test)


class FashionMNIST(MNIST):
    """Fashion-MNIST (Zalando): IDX files in ``<root>/FashionMNIST/raw``, else the same four files in Keras' cache
    (``keras.datasets.fashion_mnist`` reads them from ``~/.keras/datasets/fashion-mnist``)."""

    classes = ["T-shirt/top", "Trouser", "Pullover", "Dress", "Coat", "Sandal", "Shirt", "Sneaker", "Bag", "Ankle boot"]

    @classmethod
    def _fallback(cls, folder, train):
        try:
            (x_train, y_train), (x_test, y_test) = fashion_mnist.load_data()
        except DatasetNotFoundError:
            names = ", ".join(f"{n}(.gz)" for n in IDX_FILES[train])
            raise FileNotFoundError(
                f"{cls.__name__}: ipu-teach works offline and bundles no {cls.__name__}; put {names} in {folder} (the "
                f"folder torchvision downloads them to, from https://github.com/zalandoresearch/fashion-mnist), or "
                f"the four .gz files in {keras_datasets_dir() / fashion_mnist.FOLDER}, Keras' cache"
            ) from None
        return (x_train, y_train) if train else (x_test, y_test)


class CIFAR10(_ImageDataset):
    """CIFAR-10's 32x32 colour images, from its binary version under ``root`` (``keras.datasets.cifar10`` reads it)."""

    classes = ["airplane", "automobile", "bird", "cat", "deer", "dog", "frog", "horse", "ship", "truck"]

    def __init__(self, root, train=True, transform=None, target_transform=None, download=False):
        root = Path(root).expanduser()
        source = next((p for p in (root / "cifar-10-batches-bin", root / "cifar-10-binary.tar.gz") if p.exists()), None)
        if source is None:
            pickled = (
                " (the cifar-10-batches-py there is Python pickles, which ipu-teach never loads)"
                if (root / "cifar-10-batches-py").exists()
                else ""
            )
            raise FileNotFoundError(
                f"CIFAR10: ipu-teach works offline and bundles no CIFAR-10; put CIFAR-10's binary version, the folder "
                f"cifar-10-batches-bin (data_batch_1.bin ... data_batch_5.bin, test_batch.bin) or the archive "
                f"cifar-10-binary.tar.gz from https://www.cs.toronto.edu/~kriz/cifar.html, in {root}{pickled}"
            )
        (x_train, y_train), (x_test, y_test) = cifar10.load_data(str(source))
        images, labels = (x_train, y_train) if train else (x_test, y_test)
        super().__init__(images, labels.reshape(-1), transform, target_transform)
