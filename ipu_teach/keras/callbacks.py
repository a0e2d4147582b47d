"""Callbacks with Keras' hooks: History, EarlyStopping, ModelCheckpoint, TerminateOnNaN, LambdaCallback."""
import numpy as np


class Callback:
    def __init__(self):
        self.model = None
        self.params = {}

    def set_model(self, model):
        self.model = model

    def set_params(self, params):
        self.params = params

    def on_train_begin(self, logs=None): pass
    def on_train_end(self, logs=None): pass
    def on_epoch_begin(self, epoch, logs=None): pass
    def on_epoch_end(self, epoch, logs=None): pass
    def on_train_batch_begin(self, batch, logs=None): pass
    def on_train_batch_end(self, batch, logs=None): pass
    def on_test_begin(self, logs=None): pass
    def on_test_end(self, logs=None): pass
    def on_test_batch_begin(self, batch, logs=None): pass
    def on_test_batch_end(self, batch, logs=None): pass
    def on_predict_begin(self, logs=None): pass
    def on_predict_end(self, logs=None): pass
    def on_predict_batch_begin(self, batch, logs=None): pass
    def on_predict_batch_end(self, batch, logs=None): pass


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
    """Records the epoch logs; ``fit`` returns it."""

    def on_train_begin(self, logs=None):
        self.epoch = []
        self.history = {}

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


def _better(mode, current, best, min_delta=0.0):
    return current < best - min_delta if mode == "min" else current > best + min_delta


class EarlyStopping(Callback):
    def __init__(self, monitor="val_loss", min_delta=0, patience=0, verbose=0, mode="auto", baseline=None,
                 restore_best_weights=False, start_from_epoch=0):
        super().__init__()
        self.monitor, self.patience, self.verbose = monitor, patience, verbose
        self.min_delta = abs(min_delta)
        self.mode = _monitor_mode(mode, monitor)
        self.baseline, self.restore_best_weights, self.start_from_epoch = baseline, restore_best_weights, start_from_epoch

    def on_train_begin(self, logs=None):
        self.wait, self.stopped_epoch, self.best_epoch = 0, 0, 0
        self.best = np.inf if self.mode == "min" else -np.inf
        self.best_weights = None

    def on_epoch_end(self, epoch, logs=None):
        current = (logs or {}).get(self.monitor)
        if current is None:
            raise ValueError(f"EarlyStopping: the monitored value {self.monitor!r} is not in the logs; "
                             f"available: {sorted(logs or {})}. Pass validation data for 'val_*' values")
        if epoch < self.start_from_epoch:
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
                    print("Restoring model weights from the end of the best epoch: " f"{self.best_epoch + 1}.")
                self.model.set_weights(self.best_weights)

    def on_train_end(self, logs=None):
        if self.stopped_epoch > 0 and self.verbose:
            print(f"Epoch {self.stopped_epoch + 1}: early stopping")


class ModelCheckpoint(Callback):
    """Saves the weights (npz) after each epoch, or only when the monitored value improves.
    ``filepath`` may hold Keras' fields, e.g. ``"ckpt-{epoch:02d}-{val_loss:.2f}.npz"``."""

    def __init__(self, filepath, monitor="val_loss", verbose=0, save_best_only=False, save_weights_only=False,
                 mode="auto", save_freq="epoch"):
        super().__init__()
        if not save_weights_only:
            raise ValueError("ModelCheckpoint: ipu-teach saves weights only (as .npz, no pickle); "
                             "pass save_weights_only=True")
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
            raise KeyError(f"ModelCheckpoint: cannot fill in filepath {self.filepath!r}: {missing} is not in the "
                           f"logs; available: {['epoch'] + sorted(logs)}") from None
        if self.save_best_only:
            current = logs.get(self.monitor)
            if current is None:
                raise ValueError(f"ModelCheckpoint: the monitored value {self.monitor!r} is not in the logs; "
                                 f"available: {sorted(logs)}")
            if not _better(self.mode, current, self.best):
                return
            if self.verbose:
                print(f"\nEpoch {epoch + 1}: {self.monitor} improved from {self.best:.5f} to {current:.5f}, "
                      f"saving model to {path}")
            self.best = current
        elif self.verbose:
            print(f"\nEpoch {epoch + 1}: saving model to {path}")
        self.model.save_weights(path)


class LambdaCallback(Callback):
    """Keras calls the functions with the logs even when a hook has none: ``on_epoch_*`` and
    ``on_batch_*`` with ``(index, logs)``, ``on_train_*`` with ``(logs)``."""

    def __init__(self, on_epoch_begin=None, on_epoch_end=None, on_batch_begin=None, on_batch_end=None,
                 on_train_begin=None, on_train_end=None):
        super().__init__()
        for hook, fn in (("on_epoch_begin", on_epoch_begin), ("on_epoch_end", on_epoch_end),
                         ("on_train_batch_begin", on_batch_begin), ("on_train_batch_end", on_batch_end)):
            if fn is not None:
                setattr(self, hook, lambda index, logs=None, fn=fn: fn(index, logs if logs is not None else {}))
        for hook, fn in (("on_train_begin", on_train_begin), ("on_train_end", on_train_end)):
            if fn is not None:
                setattr(self, hook, lambda logs=None, fn=fn: fn(logs if logs is not None else {}))
