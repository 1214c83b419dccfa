"""Print the calibration tables of docs/simulator.md for the production preset.

Run from the repository root: ``python docs/scripts/simulator_table.py``
(about half a minute per seed on two cores). It simulates ``production``
(60 days, seed 0), prints :func:`leapml.fleet.describe`'s table, then the
lookup-table figures for further seeds, so the calibration is shown not to
hang on one draw (``--preset small --days 31`` gives the figures of the
presets table for ``small``). ``--hardware`` prints the catalog table of
docs/hardware.md instead, ``--presets`` the presets table of docs/simulator.md.
"""

from __future__ import annotations

import argparse

from leapml.evaluation.table_score import lookup_table_score
from leapml.fleet import (
    CALIBRATION,
    PRESETS,
    describe,
    format_description,
    hardware_catalog,
    simulate,
)


def hardware_table() -> str:
    """The hardware catalog as a Markdown table ("-": no fast path at that precision)."""
    cols = ["hardware_type", "vendor", "peak_fp32_tflops", "peak_tf32_tflops", "peak_bf16_tflops",
            "peak_fp16_tflops", "peak_fp8_tflops", "memory_gb", "memory_bw_gbps", "intra_node_bw_gbps",
            "inter_node_bw_gbps", "devices_per_host", "tdp_w", "cost_per_device_hour"]
    head = ["type", "vendor", "fp32", "tf32", "bf16", "fp16", "fp8", "memory GB", "memory GB/s",
            "intra-node GB/s", "inter-node GB/s", "devices/host", "TDP W", "USD/device-hour"]
    lines = ["| " + " | ".join(head) + " |", "|" + "---|" * len(head)]
    for row in hardware_catalog()[cols].itertuples(index=False):
        cells = ["-" if isinstance(v, float) and v != v else (f"{v:g}" if isinstance(v, float) else str(v)) for v in row]
        lines.append("| " + " | ".join(cells) + " |")
    return "\n".join(lines)


#: What each preset is for, in the presets table of docs/simulator.md.
USES = {
    "tiny": "unit tests and doctests",
    "small": "examples, the demo, quick backtests",
    "production": "results: 60 days, ~1.5M attempts",
}


def presets_table() -> str:
    """The presets table of docs/simulator.md, with each preset's calibration status."""
    lines = ["| preset | attempts a day | use | calibration |", "|---|---|---|---|"]
    for preset, per_day in PRESETS.items():
        lines.append(f"| `{preset}` | {per_day:,} | {USES[preset]} | {CALIBRATION[preset]} |")
    return "\n".join(lines)


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--preset", default="production")
    parser.add_argument("--days", type=int, default=60)
    parser.add_argument("--seeds", type=int, nargs="+", default=[0, 1, 2])
    parser.add_argument("--hardware", action="store_true", help="print the hardware catalog table")
    parser.add_argument("--presets", action="store_true", help="print the presets table")
    args = parser.parse_args(argv)
    if args.hardware:
        print(hardware_table())
        return 0
    if args.presets:
        print(presets_table())
        return 0

    rows = []
    for i, seed in enumerate(args.seeds):
        fleet = simulate(args.preset, days=args.days, seed=seed)
        if i == 0:
            print(f"### `{args.preset}` preset, {args.days} days, seed {seed}\n")
            print(format_description(describe(fleet)))
            print()
        score = lookup_table_score(fleet.attempts, train_days=30, start=fleet.params["start"])
        rows.append({"seed": seed, "attempts": len(fleet.attempts), "coverage": score["coverage"],
                     "accuracy": score["accuracy"], "scored": score["n_scored"]})
    print("### Lookup table on day 31 across seeds\n")
    print("| seed | attempts | completed attempts scored | coverage | accuracy at +-20% |")
    print("|---|---|---|---|---|")
    for r in rows:
        print(f"| {r['seed']} | {r['attempts']:,} | {r['scored']:,} | {r['coverage']:.3f} | {r['accuracy']:.3f} |")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
