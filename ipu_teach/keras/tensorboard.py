"""``keras.callbacks.TensorBoard``: training curves, weight histograms and images for TensorBoard.

As tf-keras' (``callbacks.py``, ``TensorBoard``): event files in ``log_dir/train`` and ``log_dir/validation``;
at each epoch's end the logs as scalars ``epoch_<name>`` (validation logs without their ``val_`` prefix, in
the validation folder), step the epoch, and after fit's validation ``evaluation_<name>_vs_iterations``, step
the optimizer's step count; every ``histogram_freq`` epochs a histogram of each layer's weights
(``<weight name with _ for :>/histogram``) and, with ``write_images``, the weight as an image (``.../image``);
with ``update_freq`` "batch" or N, the batch logs as ``batch_<name>`` every N batches, step the optimizer's
step count, as Keras documents it (tf-keras 2.21 writes them only while its profiler traces). Nothing runs
a TensorFlow graph here, so no graph or profile is written (``write_graph``, ``profile_batch`` are accepted
and write nothing); the files are written by :mod:`.event_files`, appended as training goes (not atomically:
TensorBoard reads them while they grow).
"""

from __future__ import annotations

import os

import numpy as np

from .callbacks import Callback
from .event_files import EventFileWriter, histogram_value, images_value, scalar_value, to_uint8


def _weight_images(values) -> np.ndarray | None:
    """tf-keras' ``_log_weight_as_image``: a bias as a 1-row image, a kernel as one image (the longer side
    across), a convolution kernel as one image per output channel; None for what it cannot show."""
    w = np.squeeze(values)
    if w.ndim == 1:
        return w.reshape(1, 1, w.shape[0], 1)
    if w.ndim == 2:
        if w.shape[0] > w.shape[1]:
            w = w.T
        return w.reshape(1, w.shape[0], w.shape[1], 1)
    if w.ndim == 3:
        w = np.transpose(w, (2, 0, 1))
        return w.reshape(w.shape[0], w.shape[1], w.shape[2], 1)
    return None


class TensorBoard(Callback):
    """Enable visualizations for TensorBoard: ``tensorboard --logdir=path_to_your_logs``.

    Args:
      log_dir: The folder of the event files (``train`` and ``validation`` inside it). Default: ``"logs"``.
      histogram_freq: Every how many epochs the layers' weights are written as histograms; 0 for never.
        Default: 0.
      write_graph: Accepted for Keras compatibility; no graph is written. Default: True.
      write_images: Whether to write the weights as images too (with ``histogram_freq``). Default: False.
      write_steps_per_second: Accepted for Keras compatibility; not written: wall-clock steps per second
        would time the simulator, not the IPU (the progress bar shows simulated times). Default: False.
      update_freq: ``"epoch"``, ``"batch"`` or an integer N: also write the batch logs every N batches.
        Default: ``"epoch"``.
      profile_batch, embeddings_freq, embeddings_metadata: Accepted for Keras compatibility; ipu-teach's
        profiles are its PopVision-like reports. Default: 0, 0, None.

    Raises:
      ValueError: for an ``update_freq`` that is neither "epoch", "batch" nor a positive integer.

    Example:

    >>> import os, tempfile
    >>> model = keras.Sequential([keras.layers.Dense(1, input_shape=(2,))])
    >>> model.compile("sgd", "mse")
    >>> logs = tempfile.mkdtemp()
    >>> _ = model.fit(np.ones((4, 2)), np.ones(4), epochs=2, verbose=0,
    ...               callbacks=[keras.callbacks.TensorBoard(logs, histogram_freq=1)])
    >>> sorted(os.listdir(logs)), os.listdir(os.path.join(logs, "train"))[0].startswith("events.out.tfevents.")
    (['train'], True)
    """

    def __init__(
        self,
        log_dir="logs",
        histogram_freq=0,
        write_graph=True,
        write_images=False,
        write_steps_per_second=False,
        update_freq="epoch",
        profile_batch=0,
        embeddings_freq=0,
        embeddings_metadata=None,
        **kwargs,
    ):
        super().__init__()
        self.log_dir = os.fspath(log_dir)
        self.histogram_freq, self.write_images = int(histogram_freq), bool(write_images)
        if update_freq == "batch":
            update_freq = 1
        if update_freq != "epoch" and not (isinstance(update_freq, int) and update_freq > 0):
            raise ValueError(
                f'TensorBoard: update_freq must be "epoch", "batch" or a positive integer, got {update_freq!r}'
            )
        self.update_freq = update_freq
        self._writers = {}

    def _writer(self, kind: str) -> EventFileWriter:
        if kind not in self._writers:
            self._writers[kind] = EventFileWriter(os.path.join(self.log_dir, kind))
        return self._writers[kind]

    def on_train_begin(self, logs=None):
        self._global_train_batch, self._training = 0, True

    def on_test_end(self, logs=None):
        """fit's validation, as tf-keras 2.9+: each log against the optimizer's step count."""
        if getattr(self, "_training", False) and logs:
            step = int(self.model.optimizer.iterations)
            values = [scalar_value(f"evaluation_{k}_vs_iterations", float(v)) for k, v in logs.items()]
            self._writer("validation").write(step, values)

    def on_train_batch_end(self, batch, logs=None):
        self._global_train_batch += 1
        if self.update_freq == "epoch" or self._global_train_batch % self.update_freq or not logs:
            return
        step = int(self.model.optimizer.iterations)
        self._writer("train").write(step, [scalar_value(f"batch_{k}", float(v)) for k, v in logs.items()])

    def on_epoch_end(self, epoch, logs=None):
        logs = logs or {}
        train = [scalar_value(f"epoch_{k}", float(v)) for k, v in logs.items() if not k.startswith("val_")]
        validation = [scalar_value(f"epoch_{k[4:]}", float(v)) for k, v in logs.items() if k.startswith("val_")]
        if train:
            self._writer("train").write(epoch, train)
        if validation:
            self._writer("validation").write(epoch, validation)
        if self.histogram_freq and epoch % self.histogram_freq == 0:
            self._log_weights(epoch)

    def _log_weights(self, epoch):
        values = []
        for layer in self.model.layers:
            for weight in layer.weights:
                name = weight.name.replace(":", "_")
                values.append(histogram_value(f"{name}/histogram", weight.data))
                images = _weight_images(weight.data) if self.write_images else None
                if images is not None:
                    values.append(images_value(f"{name}/image", to_uint8(images[:3])))  # max_outputs=3
        self._writer("train").write(epoch, values)

    def on_train_end(self, logs=None):
        self._training = False
        for writer in self._writers.values():
            writer.close()
        self._writers = {}
