"""Callbacks with Keras' hooks: History, EarlyStopping, ModelCheckpoint, TerminateOnNaN, LambdaCallback,
LearningRateScheduler, ReduceLROnPlateau, CSVLogger and (in its own module) TensorBoard."""

import csv
import io
import os

import numpy as np

from ..atomic import atomic_write


class Callback:
    def __init__(self):
        self.model = None
        self.params = {}

    def set_model(self, model):
        self.model = model

    def set_params(self, params):
        self.params = params

    def on_train_begin(self, logs=None):
        pass

    def on_train_end(self, logs=None):
        pass

    def on_epoch_begin(self, epoch, logs=None):
        pass

    def on_epoch_end(self, epoch, logs=None):
        pass

    def on_train_batch_begin(self, batch, logs=None):
        pass

    def on_train_batch_end(self, batch, logs=None):
        pass

    def on_test_begin(self, logs=None):
        pass

    def on_test_end(self, logs=None):
        pass

    def on_test_batch_begin(self, batch, logs=None):
        pass

    def on_test_batch_end(self, batch, logs=None):
        pass

    def on_predict_begin(self, logs=None):
        pass

    def on_predict_end(self, logs=None):
        pass

    def on_predict_batch_begin(self, batch, logs=None):
        pass

    def on_predict_batch_end(self, batch, logs=None):
        pass


class CallbackList:
    """Forwards every hook to each callback in order."""

    def __init__(self, callbacks, model, params):
        self.callbacks = list(callbacks or [])
        for cb in self.callbacks:
            if not isinstance(cb, Callback):
                raise TypeError(f"callbacks must be keras.callbacks.Callback instances, got {type(cb).__name__}")
            cb.set_model(model)
            cb.set_params(params)

    def __getattr__(self, hook):
        if not hook.startswith("on_"):
            raise AttributeError(hook)

        def call(*args, **kwargs):
            for cb in self.callbacks:
                getattr(cb, hook)(*args, **kwargs)

        return call


class History(Callback):
    """Records the epoch logs; ``fit`` returns it.

    ``epoch_timings`` (ipu-teach's; Keras has none) holds each epoch's ``(seconds, seconds_per_step)`` as its
    progress line shows them (simulated on the IPU), so a benchmark or a notebook reads the figures fit printed."""

    def on_train_begin(self, logs=None):
        self.epoch = []
        self.history = {}
        self.epoch_timings = []

    def on_epoch_end(self, epoch, logs=None):
        self.epoch.append(epoch)
        for key, value in (logs or {}).items():
            self.history.setdefault(key, []).append(value)


class TerminateOnNaN(Callback):
    def on_train_batch_end(self, batch, logs=None):
        loss = (logs or {}).get("loss")
        if loss is not None and not np.isfinite(loss):
            print(f"Batch {batch}: Invalid loss, terminating training")
            self.model.stop_training = True


def _monitor_mode(mode, monitor):
    if mode not in ("auto", "min", "max"):
        raise ValueError(f"mode must be 'auto', 'min' or 'max', got {mode!r}")
    if mode == "auto":
        mode = "max" if "acc" in monitor or monitor.startswith("fmeasure") else "min"
    return mode


def _monitored_value(logs, monitor, missing):
    """The monitored value, or None after Keras' warning (``missing`` is its wording): like tf-keras'
    callbacks, a value that is not logged skips the callback's work for this epoch and training goes on.
    Printed, not logged, so that in a notebook it stays in order with the progress bar, every epoch."""
    current = logs.get(monitor)
    if current is None:
        hint = "; pass validation data for 'val_*' values" if monitor.startswith("val_") else ""
        print(f"WARNING:ipu_teach:{missing} Available metrics are: {','.join(logs)}{hint}")
    return current


def _better(mode, current, best, min_delta=0.0):
    return current < best - min_delta if mode == "min" else current > best + min_delta


