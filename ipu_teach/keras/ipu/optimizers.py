"""``keras.ipu.optimizers``: Graphcore's automatic loss scaling (graphcore/keras keras/ipu/optimizers/als_optimizer.py).

``ALSOptimizer`` wraps an optimizer and scales the loss by a loss scaling factor (LSF) that it adjusts itself
from the float16 gradients it sees: it counts, in a two-bin histogram, the scaled fp16 gradient values below
and at or above ``histogram_bin_edge`` (2**13: they would overflow if scaled further), and every update period
divides the LSF by ``increase_factor`` when the overflowing fraction exceeds ``ratio_threshold``, else
multiplies it, staying at least 1 and below ``max_loss_scaling_factor``. Unlike Keras' dynamic
``LossScaleOptimizer`` it never skips a step. Gradients captured by ``keras.ipu.layers.CaptureActivationGradients``
(or ``CaptureUpstreamGradients``) reach ``apply_gradients`` as ``captured_grads`` and are counted too; with
``captured_grads_only`` they alone are. Graphcore's optimizer specialisations (``ALSOptimizerSGD``...) and
``ALSGradientAccumulationOptimizer`` are not simulated.
"""

from __future__ import annotations

import numpy as np

from ..engine import atomic_step
from ..mixed_precision.loss_scale_optimizer import LossScaleOptimizer


def _is_power_of_two(x) -> bool:
    return float(x).is_integer() and int(x) > 0 and int(x) & (int(x) - 1) == 0


