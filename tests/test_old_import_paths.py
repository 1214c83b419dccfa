"""Old import paths forward to the new places for one release, with a DeprecationWarning."""

import importlib
import warnings

import pytest

import leapml.fleet

MOVED = [
    ("leapml.backtest", "nightly", "leapml.evaluation.backtest"),
    ("leapml.backtest", "held_out", "leapml.evaluation.held_out"),
    ("leapml.backtest", "CEILING", "leapml.evaluation.regret"),
    ("leapml.metrics", "within_tolerance", "leapml.evaluation.metrics"),
    ("leapml.baselines", "LookupTableRegressor", "leapml.evaluation.baselines"),
    ("leapml.report", "write_report", "leapml.evaluation.report"),
    ("leapml.plotting", "plot_regret", "leapml.evaluation.plotting"),
    ("leapml.placement_backtest", "placement_backtest", "leapml.evaluation.placement_backtest"),
    ("leapml.io", "read_table", "leapml.files"),
    ("leapml.fleet", "lookup_table_score", "leapml.evaluation.table_score"),
    ("leapml.fleet.simulator", "describe", "leapml.fleet.describe"),
    ("leapml.fleet.simulator", "load_fleet", "leapml.fleet.fleet"),
]


@pytest.mark.parametrize(("old", "name", "new"), MOVED)
def test_old_path_warns_and_gives_the_new_object(old, name, new):
    module = importlib.import_module(old)
    with pytest.warns(DeprecationWarning, match=rf"{old}\.{name} moved to {new}\.{name}"):
        value = getattr(module, name)
    assert value is getattr(importlib.import_module(new), name)


@pytest.mark.parametrize("old", sorted({old for old, _, _ in MOVED} - {"leapml.fleet"}))
def test_every_old_name_has_a_new_place(old):
    module = importlib.import_module(old)
    places = module._NEW_PLACES if hasattr(module, "_NEW_PLACES") else {}
    for name, new in places.items():
        with pytest.warns(DeprecationWarning):
            assert getattr(module, name) is getattr(importlib.import_module(new), name)


def test_unknown_names_still_raise_attribute_error():
    import leapml.backtest

    with pytest.raises(AttributeError, match="no attribute 'nightly_v2'"):
        leapml.backtest.nightly_v2  # noqa: B018


def test_names_that_stayed_do_not_warn():
    with warnings.catch_warnings():
        warnings.simplefilter("error", DeprecationWarning)
        assert leapml.fleet.describe.__module__ == "leapml.fleet.describe"
        assert leapml.fleet.load_fleet.__module__ == "leapml.fleet.fleet"
        assert leapml.LookupTableRegressor.__module__ == "leapml.evaluation.baselines"
        assert leapml.within_tolerance.__module__ == "leapml.evaluation.metrics"
