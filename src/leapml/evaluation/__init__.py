"""Evaluation: how good the predictions and placements are, scored against the fleet's truth.

Nothing below this package imports it; only the demo and the command line do.

- :mod:`~leapml.evaluation.backtest`: the nightly retrain-and-score replay (:func:`nightly`).
- :mod:`~leapml.evaluation.held_out`: accuracy on a hardware type or model family never seen.
- :mod:`~leapml.evaluation.regret`: throughput per cost each policy's pick loses.
- :mod:`~leapml.evaluation.baselines`: the lookup table, last-measured and spec-scaling baselines.
- :mod:`~leapml.evaluation.table_score`: the lookup table's accuracy on a log.
- :mod:`~leapml.evaluation.metrics`: accuracy within a tolerance, coverage, median error.
- :mod:`~leapml.evaluation.report`, :mod:`~leapml.evaluation.plotting`: report folders, figures.
- :mod:`~leapml.evaluation.placement_backtest`: placements with learned feasibility and intervals.
"""
