"""Shared fixtures: small simulated fleets, built once per test session."""

from __future__ import annotations

import pytest


@pytest.fixture(scope="session")
def tiny_fleet():
    """A tiny fleet of 8 days: enough for a 5-day window and 3 nights."""
    from leapml.fleet import simulate

    return simulate("tiny", days=8, seed=0)


@pytest.fixture(scope="session")
def quick_models():
    """The default comparison set with few trees, so a night fits in seconds."""
    from leapml.evaluation.backtest import default_models

    return default_models(random_state=0, n_estimators=15)
