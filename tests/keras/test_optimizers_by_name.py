"""Every optimizer ``keras.optimizers`` defines is found as its module docstring says: by ``get("name")`` in any
case, and by ``deserialize`` (so ``load_model``) from its class name."""

import pytest

from ipu_teach.keras import optimizers

DEFINED = [
    value
    for value in vars(optimizers).values()
    if isinstance(value, type)
    and issubclass(value, optimizers.Optimizer)
    and value is not optimizers.Optimizer
    and value.__module__ == optimizers.__name__
]


def test_the_module_defines_the_keras_optimizers():
    assert [cls.__name__ for cls in DEFINED] == [
        "SGD",
        "Adam",
        "RMSprop",
        "Adagrad",
        "Adadelta",
        "Adamax",
        "Nadam",
        "Ftrl",
    ]


@pytest.mark.parametrize("cls", DEFINED, ids=lambda cls: cls.__name__)
def test_each_optimizer_is_found_by_name_and_by_class_name(cls):
    for name in (cls.__name__.lower(), cls.__name__, cls.__name__.upper()):
        assert type(optimizers.get(name)) is cls
    assert type(optimizers.deserialize({"class_name": cls.__name__, "config": {}})) is cls