class ALSOptimizer(LossScaleOptimizer):
    """An optimizer that computes and applies a loss scaling factor (LSF) itself (Graphcore's Keras).

    Args:
      opt: The ``keras.optimizers.Optimizer`` to wrap.
      initial_loss_scaling_factor: The first LSF, a power of two. Default: 1.
      update_frequency: Steps between LSF updates (Graphcore counts them from 0 after each update, so the
        first update comes on step ``update_frequency + 1``). Default: 8.
      increase_factor: The power of two the LSF is multiplied or divided by. Default: 2.
      max_loss_scaling_factor: The power of two the LSF stays below. Default: 32768.
      accumulate_statistics_over_update_period: True to count every step's gradients, False only the
        update step's. Default: True.
      ratio_threshold: The overflowing fraction of fp16 gradients above which the LSF decreases, in (0, 1).
        Default: 1e-5.
      captured_grads_only: True to count only the gradients captured by ``keras.ipu.layers`` capture layers,
        not the weights'. Default: False.
      lpf_alpha: The low-pass filter of the histogram, ``h = alpha * h_before + (1 - alpha) * h``. Default: 0.
      histogram_bin_edge: The magnitude from which a scaled gradient counts as overflowing. Default: 2**13.
      name: The optimizer's name. Default: ``"ALSOptimizer"``.

    Raises:
      ValueError: for a setting Graphcore's optimizer refuses, naming it.

    Example:

    >>> from ipu_teach.keras.ipu.optimizers import ALSOptimizer
    >>> opt = ALSOptimizer(keras.optimizers.SGD(0.1), initial_loss_scaling_factor=4, update_frequency=1)
    >>> weight = keras.layers.Dense(1, dtype="float16").add_weight("w", (2,), initializer="ones")
    >>> opt.apply_gradients([(np.array([0.01, 0.02], np.float16), weight)])   # no overflow: the LSF grows
    >>> opt.loss_scaling_factor, opt.previous_loss_scaling_factor
    (8.0, 4.0)
    >>> opt.apply_gradients([(np.array([0.01, 2000.0], np.float16), weight)])  # 2000 x 8 >= 2**13: it shrinks
    >>> opt.loss_scaling_factor
    4.0
    """

    def __init__(
        self,
        opt,
        initial_loss_scaling_factor=1,
        update_frequency=8,
        increase_factor=2,
        max_loss_scaling_factor=32768,
        accumulate_statistics_over_update_period=True,
        ratio_threshold=10e-6,
        captured_grads_only=False,
        lpf_alpha=0.0,
        histogram_bin_edge=2**13,
        name="ALSOptimizer",
    ):
        if update_frequency <= 0:
            raise ValueError("update_frequency must be nonzero and positive")
        for what, value in (
            ("increase_factor", increase_factor),
            ("max_loss_scaling_factor", max_loss_scaling_factor),
            ("initial_loss_scaling_factor", initial_loss_scaling_factor),
        ):
            if not _is_power_of_two(value):
                raise ValueError(f"{what} must be a power of two")
        if not 0.0 < ratio_threshold < 1.0:
            raise ValueError("ratio_threshold must be greater than zero and less than one")
        if initial_loss_scaling_factor >= max_loss_scaling_factor:
            raise ValueError("initial_loss_scaling_factor must be less than max_loss_scaling_factor")
        if initial_loss_scaling_factor * increase_factor >= max_loss_scaling_factor:
            raise ValueError("initial_loss_scaling_factor x increase_factor must be less than max_loss_scaling_factor")
        super().__init__(opt, dynamic=False, initial_scale=float(initial_loss_scaling_factor))
        self.initial_loss_scaling_factor = initial_loss_scaling_factor
        self.update_frequency, self.increase_factor = int(update_frequency), float(increase_factor)
        self.max_loss_scaling_factor, self.ratio_threshold = float(max_loss_scaling_factor), float(ratio_threshold)
        self.accumulate_statistics_over_update_period = bool(accumulate_statistics_over_update_period)
        self.captured_grads_only, self.lpf_alpha = bool(captured_grads_only), float(lpf_alpha)
        self.histogram_bin_edge, self.als_name = float(histogram_bin_edge), name
        self.histogram = np.zeros(2, np.float32)
        """Scaled fp16 gradient values counted so far: [below the edge, at or above it]."""
        self.update_counter = 0
        self.previous_loss_scaling_factor = float(initial_loss_scaling_factor)

    @property
    def loss_scaling_factor(self) -> float:
        return self.loss_scale

    @property
    def decrease_factor(self) -> float:
        return 1.0 / self.increase_factor

    @property
    def normalized_histogram(self):
        total = self.histogram.sum()
        return self.histogram / total if total else self.histogram

    supports_captured_grads = True
    """A model passes the gradients its capture layers kept to ``apply_gradients`` (Graphcore's Keras)."""

    def apply_gradients(self, grads_and_vars, captured_grads=None) -> None:
        """Counts the scaled fp16 gradients (and ``captured_grads``, a dict of them by tag, as captured on the
        backward pass of the scaled loss), updates the LSF when an update is due, and applies the (unscaled)
        gradients with the wrapped optimizer: every step, as Graphcore's ``ALSOptimizer.apply_gradients``."""
        atomic_step.run(self._step, list(grads_and_vars), captured_grads or {})

    def _update_due(self) -> bool:
        return self.update_frequency == 1 or (
            self.update_counter > 0 and self.update_counter % self.update_frequency == 0
        )

    def _bins(self, g, scale) -> np.ndarray:
        """[below the edge, at or above it] of a float16 gradient at ``scale`` times its magnitude (others: none)."""
        if g is None or np.asarray(g).dtype != np.float16:
            return np.zeros(2, np.float32)
        scaled = np.abs(np.asarray(g, np.float32) * np.float32(scale))
        overflow = np.count_nonzero(~(scaled < self.histogram_bin_edge))  # inf and NaN overflow too
        return np.array([scaled.size - overflow, overflow], np.float32)

    def _counted(self, grads) -> np.ndarray:
        """The histogram with ``grads`` counted in, each gradient through the low-pass filter, as Graphcore's
        ``_add_grads`` does; only float16 gradients count, at their scaled magnitude (none with
        ``captured_grads_only``)."""
        histogram = self.histogram
        if self.captured_grads_only or not (self.accumulate_statistics_over_update_period or self._update_due()):
            return histogram
        for g in grads:
            if g is not None and np.asarray(g).dtype == np.float16:
                counted = histogram + self._bins(g, self.loss_scale)
                histogram = self.lpf_alpha * histogram + (1.0 - self.lpf_alpha) * counted
        return histogram

    def _with_captured(self, histogram, captured) -> np.ndarray:
        """Graphcore's ``_add_captured_grads``: the captured gradients (already scaled: captured on the backward
        pass of the scaled loss) added to the histogram, a list under one tag value by value."""
        if not (self.accumulate_statistics_over_update_period or self._update_due()):
            return histogram
        for value in captured.values():
            for g in value if isinstance(value, (list, tuple)) else [value]:
                histogram = histogram + self._bins(g, 1.0)
        return histogram

    def _updated_scale(self, histogram) -> float:
        """Graphcore's ``_get_updated_lsf``: down when too much overflows, else up, kept finite, below the
        maximum and at least 1."""
        with np.errstate(invalid="ignore", divide="ignore"):
            ratio = histogram[1] / histogram.sum()
        lsf = (
            self.loss_scale / self.increase_factor
            if ratio > self.ratio_threshold
            else self.loss_scale * self.increase_factor
        )
        return lsf if np.isfinite(lsf) and lsf < self.max_loss_scaling_factor and lsf >= 1.0 else self.loss_scale

    def _step(self, grads_and_vars, captured) -> None:
        counted = self._counted([g for g, _ in grads_and_vars])
        histogram = self._with_captured(counted, captured)
        if captured and not self._update_due():  # Graphcore's _update_histogram: through the filter once more
            histogram = self.lpf_alpha * counted + (1.0 - self.lpf_alpha) * histogram
        due = self._update_due()
        lsf = self._updated_scale(histogram) if due else self.loss_scale
        self.inner_optimizer.apply_gradients(grads_and_vars)
        atomic_step.assign_all(
            [
                (
                    self,
                    "previous_loss_scaling_factor",
                    self.previous_loss_scaling_factor if lsf == self.loss_scale else self.loss_scale,
                ),
                (self, "loss_scale", lsf),
                (self, "histogram", np.zeros(2, np.float32) if due else histogram),
                (self, "update_counter", 0 if due else self.update_counter + 1),
            ]
        )

    def get_config(self) -> dict:
        return {
            "opt": self.inner_optimizer.get_config(),
            "initial_loss_scaling_factor": self.initial_loss_scaling_factor,
            "update_frequency": self.update_frequency,
            "increase_factor": self.increase_factor,
            "max_loss_scaling_factor": self.max_loss_scaling_factor,
            "accumulate_statistics_over_update_period": self.accumulate_statistics_over_update_period,
            "ratio_threshold": self.ratio_threshold,
            "captured_grads_only": self.captured_grads_only,
            "histogram_bin_edge": self.histogram_bin_edge,
        }


__all__ = ["ALSOptimizer"]
