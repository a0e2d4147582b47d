"""``tf.data.Options``: recorded for compatibility; ipu-teach's pipelines always run in order, on one thread.

Setting a name TensorFlow 2.6 does not have is an error naming the options that exist, so a typo
is not silently ignored. Source: ``tf.data.Options`` and its option groups, TensorFlow 2.6 API.
"""

import enum


class AutoShardPolicy(enum.IntEnum):
    """``tf.data.experimental.AutoShardPolicy``: how a distributed input would be sharded."""

    OFF = -1
    AUTO = 0
    FILE = 1
    DATA = 2
    HINT = 3


class _Group:
    """Options with a fixed set of names (unset ones read as None)."""

    _names: tuple = ()

    def __init__(self):
        for name in self._names:
            object.__setattr__(self, name, None)

    def __setattr__(self, name, value):
        if name not in self._names:
            raise AttributeError(f"{type(self).__name__} has no option {name!r}; it has {', '.join(self._names)}")
        object.__setattr__(self, name, value)

    def merge(self, other):
        """Options set in ``other`` win over this group's."""
        for name in self._names:
            mine, theirs = getattr(self, name), getattr(other, name)
            if isinstance(mine, _Group):
                mine.merge(theirs)
            elif theirs is not None:
                object.__setattr__(self, name, theirs)

    def __repr__(self):
        set_options = {name: getattr(self, name) for name in self._names if getattr(self, name) is not None}
        return f"{type(self).__name__}({set_options})"


class DistributeOptions(_Group):
    _names = ("auto_shard_policy", "num_devices")


class ThreadingOptions(_Group):
    _names = ("max_intra_op_parallelism", "private_threadpool_size")


class OptimizationOptions(_Group):
    _names = (
        "apply_default_optimizations",
        "autotune",
        "map_parallelization",
        "parallel_batch",
        "map_and_batch_fusion",
        "map_fusion",
        "noop_elimination",
        "shuffle_and_repeat_fusion",
    )


class Options(_Group):
    """``tf.data.Options()``; pass to ``dataset.with_options(options)``, read back with ``dataset.options()``."""

    _names = (
        "deterministic",
        "experimental_deterministic",
        "experimental_distribute",
        "experimental_optimization",
        "experimental_slack",
        "experimental_threading",
        "threading",
        "experimental_external_state_policy",
    )

    def __init__(self):
        super().__init__()
        object.__setattr__(self, "experimental_distribute", DistributeOptions())
        object.__setattr__(self, "experimental_optimization", OptimizationOptions())
        threading = ThreadingOptions()  # TensorFlow 2.7 renamed experimental_threading; both name one group
        object.__setattr__(self, "experimental_threading", threading)
        object.__setattr__(self, "threading", threading)