class EarlyStopping(Callback):
    def __init__(
        self,
        monitor="val_loss",
        min_delta=0,
        patience=0,
        verbose=0,
        mode="auto",
        baseline=None,
        restore_best_weights=False,
        start_from_epoch=0,
    ):
        super().__init__()
        self.monitor, self.patience, self.verbose = monitor, patience, verbose
        self.min_delta = abs(min_delta)
        self.mode = _monitor_mode(mode, monitor)
        self.baseline, self.restore_best_weights, self.start_from_epoch = (
            baseline,
            restore_best_weights,
            start_from_epoch,
        )

    def on_train_begin(self, logs=None):
        self.wait, self.stopped_epoch, self.best_epoch = 0, 0, 0
        self.best = np.inf if self.mode == "min" else -np.inf
        self.best_weights = None

    def on_epoch_end(self, epoch, logs=None):
        missing = f"Early stopping conditioned on metric `{self.monitor}` which is not available."
        current = _monitored_value(logs or {}, self.monitor, missing)
        if current is None or epoch < self.start_from_epoch:
            return
        self.wait += 1
        if _better(self.mode, current, self.best, self.min_delta):
            self.best, self.best_epoch = current, epoch
            if self.restore_best_weights:
                self.best_weights = self.model.get_weights()
            if self.baseline is None or _better(self.mode, current, self.baseline):
                self.wait = 0
        if self.wait >= self.patience and epoch > 0:
            self.stopped_epoch = epoch
            self.model.stop_training = True
            if self.restore_best_weights and self.best_weights is not None:
                if self.verbose:
                    print(f"Restoring model weights from the end of the best epoch: {self.best_epoch + 1}.")
                self.model.set_weights(self.best_weights)

    def on_train_end(self, logs=None):
        if self.stopped_epoch > 0 and self.verbose:
            print(f"Epoch {self.stopped_epoch + 1}: early stopping")


class ModelCheckpoint(Callback):
    """Saves the model (``model.save``) or only its weights (npz) after each epoch, or only when the
    monitored value improves. ``filepath`` may hold Keras' fields, e.g. ``"ckpt-{epoch:02d}-{val_loss:.2f}.npz"``."""

    def __init__(
        self,
        filepath,
        monitor="val_loss",
        verbose=0,
        save_best_only=False,
        save_weights_only=False,
        mode="auto",
        save_freq="epoch",
    ):
        super().__init__()
        self.save_weights_only = save_weights_only
        if save_freq != "epoch":
            raise ValueError("ModelCheckpoint: ipu-teach saves once per epoch; use save_freq='epoch'")
        self.filepath, self.monitor, self.verbose = str(filepath), monitor, verbose
        self.save_best_only = save_best_only
        self.mode = _monitor_mode(mode, monitor)
        self.best = np.inf if self.mode == "min" else -np.inf

    def on_epoch_end(self, epoch, logs=None):
        logs = logs or {}
        try:
            path = self.filepath.format(epoch=epoch + 1, **logs)
        except KeyError as missing:
            raise KeyError(
                f"ModelCheckpoint: cannot fill in filepath {self.filepath!r}: {missing} is not in the "
                f"logs; available: {['epoch'] + sorted(logs)}"
            ) from None
        if self.save_best_only:
            missing = f"Can save best model only with {self.monitor} available, skipping."
            current = _monitored_value(logs, self.monitor, missing)
            if current is None or not _better(self.mode, current, self.best):
                return
            if self.verbose:
                print(
                    f"\nEpoch {epoch + 1}: {self.monitor} improved from {self.best:.5f} to {current:.5f}, "
                    f"saving model to {path}"
                )
            self.best = current
        elif self.verbose:
            print(f"\nEpoch {epoch + 1}: saving model to {path}")
        self.model.save_weights(path) if self.save_weights_only else self.model.save(path)


class LambdaCallback(Callback):
    """Keras calls the functions with the logs even when a hook has none: ``on_epoch_*`` and
    ``on_batch_*`` with ``(index, logs)``, ``on_train_*`` with ``(logs)``."""

    def __init__(
        self,
        on_epoch_begin=None,
        on_epoch_end=None,
        on_batch_begin=None,
        on_batch_end=None,
        on_train_begin=None,
        on_train_end=None,
    ):
        super().__init__()
        for hook, fn in (
            ("on_epoch_begin", on_epoch_begin),
            ("on_epoch_end", on_epoch_end),
            ("on_train_batch_begin", on_batch_begin),
            ("on_train_batch_end", on_batch_end),
        ):
            if fn is not None:
                setattr(self, hook, lambda index, logs=None, fn=fn: fn(index, logs if logs is not None else {}))
        for hook, fn in (("on_train_begin", on_train_begin), ("on_train_end", on_train_end)):
            if fn is not None:
                setattr(self, hook, lambda logs=None, fn=fn: fn(logs if logs is not None else {}))


def _learning_rate_logs(callback, logs):
    if logs is not None:
        logs["lr"] = _epoch_learning_rate(callback)  # TensorFlow 2's Keras logs it as "lr"


def _epoch_learning_rate(callback):
    """The optimizer's learning rate as a number: a callback that sets it per epoch cannot work with a
    ``keras.optimizers.schedules`` schedule, which sets it at every step (Keras 2.6 fails there too)."""
    rate = callback.model.optimizer.learning_rate
    if not isinstance(rate, (int, float, np.number)):
        raise ValueError(
            f"{type(callback).__name__}: the optimizer's learning_rate is a {type(rate).__name__} schedule, which "
            "sets the rate at every step, while this callback sets it per epoch: use one or the other (give the "
            "optimizer a number as learning_rate to use this callback)"
        )
    return rate


