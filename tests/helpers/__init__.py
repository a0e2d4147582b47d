"""What tests in several folders share, as modules: ``from helpers.gradcheck import check_gradients``.

``tests/`` is on ``sys.path`` for every test, as pytest puts the folder of ``tests/conftest.py`` there (the
folders below ``tests/`` are not packages, so a helper beside its tests is imported by its own name)."""
