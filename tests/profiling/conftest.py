"""`trained`: the small CNN fitted with reports on (each test starts fresh: see tests/conftest.py)."""

import pytest
from profiling_helpers import configure, fit

from ipu_teach import profiling


@pytest.fixture
def trained(tmp_path):
    """(model, report) of the small CNN trained with reports on."""
    configure()
    with profiling.auto_report(tmp_path / "report"):
        model = fit()
    return model, profiling.open_report(profiling.last_report_path())