class LearningRateScheduler(Callback):
    """Sets the learning rate at the start of each epoch to ``schedule(epoch, lr)`` (or ``schedule(epoch)``)."""

    def __init__(self, schedule, verbose=0):
        super().__init__()
        self.schedule, self.verbose = schedule, verbose

    def on_epoch_begin(self, epoch, logs=None):
        optimizer = self.model.optimizer
        try:
            lr = self.schedule(epoch, _epoch_learning_rate(self))
        except TypeError:  # a schedule of the epoch only, as Keras allows
            lr = self.schedule(epoch)
        if not isinstance(lr, (float, int, np.floating, np.integer)):
            raise ValueError(f'The output of the "schedule" function should be a float. Got: {lr!r}')
        optimizer.learning_rate = float(lr)
        if self.verbose:
            print(f"\nEpoch {epoch + 1:05d}: LearningRateScheduler setting learning rate to {float(lr)}.")

    def on_epoch_end(self, epoch, logs=None):
        _learning_rate_logs(self, logs)


class ReduceLROnPlateau(Callback):
    """Multiplies the learning rate by ``factor`` when ``monitor`` has not improved for ``patience``
    epochs (never below ``min_lr``), then waits ``cooldown`` epochs before watching again."""

    def __init__(
        self,
        monitor="val_loss",
        factor=0.1,
        patience=10,
        verbose=0,
        mode="auto",
        min_delta=1e-4,
        cooldown=0,
        min_lr=0.0,
    ):
        super().__init__()
        if factor >= 1.0:
            raise ValueError(f"ReduceLROnPlateau does not support a factor >= 1.0. Got {factor}")
        self.monitor, self.factor, self.patience, self.verbose = monitor, factor, patience, verbose
        self.min_delta, self.cooldown, self.min_lr = min_delta, cooldown, min_lr
        self.mode = _monitor_mode(mode, monitor)

    def on_train_begin(self, logs=None):
        self.best = np.inf if self.mode == "min" else -np.inf
        self.wait, self.cooldown_counter = 0, 0

    def on_epoch_end(self, epoch, logs=None):
        logs = logs if logs is not None else {}
        _learning_rate_logs(self, logs)
        missing = f"Learning rate reduction is conditioned on metric `{self.monitor}` which is not available."
        current = _monitored_value(logs, self.monitor, missing)
        if current is None:
            return
        if self.cooldown_counter > 0:
            self.cooldown_counter -= 1
            self.wait = 0
        if _better(self.mode, current, self.best, self.min_delta):
            self.best, self.wait = current, 0
        elif self.cooldown_counter <= 0:
            self.wait += 1
            optimizer = self.model.optimizer
            if self.wait >= self.patience and optimizer.learning_rate > self.min_lr:
                optimizer.learning_rate = max(optimizer.learning_rate * self.factor, self.min_lr)
                if self.verbose:
                    print(
                        f"\nEpoch {epoch + 1:05d}: ReduceLROnPlateau reducing learning rate to "
                        f"{optimizer.learning_rate}."
                    )
                self.cooldown_counter, self.wait = self.cooldown, 0


class CSVLogger(Callback):
    """One CSV row per epoch: ``epoch`` and every log, in sorted order, as Keras writes them. The whole
    file is rewritten atomically each epoch, so it is never left half-written."""

    def __init__(self, filename, separator=",", append=False):
        super().__init__()
        self.filename, self.separator, self.append = os.fspath(filename), separator, append

    def on_train_begin(self, logs=None):
        self.text, self.keys = "", None
        if self.append and os.path.exists(self.filename):
            with open(self.filename, newline="") as f:
                self.text = f.read()

    def on_epoch_end(self, epoch, logs=None):
        logs = logs or {}
        buffer = io.StringIO()
        writer = csv.writer(buffer, delimiter=self.separator)  # "\r\n" line ends, as Keras' csv writer
        if self.keys is None:
            self.keys = sorted(logs)
            if not self.text:
                writer.writerow(["epoch"] + self.keys)
        writer.writerow([epoch] + [logs.get(k, "NA") for k in self.keys])
        self.text += buffer.getvalue()
        with atomic_write(self.filename, "w") as f:
            f.write(self.text)


from .tensorboard import TensorBoard  # noqa: E402, F401 (keras.callbacks.TensorBoard; it subclasses Callback, above)
