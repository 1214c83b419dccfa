"""The demo: numbered steps, progress per night and model, sizes checked up front."""

from __future__ import annotations

import pytest

from leapml.demo import SIZES, run_demo


def test_demo_names_each_step_night_and_model(tmp_path, capsys):
    lines = []
    path = run_demo(tmp_path, preset="tiny", nights=1, window_days=3, n_estimators=5,
                    held_out_groups=0, echo=lines.append)
    steps = [line for line in lines if line.startswith("[")]
    assert [s.split("]")[0] + "]" for s in steps] == ["[1/4]", "[2/4]", "[3/4]", "[4/4]"]
    assert "outside calibration" in steps[0]
    bar = capsys.readouterr().err
    assert "night 1/1 (" in bar and "fitting leap on" in bar and "fitting single_lightgbm" in bar
    assert path.read_text().startswith("# leapml demo\n\n## Summary")


@pytest.mark.parametrize("given", [{"size": "huge"}, {"nights": 0}, {"window_days": 0},
                                   {"held_out_groups": -1}, {"n_estimators": 0},
                                   {"preset": "galactic"}, {"nights": 1.5}])
def test_bad_settings_fail_before_anything_runs(given, tmp_path, monkeypatch):
    import leapml.fleet

    monkeypatch.setattr(leapml.fleet, "simulate", lambda *a, **k: pytest.fail("simulated"))
    with pytest.raises(ValueError, match=next(iter(given)).replace("_groups", "")):
        run_demo(tmp_path, echo=lambda *a: None, **given)


def test_sizes_grow_from_quick_to_full_and_keep_each_models_trees():
    quick, standard, full = SIZES["quick"], SIZES["standard"], SIZES["full"]
    assert quick["nights"] < standard["nights"] < full["nights"]
    assert len(quick["held_out_by"]) < len(standard["held_out_by"]) < len(full["held_out_by"])
    # one count for leap and the 400-tree single LightGBM would tilt the comparison
    assert all(size["n_estimators"] is None for size in SIZES.values())


def test_held_out_groups_asked_of_the_quick_demo_are_held_out():
    # the quick size holds nothing out; --held-out 2 was dropped in silence
    from leapml.demo import _settings

    assert _settings("quick")["held_out_by"] == ()
    assert _settings("quick", held_out_groups=2)["held_out_by"] == ("hardware_type",)
    assert _settings("full", held_out_groups=1)["held_out_by"] == ("hardware_type", "model_family")
