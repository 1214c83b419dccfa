"""The documentation says what the code does.

Code blocks of the guide pages run against the real API (and printed output
shown in a ``text`` block right after a code block must match), the schema
tables match :mod:`leapml.schema`, the README's two commands appear verbatim
in Getting started, every public module has an API page and every public name
a docstring, and the CLI page lists every subcommand.
"""

from __future__ import annotations

import contextlib
import importlib
import io
import re
import sys
from pathlib import Path

import matplotlib
import pytest

matplotlib.use("Agg")

ROOT = Path(__file__).resolve().parents[1]
DOCS = ROOT / "docs"
sys.path.insert(0, str(DOCS / "scripts"))

#: Pages whose Python blocks form one runnable program each.
RUNNABLE_PAGES = [
    "getting-started.md",
    "guide/schema.md",
    "guide/nightly.md",
    "guide/ranking.md",
    "guide/backtest.md",
]

#: Public modules, each with a page under docs/api/.
#: Each public module (under leapml) and the API page that documents it (docs/api/PAGE.md).
PUBLIC_MODULES = {
    "regressor": "regressor", "ranking": "ranking", "features": "features", "fleet": "fleet",
    "placement": "placement", "training": "training", "files": "files", "model_file": "model_file", "schema": "schema",
    "cli": "cli", "demo": "demo", "datasets": "datasets", "distributed": "distributed",
    "feasibility": "feasibility",
    "evaluation.backtest": "backtest", "evaluation.held_out": "backtest",
    "evaluation.regret": "backtest", "evaluation.baselines": "baselines",
    "evaluation.table_score": "baselines", "evaluation.metrics": "metrics",
    "evaluation.report": "report", "evaluation.plotting": "plotting",
    "evaluation.placement_backtest": "placement_backtest",
}

_FENCE = re.compile(r"^```(\w*)[^\n]*\n(.*?)^```\s*$", re.MULTILINE | re.DOTALL)


def _blocks(text: str) -> list[tuple[str, str, int, int]]:
    """Fenced blocks at the top level of a page: (language, body, start, end)."""
    return [(m.group(1), m.group(2), m.start(), m.end()) for m in _FENCE.finditer(text)]


def _programs(page: str):
    """Each Python block of a page, with the text block that shows its output, if any."""
    text = (DOCS / page).read_text()
    blocks = _blocks(text)
    for i, (language, body, _, end) in enumerate(blocks):
        if language != "python":
            continue
        expected = None
        if i + 1 < len(blocks):
            next_language, next_body, next_start, _ = blocks[i + 1]
            if next_language == "text" and not text[end:next_start].strip():
                expected = next_body
        yield body, expected


@pytest.mark.parametrize("page", RUNNABLE_PAGES)
def test_code_blocks_run_and_print_what_the_page_shows(page, tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)
    namespace: dict = {"__name__": "__docs__"}
    programs = list(_programs(page))
    assert programs, f"{page} has no Python block"
    for number, (code, expected) in enumerate(programs, start=1):
        printed = io.StringIO()
        with contextlib.redirect_stdout(printed):
            exec(compile(code, f"{page} block {number}", "exec"), namespace)
        if expected is not None:
            assert printed.getvalue().rstrip() == expected.rstrip(), f"{page} block {number}"


def _bash_blocks(text: str) -> list[str]:
    return [body.strip() for language, body, _, _ in _blocks(text) if language == "bash"]


def test_readme_commands_are_the_getting_started_commands():
    readme = _bash_blocks((ROOT / "README.md").read_text())
    assert len(readme) >= 2
    started = (DOCS / "getting-started.md").read_text()
    for command in readme:
        assert f"```bash\n{command}\n```" in started, command
    ci = (ROOT / ".ci" / "run").read_text()
    test_command = next(c for c in readme if "pytest" in c)
    parts = test_command.split(" && ")[1:]
    for part in parts:
        assert part in ci, f".ci/run does not run {part!r} from the README"
    runs = [line.strip() for line in ci.splitlines() if line.strip().startswith(("python", "NO_"))]
    extra = [line for line in runs if line not in parts and "pip install" not in line]
    assert not extra, f".ci/run runs {extra} that the README's test command does not"


def test_schema_page_tables_match_the_schema_module():
    from schema_tables import tables

    page = (DOCS / "guide" / "schema.md").read_text()
    for name, table in tables().items():
        assert f"<!-- {name} table -->\n{table}\n" in page, (
            f"the {name} table of docs/guide/schema.md is stale: "
            "regenerate it with python docs/scripts/schema_tables.py"
        )


def test_every_public_module_has_an_api_page_in_the_nav():
    nav = (ROOT / "mkdocs.yml").read_text()
    src = ROOT / "src" / "leapml"
    found = {p.stem for p in src.glob("*.py") if not p.stem.startswith("_")}
    found |= {f"evaluation.{p.stem}" for p in (src / "evaluation").glob("*.py")
              if not p.stem.startswith("_")}
    found |= {"fleet", "features", "schema"}
    assert found == set(PUBLIC_MODULES)
    for module, page in PUBLIC_MODULES.items():
        assert f"::: leapml.{module}\n" in (DOCS / "api" / f"{page}.md").read_text()
        assert f"api/{page}.md" in nav


def test_every_public_name_has_a_docstring():
    griffe = pytest.importorskip("griffe")
    from griffe_comment_docstrings import CommentDocstrings

    package = griffe.load(
        "leapml",
        search_paths=[str(ROOT / "src")],
        docstring_parser="numpy",
        extensions=griffe.load_extensions(CommentDocstrings()),
    )
    missing = []
    for module in PUBLIC_MODULES:
        for name in importlib.import_module(f"leapml.{module}").__all__:
            obj = package[module][name]
            obj = obj.final_target if obj.is_alias else obj
            if not obj.docstring:
                missing.append(f"leapml.{module}.{name}")
            if obj.is_class:
                missing += [
                    f"leapml.{module}.{name}.{member}"
                    for member, value in obj.members.items()
                    if not member.startswith("_") and not value.is_alias
                    and not value.is_attribute and not value.docstring
                ]
    assert not missing, f"public names without a docstring: {missing}"


def test_cli_page_lists_every_subcommand():
    from leapml.cli import _parser

    page = (DOCS / "api" / "cli.md").read_text()
    (subparsers,) = [a for a in _parser()._actions if a.dest == "command"]
    for command in subparsers.choices:
        assert f"| `leapml {command}` |" in page, command


def test_simulator_presets_table_states_each_calibration():
    from simulator_table import presets_table

    page = (DOCS / "simulator.md").read_text()
    assert f"<!-- presets table -->\n{presets_table()}\n" in page, (
        "the presets table of docs/simulator.md is stale: regenerate it with "
        "python docs/scripts/simulator_table.py --presets"
    )


def _pages() -> dict[str, str]:
    pages = {str(p.relative_to(ROOT)): p.read_text() for p in DOCS.rglob("*.md")}
    for extra in ("README.md", "benchmarks/README.md"):
        pages[extra] = (ROOT / extra).read_text()
    return pages


def test_ordinal_router_accuracy_is_quoted_as_measured():
    """Every quote of the ordinal router's gain is the range of the benchmark's table."""
    table = (ROOT / "benchmarks" / "README.md").read_text().split(
        "Accuracy of the ordinal router against the multiclass one")[1]
    rows = re.findall(r"^\| `\w+`, seed \d \| [\d.]+ s, ([\d.]+) \| [\d.]+ s, ([\d.]+) \|$", table,
                      flags=re.MULTILINE)
    gains = [100 * (float(ordinal) - float(multiclass)) for multiclass, ordinal in rows]
    assert len(gains) == 4
    measured = f"{min(gains):.1f} to {max(gains):.1f} points more accurate"
    sources = {**_pages(), "src/leapml/regressor.py": (ROOT / "src/leapml/regressor.py").read_text()}
    quotes = {name: re.findall(r"[\d.]+ to [\d.]+\s+points more accurate", " ".join(text.split()))
              for name, text in sources.items()}
    quoted = {name: found for name, found in quotes.items() if found}
    assert len(quoted) >= 3, quoted
    assert all(q == measured for found in quoted.values() for q in found), (measured, quoted)


def test_single_lightgbm_is_defined_with_its_tree_count():
    """Each paragraph that defines the single LightGBM baseline gives the code's tree count."""
    import inspect

    from leapml.evaluation.baselines import single_model_reference

    trees = inspect.signature(single_model_reference).parameters["n_estimators"].default
    defining = [
        (name, paragraph) for name, text in _pages().items() for paragraph in text.split("\n\n")
        if re.search(r"single LightGBM|`single_lightgbm`", paragraph)
        and re.search(r"median regressor|LightGBM regressor", paragraph)
    ]
    assert len(defining) >= 3
    for name, paragraph in defining:
        counts = set(re.findall(r"(\d+)[ -]trees?\b", paragraph))
        assert str(trees) in counts, (name, paragraph)


def test_results_page_quotes_the_run_it_cites():
    """The new protocol's figures in docs/results.md are those of the committed run's report."""
    import json

    run_dir = DOCS / "results-data" / "production-honest"
    run = json.loads((run_dir / "run.json").read_text())
    report = (run_dir / "report.md").read_text()
    page = (DOCS / "results.md").read_text()
    section = page.split("## Under the new protocol")[1].split("## Against the published figures")[0]
    earlier = page.split("## Against the published figures", 1)[1]
    assert f"--nights {run['nights']}" in section and f"`{run['commit']}`" in section
    assert f"{run['attempts']:,} simulated attempts" in section
    assert f"{round(run['seconds'] / 60)} minutes" in section
    percent = re.compile(r"(?<![\d.])-?\d+\.\d%")
    # the parenthesis that recalls the earlier protocol quotes the sections below it
    allowed = set(percent.findall(report)) | set(percent.findall(earlier))
    quoted = percent.findall(section)
    assert len(quoted) > 100
    assert not set(quoted) - allowed, sorted(set(quoted) - allowed)
    # every table row is the report's, but for the spread the page adds (max - min, in points)
    report_rows = set(report.splitlines())
    for row in (line for line in section.splitlines() if line.startswith("| ")):
        if row in report_rows:
            continue
        cells = row.strip("|").split("|")
        shorter = "|" + "|".join(cells[:-1]) + "|"
        assert shorter in report_rows, row
        if cells[-1].strip() != "spread_points":
            low, high = (float(cells[i].strip(" %")) for i in (2, 3))
            assert abs(float(cells[-1]) - (high - low)) <= 0.1, row  # cells rounded to 0.05


def test_default_model_section_quotes_the_run_it_keeps():
    """The default model's tables in docs/results.md are what its script prints from the kept run."""
    import json
    import runpy

    script = runpy.run_path(str(DOCS / "scripts" / "default_results.py"))
    script["check_same_attempts"]()
    page = (DOCS / "results.md").read_text()
    section = page.split("## The default model (ten production nights)")[1].split("\n## ")[0]
    tables = [script[name]() for name in ("rate_table", "rate_gap_table", "rate_regret_table",
                                          "table", "gap_table", "regret_table")]
    for line in "\n".join(tables).splitlines():
        assert line in section, line
    for kept in ("production-v7", "production-v6"):  # the default of now, the one before it
        run = json.loads((DOCS / "results-data" / kept / "run.json").read_text())
        assert f"`{run['commit']}`" in section and f"{round(run['seconds'] / 60)} minutes" in section
    for kept in ("production-v5", "production-v4", "production-v3"):  # the run, the earlier ones
        run = json.loads((DOCS / "results-data" / kept / "run.json").read_text())
        assert f"`{run['commit']}`" in section and run["command"].split(" --out")[0] in section
        assert f"{round(run['seconds'] / 60)} minutes" in section
    # every percentage of the prose is a cell of the kept runs' tables or reports
    reports = [(DOCS / "results-data" / kept / "report.md").read_text()
               for kept in ("production-v5", "production-v4", "production-v3")]
    percent = re.compile(r"(?<![\d.])-?\d+\.\d%")
    allowed = ({p for report in reports for p in percent.findall(report)}
               | set(percent.findall(section.split("What it says:")[0])))
    prose = section.split("What it says:")[1]
    assert not set(percent.findall(prose)) - allowed, sorted(set(percent.findall(prose)) - allowed)


def test_previous_default_section_quotes_the_script_it_names():
    """The previous default's tables in docs/results.md are what its script prints from the kept runs."""
    import json
    import runpy

    script = runpy.run_path(str(DOCS / "scripts" / "default_vs_published.py"))
    page = (DOCS / "results.md").read_text()
    section = page.split("## The previous default")[1].split("## Under the new protocol")[0]
    for line in (script["table"]() + "\n" + script["regret_table"]()).splitlines():
        assert line in section, line
    run = json.loads((DOCS / "results-data" / "production-default" / "run.json").read_text())
    assert f"`{run['commit']}`" in section and run["command"].split(" --out")[0] in section
    assert f"{round(run['seconds'] / 60)} minutes" in section


#: Row labels of docs/method.md's lever tables -> the configuration names of the kept runs.
_LEVER_ROWS = {
    "levers_small_seeds012.json": {
        "single LightGBM (L1), 400 trees: the reference": "single_lightgbm",
        "published": "published",
        "previous default (ordinal, soft, 100 trees, no shared expert, no blend)":
            "base=None,history_prior=None,n_estimators=100",
        "**default**": "default",
        "default, not monotone (`monotone_increasing=None`)": "monotone_increasing=None",
        "default, no shared expert (`base=None`)": "base=None",
        "default, no blend (`history_prior=None`)": "history_prior=None",
        "default, 100 trees": "n_estimators=100",
        "default, 5 bins": "n_bins=5",
        "default, shared expert on L1 (`base_l1`)": "base_l1",
        "single LightGBM (Huber), 400 trees": "single_huber",
        "single LightGBM (L1) with the blend": "single+history",
        "single LightGBM (Huber) with the blend": "single_huber+history",
    },
    "levers_small_seeds012_columns.json": {
        "single LightGBM (L1), 400 trees: the reference": "single_lightgbm",
        "**default**: each split among half the columns": "default",
        "the shared expert on all the columns (`base_all_columns`)": "base_all_columns",
        "single LightGBM (Huber), 400 trees": "single_huber",
    },
    "levers_small_seeds012_cold_start.json": {
        "single LightGBM (L1), 400 trees: the reference": "single_lightgbm",
        "no copies (`cold_start=0`)": "cold_start=0",
        "copies of 10% of the rows (`cold_start=0.1`)": "default",  # the default when it ran
        "**default**: copies of 30% of the rows (`cold_start=0.3`)": "cold_start=0.3",
    },
    "levers_small_seeds012_cold_start_hardware.json": {
        "single LightGBM (L1), 400 trees: the reference": "single_lightgbm",
        "no hardware copies (`cold_start_hardware=0`)": "default",  # the default when it ran
        "**default**: hardware copies of 30% of the rows (`cold_start_hardware=0.3`)":
            "cold_start_hardware=0.3",
    },
    "levers_small_seeds012_base_rate.json": {
        "single LightGBM (L1), 400 trees: the reference": "single_lightgbm",
        "shared expert at rate 0.2": "default",  # the default when it ran: 0.2 on every log
        "**default on this log**: rate 0.1": "base_lr_0.1",
    },
    "levers_production_seed0_cold_start.json": {
        "single LightGBM (L1), 400 trees: the reference": "single_lightgbm",
        "copies of 50% of the rows (`cold_start=0.5`)": "cold_start=0.5",
    },
    "levers_production_seed0_expert_weight.json": {
        "the whole corrections (`expert_weight=1`)": "default",  # the default when it ran
        "**default on this log**: half (`expert_weight=0.5`)": "expert_weight=0.5",
        "a quarter (`expert_weight=0.25`)": "expert_weight=0.25",
        "the shared expert alone (`expert_weight=0`)": "expert_weight=0",
    },
    "levers_production_seed0_roofline_anchor.json": {
        "**default**: anchored on the roofline, half the corrections": "default",
    },
    "levers_production_seed0_base_100_trees.json": {
        "100 trees at 0.3": "base_100_lr_0.3,expert_weight=0.5",
        "100 trees at 0.4": "base_100_lr_0.4,expert_weight=0.5",
    },
    "levers_production_seed0_expert_weight_anchor.json": {
        "**default on this log**: half the corrections, anchored": "default",
        "three quarters (`expert_weight=0.75`)": "expert_weight=0.75",
        "the whole corrections (`expert_weight=1`)": "expert_weight=1",
    },
    "levers_production_seed0_fewer_trees.json": {
        "**default on this log**: 30 rounds (`n_estimators=30`)": "n_estimators=30",
        "30 rounds and a shared expert of 31 leaves":
            "base_leaves_31,n_estimators=30,expert_weight=0.5",
    },
    "levers_small_seeds012_roofline_anchor.json": {
        "**default**: anchored on the roofline (`anchor=\"auto\"`)": "anchor=log_roofline_throughput",
    },
    "levers_tiny_seeds012_roofline_anchor.json": {
        "single LightGBM (L1), 400 trees: the reference on `tiny`": "single_lightgbm",
        "**default on `tiny`**: anchored on the roofline": "default",
        "not anchored (`anchor=None`)": "anchor=None",
    },
    "levers_small_seeds012_expert_weight.json": {
        "single LightGBM (L1), 400 trees: the reference": "single_lightgbm",
        "**default on this log**: the whole corrections": "default",
        "half (`expert_weight=0.5`)": "expert_weight=0.5",
        "a quarter (`expert_weight=0.25`)": "expert_weight=0.25",
        "the shared expert alone (`expert_weight=0`)": "expert_weight=0",
    },
    "levers_tiny_seeds012_base_rate.json": {
        "single LightGBM (L1), 400 trees: the reference on `tiny`": "single_lightgbm",
        "rate 0.2, on `tiny`": "default",
        "**default on `tiny`**: rate 0.1": "base_lr_0.1",
        "single LightGBM (Huber), 400 trees, on `tiny`": "single_huber",
    },
    "levers_small_seeds012_base_losses.json": {
        "Huber, threshold 0.9 (kept)": "default",
        "Huber, threshold 0.3": "base_huber_0.3",
        "least squares": "base_l2",
        "L1": "base_l1",
        "Huber, anchored on the history estimate": "anchor=history_log_throughput_estimate",
        "L1, anchored on the history estimate": "base_l1,anchor=history_log_throughput_estimate",
    },
}


@pytest.mark.parametrize("run", sorted(_LEVER_ROWS))
def test_method_lever_tables_are_the_kept_runs(run):
    """Every cell of a lever table in docs/method.md is the kept run's mean over seeds."""
    import json

    import pandas as pd

    table = pd.DataFrame(json.loads((DOCS / "results-data" / "method-levers" / run).read_text())["table"])
    means = table.groupby("model").mean(numeric_only=True)
    page = (DOCS / "method.md").read_text().split("## Levers")[1].split("## Inputs")[0]
    tables = [block for block in page.split("\n\n") if block.startswith("| ")]
    rows = _LEVER_ROWS[run]
    table_text = next(t for t in tables if all(f"| {label} |" in t for label in rows))
    header, _, *lines = table_text.splitlines()
    columns = {"within +-20%": "within_20", "within +-10%": "within_10", "new jobs +-20%": "new_jobs_20",
               "new jobs +-10%": "new_jobs_10", "device-hours +-20%": "device_hours_20",
               "new jobs +-20%, by device-hours": "new_jobs_device_hours_20",
               "gap to submission ceiling": "gap_to_submission_ceiling", "mean regret": "mean_regret",
               "p90 regret": "p90_regret"}
    names = [columns[c.strip()] for c in header.strip("|").split("|")[1:]]
    assert len(lines) == len(rows)
    for line in lines:
        label, *cells = [c.strip() for c in line.strip("|").split("|")]
        model = rows[label]
        for name, cell in zip(names, cells, strict=True):
            assert float(cell.strip("*")) == pytest.approx(round(means.loc[model, name], 1), abs=1e-9), \
                (label, name)


@pytest.mark.parametrize(("by", "name"), [("hardware_type", "hardware"), ("model_family", "family")])
def test_held_out_figures_quote_the_kept_runs(by, name):
    """The held-out paragraphs of docs/results.md quote the summaries of the kept tables."""
    import pandas as pd
    from held_out_figure import markdown, summary, versus

    table = pd.read_csv(DOCS / "results-data" / "method-levers" / f"held_out_small_{name}.csv")
    stats = summary(table[table["by"] == by], by)
    page = (DOCS / "results.md").read_text()
    what = "A **new hardware type**" if by == "hardware_type" else "An **unseen model family**"
    paragraph = page.split(what)[1].split("\n\n")[0]
    default, single = stats.loc["leap"], stats.loc["single_lightgbm"]
    flat = " ".join(paragraph.split())
    assert f"median of {default['median']} points" in flat
    assert f"mean {default['mean']}" in flat and f"to {default['worst']})" in flat
    assert f"{single['median']} for the single model (mean {single['mean']}" in flat
    assert f"for {int(default['above_published'])} of 24" in flat
    assert f"(single model: {int(single['above_published'])})" in flat
    assert (DOCS / "img" / f"held_out_{name}.svg").exists()
    # the same experiment with the shared expert on every column, kept beside
    before = pd.read_csv(DOCS / "results-data" / "method-levers" / f"held_out_small_{name}_all_columns.csv")
    earlier = summary(before[before["by"] == by], by).loc["leap"]
    if by == "hardware_type":
        assert f"median drop was {earlier['median']} points" in flat
        assert f"to {earlier['worst']}, above 37 for {int(earlier['above_published'])} types" in flat
    else:
        assert (f"more still (median {earlier['median']}, above for "
                f"{int(earlier['above_published'])})") in flat
    # the default before cold-start copies, kept beside
    without = pd.read_csv(DOCS / "results-data" / "method-levers" / f"held_out_small_{name}_no_cold_start.csv")
    earlier = summary(without[without["by"] == by], by).loc["leap"]
    if by == "hardware_type":
        assert (f"the default's median drop was {earlier['median']} points (mean {earlier['mean']}, "
                f"from {earlier['least']} to {earlier['worst']}, above 37 for "
                f"{int(earlier['above_published'])} types") in flat
    else:
        assert (f"default lost more (median {earlier['median']}, mean {earlier['mean']}, above for "
                f"{int(earlier['above_published'])} families)") in flat
    both = versus(table[table["by"] == by], by)
    assert f"median {both['held_leap']}% against {both['held_single']}%" in flat
    # the default before its hardware copies, kept beside
    before = pd.read_csv(DOCS / "results-data" / "method-levers"
                         / f"held_out_small_{name}_no_hardware_copies.csv")
    earlier = summary(before[before["by"] == by], by).loc["leap"]
    spread = f"(mean {earlier['mean']}, from {earlier['least']} to {earlier['worst']}, above"
    if by == "hardware_type":
        assert (f"Before the hardware copies the median drop was {earlier['median']} points "
                f"{spread} 37 for {int(earlier['above_published'])} types") in flat
    else:
        assert (f"default's median drop was {earlier['median']} points {spread} for "
                f"{int(earlier['above_published'])} families)") in flat
    assert f"median {both['in_leap']}% against {both['in_single']}%" in flat or \
        f"({both['in_leap']}% against {both['in_single']}%)" in flat
    assert f"from {default['least']} to {default['worst']})" in flat
    unit = "types" if by == "hardware_type" else "families"
    assert (f"on {both['higher']} {unit}, level on {both['level']}" in flat
            or f"higher on {both['higher']} {unit}, level on {both['level']}" in flat)
    # the per-group table is the script's, row for row
    assert markdown(table[table["by"] == by], by) in page



def test_more_family_copies_paragraph_quotes_its_kept_run():
    """The paragraph on cold_start=0.5 quotes the summary of its kept held-out table."""
    import pandas as pd
    from held_out_figure import summary, versus

    kept = DOCS / "results-data" / "method-levers"
    more = pd.read_csv(kept / "held_out_small_family_cold_start_05.csv")
    default = pd.read_csv(kept / "held_out_small_family.csv")
    default = default[default["model"] == "leap"]
    stats, base = summary(more, "model_family").loc["leap"], versus(default, "model_family")
    both = versus(more, "model_family")
    flat = " ".join((DOCS / "results.md").read_text().split("**More family copies, tried.**")[1]
                    .split("\n\n")[0].split())
    assert f"median drop is {stats['median']} points" in flat
    assert f"with {int(stats['above_published'])} families above it" in flat
    assert f"mean rises to {stats['mean']} (from {stats['least']} to {stats['worst']})" in flat
    assert f"(median {both['held_leap']}% against {base['held_leap']}%)" in flat
    assert f"level ({both['in_leap']}% against {base['in_leap']}%)" in flat
    attempts = more["n_attempts"]
    assert f"have {attempts.min()} to {attempts.max()} next-day attempts" in flat


@pytest.mark.parametrize(("by", "name", "what"), [("model_family", "family", "An unseen model family:"),
                                                  ("hardware_type", "hardware", "A new hardware type:")])
def test_roofline_anchor_held_out_paragraph_quotes_its_kept_runs(by, name, what):
    """The held-out figures of the roofline anchor are the summaries of its kept tables."""
    import pandas as pd
    from held_out_figure import summary, versus

    kept = DOCS / "results-data" / "method-levers"
    runs = {label: pd.read_csv(kept / f"held_out_small_{name}_{label}.csv")
            for label in ("roofline_anchor", "no_roofline_anchor")}
    block = (DOCS / "results.md").read_text().split("**The default of now: the roofline anchor.**")[1]
    paragraph = next(p for p in block.split("\n\n") if what in " ".join(p.split()))
    flat = " ".join(paragraph.split()).split(what)[1]
    now, before = (summary(runs[label], by).loc["leap"] for label in runs)
    assert (f"median drop is {now['median']} points (mean {now['mean']}, from {now['least']} to "
            f"{now['worst']}, above the published figure for {int(now['above_published'])} of 24)"
            ) in flat
    assert (f"without the anchor {before['median']} (mean {before['mean']}, from {before['least']} "
            f"to {before['worst']}, above for {int(before['above_published'])})") in flat
    now, before = (versus(runs[label], by) for label in runs)
    assert f"median {now['held_leap']}% against {before['held_leap']}%" in flat
    assert f"({now['in_leap']}% against {before['in_leap']}%)" in flat


@pytest.mark.parametrize(("by", "name", "what"), [
    ("hardware_type", "hardware", "A new\nhardware type loses"),
    ("model_family", "family", "An\nunseen model family loses"),
])
def test_production_held_out_paragraphs_quote_the_kept_runs(by, name, what):
    """The production held-out paragraphs quote the summary and per-group table of their kept run."""
    import pandas as pd
    from held_out_figure import markdown, summary, versus

    table = pd.read_csv(DOCS / "results-data" / "method-levers" / f"held_out_production_{name}.csv")
    table = table[table["by"] == by]
    stats = summary(table, by).loc["leap"]
    page = (DOCS / "results.md").read_text()
    flat = " ".join(page.split(what)[1].split("\n\n")[0].split())
    assert (f"a median of {stats['median']} points within +-20% (mean {stats['mean']}, from "
            f"{stats['least']} to {stats['worst']})") in flat
    below = int(stats["groups"] - stats["above_published"])
    assert f"for {below} of {int(stats['groups'])}" in flat
    both = versus(table, by)
    assert f"{both['in_leap']}% accurate in distribution and {both['held_leap']}%" in flat
    single = summary(table, by).loc["single_lightgbm"]
    assert (f"a median of {single['median']} points (mean {single['mean']}, from "
            f"{single['least']} to {single['worst']})") in flat
    assert f"{both['in_single']}% in distribution and {both['held_single']}% on the held-out" in flat
    assert f"more accurate on the held-out {what.split()[-2]} for {both['higher']} of the 24" in flat
    assert markdown(table, by) in page
    assert (DOCS / "img" / f"held_out_production_{name}.svg").exists()

def _mean_learned_row(name: str) -> list[str]:
    """The leap / learned / throughput-per-cost row of a kept run's mean over seeds."""
    text = (DOCS / "results-data" / "method-levers" / name).read_text()
    mean = text[text.index("mean over seeds"):]
    return next([c.strip() for c in line.strip("|").split("|")] for line in mean.splitlines()
                if line.startswith("| leap | learned") and "throughput_per_cost" in line)


def test_memory_floor_override_prose_quotes_the_kept_small_runs():
    page = " ".join((DOCS / "results.md").read_text().split())  # wrapped lines as one
    percent = lambda share: f"{100 * float(share):.1f}%"  # noqa: E731
    base = _mean_learned_row("placement_small_seeds012345_most_likely_floors_whole.md")
    strict = _mean_learned_row("placement_small_seeds012345_memory_floor_override_0999.md")
    loose = _mean_learned_row("placement_small_seeds012345_memory_floor_override_099.md")
    assert (f"takes regret from {percent(base[5])} to {percent(strict[5])} at {percent(strict[7])} "
            f"infeasible picks against {percent(base[7])}, and 0.99 to {percent(loose[5])} at "
            f"{percent(loose[7])}") in page
    backed = _mean_learned_row("placement_small_seeds012345_memory_floor_override_0999_backed.md")
    assert (f"takes regret from {percent(base[5])} to {percent(backed[5])} at {percent(backed[7])} "
            "infeasible picks") in page



def _mean_feasibility_row(name: str) -> list[str]:
    """The feasibility table row (threshold 0.5) of a kept run's mean over seeds."""
    text = (DOCS / "results-data" / "method-levers" / name).read_text()
    mean = text[text.index("mean over seeds"):]
    return next([c.strip() for c in line.strip("|").split("|")] for line in mean.splitlines()
                if line.startswith("| 0.500 |"))


def test_memory_need_prose_quotes_the_kept_small_runs():
    page = " ".join((DOCS / "results.md").read_text().split())
    percent = lambda share: f"{100 * float(share):.1f}%"  # noqa: E731
    runs = {name: f"placement_small_seeds012345{suffix}.md" for name, suffix in
            (("default", ""), ("need", "_no_measured_need"), ("without", "_no_memory_need"))}
    quality = {name: _mean_feasibility_row(run) for name, run in runs.items()}
    regret = {name: _mean_learned_row(run) for name, run in runs.items()}
    assert (f"it has precision {quality['default'][3]} and recall {quality['default'][4]} for "
            f"\"fits\", and keeps out {percent(quality['default'][5])} of the infeasible "
            "candidates") in page
    single = next([c.strip() for c in line.strip("|").split("|")] for line in
                  (DOCS / "results-data" / "method-levers" / runs["without"]).read_text().split(
                      "mean over seeds")[1].splitlines()
                  if line.startswith("| single_lightgbm | learned"))
    without, need = regret["without"], regret["need"]
    assert (f"gave {percent(without[5])} regret (single model {percent(single[5])}) at "
            f"{percent(without[7])} infeasible picks, with precision {quality['without'][3]} and "
            f"recall {quality['without'][4]}") in page
    assert (f"gave {percent(need[5])} at {percent(need[7])}, precision {quality['need'][3]} and "
            f"recall {quality['need'][4]}") in page
    points = lambda a, b: f"{100 * (float(a) - float(b)):.1f}"  # noqa: E731
    assert (f"the need wins back {points(quality['need'][4], quality['without'][4])} points of "
            f"recall, {points(without[5], need[5])} points of regret") in page
    default = regret["default"]
    assert (f"The job's own peak adds {points(quality['default'][4], quality['need'][4])} points "
            f"of recall and takes {points(need[5], default[5])} points of regret and "
            f"{points(need[7], default[7])} of infeasible picks off that") in page


def test_summary_placement_rows_quote_the_kept_default_runs():
    page = (DOCS / "results.md").read_text()
    percent = lambda share: f"{100 * float(share):.1f}%"  # noqa: E731

    def learned(name, policy, objective="expected_throughput_per_cost"):  # the default's row
        return percent(_kept_objective_row(name, policy, "learned", objective)[5])

    def default(name, policy):  # the default of now ranks by the mean; the single model has none
        return learned(name, policy, MEAN if policy == "leap" else "expected_throughput_per_cost")

    # the default's rows are of its runs with hardware copies; the single model's are of the
    # runs before them, which the copies do not touch
    small = ("placement_small_seeds012345_hardware_copies.md",
             "placement_small_seeds012345_cold_start.md")
    # production: the run of the default of now (the faster rate), ranked by the mean; the
    # single model's of the run before it, which the rate does not touch
    together = [percent(_kept_seed_row(_RATE_RUN if policy == "leap" else _MEAN_RUN, seed, policy,
                                       "learned",
                                       MEAN if policy == "leap" else "expected_throughput_per_cost")[5])
                for policy in ("leap", "single_lightgbm") for seed in (0, 1, 2)]
    assert (f"| placement regret with learned feasibility (`small`, six fleets) | "
            f"{default(_MEAN_SMALL, 'leap')} | {default(_MEAN_SMALL, 'single_lightgbm')} |") in page
    assert (f"| the same on `production` (seeds 0, 1 and 2, three nights each; a job no type fits "
            f"on its likeliest) | {', '.join(together[:3])} | {', '.join(together[3:])} |") in page
    assert (f"the copies take regret\nfrom {learned(small[1], 'leap')} to "
            f"**{learned(small[0], 'leap')}**") in page


def test_third_production_fleet_sentence_quotes_its_kept_run():
    """The seed-2 placement sentence of docs/results.md quotes its kept run."""
    flat = " ".join((DOCS / "results.md").read_text().split())
    name = "placement_production_seed2_most_likely_hardware_copies.md"
    percent = lambda share: f"{100 * float(share):.1f}%"  # noqa: E731
    learned = _kept_objective_row(name, "leap", "learned", "expected_throughput_per_cost")
    true = _kept_objective_row(name, "leap", "true")
    assert (f"gives {percent(learned[5])} (p90 {percent(learned[6])}) at {percent(learned[7])} "
            f"infeasible picks, and {percent(true[5])} with true feasibility") in flat
    text = (DOCS / "results-data" / "method-levers" / name).read_text()
    scores = next(line for line in text.splitlines() if line.startswith("| 0.500 |"))
    precision, recall = (float(c) for c in scores.strip("|").split("|")[3:5])
    assert f"precision and recall {precision:.3f} and {recall:.3f}" in flat
    coverage = {row.split("|")[2].strip(): row.split("|")[5].strip()
                for row in text.splitlines() if row.startswith("| leap |") and row.count("|") == 6}
    assert (f"its intervals cover {percent(coverage['all'])} (new jobs "
            f"{percent(coverage['job_new'])})") in flat
    single = "placement_production_seed2_most_likely_single.md"
    learned = _kept_objective_row(single, "single_lightgbm", "learned", "expected_throughput_per_cost")
    true = _kept_objective_row(single, "single_lightgbm", "true")
    assert (f"gives {percent(learned[5])} at {percent(learned[7])} infeasible picks, and "
            f"{percent(true[5])} with true feasibility") in flat


#: The kept production placement run of the default that ranks a job's candidates together.
_CARRIED_MISS_RUN = "placement_production_seeds012_carried_miss.md"
_MEAN_RUN = "placement_production_seeds012_mean_objective.md"
_RATE_RUN = "placement_production_seeds012_base_rate.md"
_MEAN_SMALL = "placement_small_seeds012345_mean_objective.md"
MEAN = "mean_throughput_per_cost"
_CARRIED_SMALL = "placement_small_seeds012345_carried_miss.md"


def _kept_seed_row(name, seed, policy, feasibility, objective="throughput_per_cost"):
    """The cells of one seed's row of a kept placement run of several seeds."""
    text = (DOCS / "results-data" / "method-levers" / name).read_text()
    text = text[text.index(f"seed {seed}\n"):]
    return next([c.strip() for c in line.strip("|").split("|")] for line in text.splitlines()
                if line.startswith(f"| {policy} | {feasibility} |") and f"| {objective} |" in line)


def test_carried_miss_table_quotes_its_kept_run():
    """Each cell of the table of the default that ranks a job's candidates together is its run's."""
    page = (DOCS / "results.md").read_text()
    percent = lambda share: f"{100 * float(share):.1f}%"  # noqa: E731
    rows = {("leap", "learned, the default objective"): ("leap", "learned", "expected_throughput_per_cost"),
            ("leap", "submission (a bound for new jobs)"): ("leap", "submission", "expected_throughput_per_cost"),
            ("leap", "true (a bound)"): ("leap", "true", "throughput_per_cost"),
            ("single_lightgbm", "learned, the default objective"):
                ("single_lightgbm", "learned", "expected_throughput_per_cost"),
            ("single_lightgbm", "true (a bound)"): ("single_lightgbm", "true", "throughput_per_cost")}
    for (policy, label), (kept_policy, source, objective) in rows.items():
        cells = [percent(_kept_seed_row(_CARRIED_MISS_RUN, seed, kept_policy, source, objective)[5])
                 for seed in (0, 1, 2)]
        assert f"| {policy} | {label} | {' | '.join(cells)} |" in page, (policy, label, cells)
    mean = _kept_objective_row(_CARRIED_MISS_RUN, "leap", "learned", "expected_throughput_per_cost")
    flat = " ".join(page.split())
    assert f"falls from 5.3% to {percent(mean[5])} (p90 {percent(mean[6])})" in flat


def _kept_objective_row(name, policy, feasibility, objective="throughput_per_cost"):
    """The cells of a kept placement run's row (the mean over seeds where there is one)."""
    text = (DOCS / "results-data" / "method-levers" / name).read_text()
    text = text[text.index("mean over seeds"):] if "mean over seeds" in text else text
    return next([c.strip() for c in line.strip("|").split("|")] for line in text.splitlines()
                if line.startswith(f"| {policy} | {feasibility} |") and f"| {objective} |" in line)


#: The rows of the cold-start placement block: (policy, feasibility, objective).
_COLD_START_PLACEMENT_ROWS = (("leap", "learned", "expected_throughput_per_cost"),
                              ("leap", "true", "throughput_per_cost"),
                              ("single_lightgbm", "learned", "expected_throughput_per_cost"))
#: Its fleets -> (the kept run with the copies, the kept run before them).
_COLD_START_PLACEMENT_RUNS = {
    "`small`, six fleets": ("placement_small_seeds012345_cold_start.md",
                            "placement_small_seeds012345_rule_factor.md"),
    "`production`, seed 0": ("placement_production_seed0_most_likely_cold_start.md",
                             "placement_production_seed0_most_likely_rule_factor.md"),
    "`production`, seed 1": ("placement_production_seed1_most_likely_cold_start.md",
                             "placement_production_seed1_most_likely_default_of_now.md"),
}


def _cold_start_placement_lines():
    """The table rows of the cold-start placement block, from the kept runs."""
    percent = lambda share: f"{100 * float(share):.1f}%"  # noqa: E731
    lines = []
    for fleet, (now, before) in _COLD_START_PLACEMENT_RUNS.items():
        for policy, feasibility, objective in _COLD_START_PLACEMENT_ROWS:
            cells = _kept_objective_row(now, policy, feasibility, objective)
            label = "true (a bound)" if feasibility == "true" else feasibility
            infeasible = "0%" if feasibility == "true" else percent(cells[7])
            earlier = percent(_kept_objective_row(before, policy, feasibility, objective)[5])
            lines.append(f"| {fleet} | {policy} | {label} | {objective.replace('_', ' ')} | "
                         f"{percent(cells[5])} | {percent(cells[6])} | {infeasible} | {earlier} |")
    return lines


def test_placement_cold_start_block_quotes_its_kept_runs():
    """Each row of the cold-start placement block is a row of the kept run it names, and so is "before"."""
    page = (DOCS / "results.md").read_text()
    block = page.split("**With the cold-start copies.**")[1].split("**The default of now.**")[0]
    lines = _cold_start_placement_lines()
    assert len(lines) == 9
    for line in lines:
        assert line in block, line
    prose = " ".join(block.split())
    assert f"Over the two `production` fleets {_pooled_production_cold_start()}" in prose


def _pooled_production_cold_start():
    """The two production fleets' pooled regret and infeasible picks with the copies, as quoted."""
    percent = lambda share: f"{100 * float(share):.1f}%"  # noqa: E731
    runs = [now for fleet, (now, _) in _COLD_START_PLACEMENT_RUNS.items() if "production" in fleet]

    def pooled(policy, column):
        rows = [_kept_objective_row(name, policy, "learned", "expected_throughput_per_cost")
                for name in runs]
        jobs = [int(r[4]) for r in rows]
        return sum(jobs), percent(sum(float(r[column]) * n for r, n in zip(rows, jobs, strict=True))
                                  / sum(jobs))

    jobs, leap = pooled("leap", 5)
    return (f"({jobs:,} jobs) the default's mean regret is {leap} at "
            f"{pooled('leap', 7)[1]} infeasible picks, against {pooled('single_lightgbm', 5)[1]} "
            "for the single model")


def test_placement_lead_block_quotes_the_kept_runs_of_the_default():
    """Each row of "The default of now" is a row of the kept run it names, and so is "before"."""
    page = (DOCS / "results.md").read_text()
    block = page.split("**The default of now.**")[1].split("**The shared expert samples its")[0]
    percent = lambda share: f"{100 * float(share):.1f}%"  # noqa: E731
    runs = {"`small`, six fleets": ("placement_small_seeds012345_rule_factor.md",
                                    "placement_small_seeds012345_sampled_columns.md"),
            "`production`, seed 0": ("placement_production_seed0_most_likely_rule_factor.md",
                                     "placement_production_seed0_most_likely_sampled_columns.md")}
    checked = 0
    for fleet, (now, before) in runs.items():
        for policy, feasibility, objective in (
                ("leap", "learned", "expected_throughput_per_cost"),
                ("leap", "learned", "throughput_per_cost"),
                ("leap", "true", "throughput_per_cost"),
                ("single_lightgbm", "learned", "expected_throughput_per_cost"),
                ("single_lightgbm", "learned", "throughput_per_cost")):
            cells = _kept_objective_row(now, policy, feasibility, objective)
            mean = percent(cells[5])
            if (policy, feasibility, objective) == ("leap", "learned", "expected_throughput_per_cost"):
                mean = f"**{mean}**"
            infeasible = "0%" if feasibility == "true" else percent(cells[7])
            label = "true (a bound)" if feasibility == "true" else feasibility
            earlier = percent(_kept_objective_row(before, policy, feasibility)[5])
            line = (f"| {fleet} | {policy} | {label} | {objective.replace('_', ' ')} | {mean} | "
                    f"{percent(cells[6])} | {infeasible} | {earlier} |")
            assert line in block, line
            checked += 1
    assert checked == 10


def test_placement_column_sampling_block_quotes_its_kept_runs():
    """Each row of the column-sampling block is a row of the kept run it names, and so is "before"."""
    page = (DOCS / "results.md").read_text()
    block = page.split("**The shared expert samples its")[1].split("**The earlier runs.**")[0]
    percent = lambda share: f"{100 * float(share):.1f}%"  # noqa: E731
    kept = DOCS / "results-data" / "method-levers"
    runs = {"`small`, six fleets": ("placement_small_seeds012345_sampled_columns.md",
                                    "placement_small_seeds012345.md"),
            "`production`, seed 0": ("placement_production_seed0_most_likely_sampled_columns.md",
                                     "placement_production_seed0_most_likely.md")}

    def row(name, policy, feasibility):
        text = (kept / name).read_text()
        text = text[text.index("mean over seeds"):] if "mean over seeds" in text else text
        return next([c.strip() for c in line.strip("|").split("|")] for line in text.splitlines()
                    if line.startswith(f"| {policy} | {feasibility} |")
                    and "throughput_per_cost" in line)

    checked = 0
    for fleet, (now, before) in runs.items():
        for policy, feasibility, label in (("leap", "learned", "learned"),
                                           ("leap", "true", "true (a bound)"),
                                           ("single_lightgbm", "learned", "learned")):
            cells = row(now, policy, feasibility)
            mean = percent(cells[5])
            if policy == "leap" and feasibility == "learned":
                mean = f"**{mean}**"
            infeasible = "0%" if feasibility == "true" else percent(cells[7])
            line = (f"| {fleet} | {policy} | {label} | {mean} | {percent(cells[6])} | {infeasible} | "
                    f"{percent(row(before, policy, feasibility)[5])} |")
            assert line in block, line
            checked += 1
    assert checked == 6

def _kept_placement_rows(name: str) -> list[list[str]]:
    """The rows of the first table of a kept placement run (cells as text)."""
    text = (DOCS / "results-data" / "method-levers" / name).read_text()
    lines = [line for line in text.splitlines() if line.startswith("| leap")]
    return [[cell.strip() for cell in line.strip("|").split("|")] for line in lines]


def _kept_feasibility_rows(name: str) -> dict[str, tuple[str, str]]:
    """Threshold -> (precision, recall) of the kept run's feasibility table."""
    text = (DOCS / "results-data" / "method-levers" / name).read_text()
    rows = {}
    for line in text.splitlines():
        cells = [cell.strip() for cell in line.strip("|").split("|")]
        if len(cells) == 6 and cells[0].startswith("0."):
            rows[cells[0]] = (cells[3], cells[4])
    return rows


def test_feasibility_lever_table_quotes_the_kept_runs():
    page = (DOCS / "results.md").read_text()
    table = page[page.index("| feasibility model | precision / recall"):]
    table = table[:table.index("\n\n")]
    cells = {row[0]: row[1:] for row in
             ([c.strip() for c in line.strip("|").split("|")] for line in table.splitlines()[2:])}
    percent = lambda share: f"{100 * float(share):.1f}%"  # noqa: E731
    sweep = {(r[2], r[3]): r for r in _kept_placement_rows("placement_production_seed0_thresholds.md")
             if r[1] == "learned"}
    quality = _kept_feasibility_rows("placement_production_seed0_thresholds.md")
    for threshold, label in (("0.500", "floors kept whole, threshold 0.5"),
                             ("0.350", "floors kept whole, threshold 0.35"),
                             ("0.200", "floors kept whole, threshold 0.2")):
        row = sweep[(threshold, "throughput_per_cost")]
        precision, recall = quality[threshold]
        assert cells[label] == [f"{precision} / {recall}", percent(row[5]), percent(row[7])]
    ratio = {r[3]: r for r in _kept_placement_rows("placement_production_seed0_memory_floor_ratio_075.md")
             if r[1] == "learned"}["throughput_per_cost"]
    precision, recall = _kept_feasibility_rows("placement_production_seed0_memory_floor_ratio_075.md")["0.500"]
    assert cells["floors kept whole at 0.75 of their memory"] == [f"{precision} / {recall}", percent(ratio[5]),
                                                       percent(ratio[7])]
    for label, name in (("floors overridden where the classifier alone gives >= 0.999", "0999"),
                        ("floors overridden where the classifier alone gives >= 0.99", "099"),
                        ("floors, overridden at >= 0.999 where the family backs it (the default "
                         "without peak memory)", "0999_backed"),
                        ("**default**: floors, overridden at >= 0.9 where the memory need (the "
                         "job's own earlier peak where it has one) leaves headroom", None),
                        ("floors, overridden at >= 0.9 where the predicted memory need leaves "
                         "headroom (`--no-measured-need`)", "no_measured_need")):
        kept = ("placement_production_seed0_most_likely_no_measured_need.md"
                if name == "no_measured_need"
                else f"placement_production_seed0_memory_floor_override_{name}.md" if name
                else "placement_production_seed0_most_likely.md")
        row = {r[3]: r for r in _kept_placement_rows(kept) if r[1] == "learned"}["throughput_per_cost"]
        precision, recall = _kept_feasibility_rows(kept)["0.500"]
        assert cells[label] == [
            f"{precision} / {recall}", percent(row[5]), percent(row[7])]
    floors = {r[3]: r for r in _kept_placement_rows("placement_production_seed0_no_memory_floors.md")
              if r[1] == "learned"}
    precision, recall = _kept_feasibility_rows("placement_production_seed0_no_memory_floors.md")["0.500"]
    plain, utility = floors["throughput_per_cost"], floors["expected_utility"]
    assert cells["without memory floors"] == [
        f"{precision} / {recall}",
        f"{percent(plain[5])} (expected utility {percent(utility[5])})",
        f"{percent(plain[7])} (expected utility {percent(utility[7])})",
    ]


def test_production_most_likely_table_quotes_the_kept_runs():
    page = (DOCS / "results.md").read_text()
    table = page[page.index('| policy, `if_none_fit="most_likely"`'):]
    table = table[:table.index("\n\n")]
    cells = {(row[0], row[1]): row[2:5] for row in
             ([c.strip().strip("*") for c in line.strip("|").split("|")]
              for line in table.splitlines()[2:])}
    percent = lambda share: f"{100 * float(share):.1f}%"  # noqa: E731
    names = {"throughput_per_cost": "throughput per cost", "expected_utility": "expected utility",
             "lower_quantile_per_cost": "lower quantile per cost"}
    for kept, suffix in (("placement_production_seed0_most_likely.md", ""),
                         ("placement_production_seed0_most_likely_no_measured_need.md",
                          ", the memory need alone"),
                         ("placement_production_seed0_most_likely_no_memory_need.md",
                          ", without the memory need")):
        text = (DOCS / "results-data" / "method-levers" / kept).read_text()
        for line in text.splitlines():
            row = [c.strip() for c in line.strip("|").split("|")]
            if len(row) == 9 and row[1] == "learned":
                key = (row[0] + suffix, names[row[3]])
                if key in cells:
                    assert cells.pop(key) == [percent(row[5]), percent(row[6]), percent(row[7])], key
    assert not cells  # every row of the table came from a kept run


def test_two_production_fleets_table_quotes_the_kept_runs():
    page = (DOCS / "results.md").read_text()
    table = page[page.index(
        "| fleet | objective | default | the memory need alone | without the memory need |"):]
    table = table[:table.index("\n\n")]
    percent = lambda share: f"{100 * float(share):.1f}%"  # noqa: E731
    names = {"throughput per cost": "throughput_per_cost", "expected utility": "expected_utility"}
    lines = table.splitlines()[2:]
    assert len(lines) == 4
    for line in lines:
        fleet, objective, default, need, without = (c.strip() for c in line.strip("|").split("|"))
        for cell, suffix in ((default, ""), (need, "_no_measured_need"),
                             (without, "_no_memory_need")):
            kept = f"placement_production_{fleet.replace(' ', '')}_most_likely{suffix}.md"
            row = next(r for r in _kept_placement_rows(kept)
                       if r[1] == "learned" and r[3] == names[objective])
            assert cell == f"{percent(row[5])}, {percent(row[7])}", (fleet, objective, suffix)


def test_own_peak_prose_quotes_the_kept_production_runs():
    page = " ".join((DOCS / "results.md").read_text().split())
    quality = {}
    falls, fewer = [], []
    for seed in (0, 1):
        runs = {}
        for suffix in ("", "_no_measured_need"):
            name = f"placement_production_seed{seed}_most_likely{suffix}.md"
            quality[seed, suffix] = _kept_feasibility_rows(name)["0.500"]
            runs[suffix] = {r[3]: r for r in _kept_placement_rows(name) if r[1] == "learned"}
        for objective, row in runs[""].items():
            before = runs["_no_measured_need"][objective]
            falls.append(round(100 * (float(before[5]) - float(row[5])), 1))
            fewer.append(round(100 * (float(before[7]) - float(row[7])), 1))
    (p0, r0), (q0, s0) = quality[0, ""], quality[0, "_no_measured_need"]
    (p1, r1), (q1, s1) = quality[1, ""], quality[1, "_no_measured_need"]
    assert f"recall rises from {s0} (the need alone) to {r0} at precision {p0} ({q0})" in page
    assert f"on seed 1, {s1} to {r1} at {p1} ({q1})" in page
    assert (f"Regret falls by {min(falls):.1f} to {max(falls):.1f} points and infeasible picks by "
            f"{min(fewer):.1f} to {max(fewer):.1f}") in page
    text = (DOCS / "results-data" / "method-levers" / "placement_production_seed0_most_likely.md").read_text()
    kept_out = next(line for line in text.splitlines() if line.startswith("| 0.500 | 7200"))
    share = float(kept_out.strip("|").split("|")[5])
    assert f"keeps out {100 * share:.1f}% of the infeasible candidates" in page


def test_small_placement_table_quotes_the_kept_mean_over_six_fleets():
    page = (DOCS / "results.md").read_text()
    table = page[page.index("| policy | feasibility | objective | mean regret | p90 regret | "
                            "infeasible picks |\n"):]
    table = table[:table.index("\n\n")]
    text = (DOCS / "results-data" / "method-levers" / "placement_small_seeds012345.md").read_text()
    kept = {}
    for line in text[text.index("mean over seeds"):].splitlines():
        row = [c.strip() for c in line.strip("|").split("|")]
        if len(row) == 9 and row[1] in ("learned", "true", "none"):
            kept[row[0], row[1], row[3].replace("_", " ")] = row
    _assert_rows_quote(table, kept, 10)


def _assert_rows_quote(table: str, kept: dict, n_rows: int) -> None:
    """Each of the ``n_rows`` rows of a placement table (policy, feasibility, objective, then mean
    regret, p90 regret and infeasible picks) quotes its row of ``kept``."""
    percent = lambda share: ("100%" if float(share) == 1 else "0%" if float(share) == 0  # noqa: E731
                             else f"{100 * float(share):.1f}%")
    lines = table.splitlines()[2:]
    assert len(lines) == n_rows
    for line in lines:
        policy, feasibility, objective, *cells = (c.strip().strip("*") for c in line.strip("|").split("|"))
        row = kept[policy, feasibility.split(" ")[0], objective]
        assert cells[:3] == [percent(row[5]), percent(row[6]), percent(row[7])], (policy, feasibility)


def test_held_out_placement_table_quotes_the_kept_runs():
    page = (DOCS / "results.md").read_text()
    table = page[page.index("| leap | learned, throughput per cost | learned, expected utility |"):]
    cells = {row[0]: row[1:] for row in ([c.strip() for c in line.strip("|").split("|")]
                                         for line in table[:table.index("\n\n")].splitlines()[2:])}
    percent = lambda share: "0%" if float(share) == 0 else f"{100 * float(share):.1f}%"  # noqa: E731
    for name, label in (("placement_small_seed0_held_out_H100.md", "type held out"),
                        ("placement_small_seed0.md", "type trained on")):
        rows = {(r[1], r[3]): r for r in _kept_placement_rows(name)}
        picked = [rows["learned", "throughput_per_cost"], rows["learned", "expected_utility"],
                  rows["true", "throughput_per_cost"]]
        regret = next(v for k, v in cells.items() if k.startswith(f"mean regret, {label}"))
        infeasible = cells[f"infeasible picks, {label}"]
        assert regret == [percent(r[5]) for r in picked], label
        assert infeasible == [percent(r[7]) for r in picked], label


def test_production_placement_table_quotes_the_kept_run():
    page = (DOCS / "results.md").read_text()
    table = page[page.index("| policy | feasibility | objective | mean regret | p90 regret | "
                            "infeasible picks | target |\n"):]
    table = table[:table.index("\n\n")]
    kept = {(r[0], r[1], r[3].replace("_", " ")): r for r in
            ([c.strip() for c in line.strip("|").split("|")] for line in
             (DOCS / "results-data" / "method-levers" / "placement_production_seed0.md")
             .read_text().splitlines()) if len(r) == 9}
    _assert_rows_quote(table, kept, 7)


def test_memory_need_quantile_prose_quotes_the_kept_runs():
    page = " ".join((DOCS / "results.md").read_text().split())
    percent = lambda share: f"{100 * float(share):.1f}%"  # noqa: E731

    def per_seed(name):
        text = (DOCS / "results-data" / "method-levers" / name).read_text()
        rows = []
        for seed in (1, 2):
            block = text.split(f"seed {seed}\n", 1)[1].split("\nseed ", 1)[0]
            rows.append(next([c.strip() for c in line.strip("|").split("|")]
                             for line in block.splitlines()
                             if line.startswith("| leap | learned") and "throughput_per_cost" in line))
        return (f"{percent(rows[0][5])} and {percent(rows[1][5])}",
                f"{percent(rows[0][7])} and {percent(rows[1][7])}")

    default = per_seed("placement_small_seeds012345.md")
    low = per_seed("placement_small_seeds12_memory_need_quantile_08.md")
    high = per_seed("placement_small_seeds12_memory_need_quantile_095.md")
    assert f"the default gave {default[0]} regret at {default[1]} infeasible picks" in page
    assert f"0.8 gave {low[0]} at {low[1]}, and 0.95 {high[0]} at {high[1]}" in page
    production = {r[3]: r for r in _kept_placement_rows(
        "placement_production_seed0_most_likely_memory_need_quantile_095.md") if r[1] == "learned"}
    row = production["throughput_per_cost"]
    assert (f"most_likely --memory-need-quantile 0.95`, kept in "
            f"`placement_production_seed0_most_likely_memory_need_quantile_095.md`) gives the same "
            f"{percent(row[5])} at {percent(row[7])}") in page


def test_regret_gap_table_quotes_the_kept_run():
    page = (DOCS / "results.md").read_text()
    kept = (DOCS / "results-data" / "method-levers" / "regret_gap_production_seed0.md").read_text()
    assert kept.strip() in page
    section = page[page.index("**Where the rest comes from.**"):]
    rows = {line.split("|")[1].strip(): [c.strip() for c in line.strip("|").split("|")[1:]]
            for line in kept.strip().splitlines()[2:]}
    total, new = float(rows["all"][4]), float(rows["new"][4])
    assert f"({rows['new'][4]}\nof {rows['all'][4]} points)" in section
    assert f"{total:.2f} points between learned" in section
    # the regret left with every seen job's gap closed
    left = float(rows["all"][1]) - float(rows["other_configuration"][4]) - float(
        rows["this_configuration"][4])
    assert f"would leave {left:.1f}%" in section
    assert new / total > 0.5  # "two thirds of the gap" is what the run shows
    # the same split with the column-sampling default, and what closing parts of it would leave
    now = (DOCS / "results-data" / "method-levers"
           / "regret_gap_production_seed0_sampled_columns.md").read_text()
    assert now.strip() in page
    cells = {line.split("|")[1].strip(): [c.strip() for c in line.strip("|").split("|")[1:]]
             for line in now.strip().splitlines()[2:]}
    flat = " ".join(section.split())
    assert f"({cells['new'][2]}% against {rows['new'][2]}% with true feasibility)" in flat
    assert f"more of what remains is the gap, {cells['all'][4]} points" in flat
    seen = (float(cells["all"][1]) - float(cells["other_configuration"][4])
            - float(cells["this_configuration"][4]))
    alone = float(cells["all"][1]) - float(cells["new"][4])
    assert f"every job the log has seen would leave {seen:.1f}%; on new jobs alone, {alone:.1f}%" in flat
    # and with the default of now
    latest = (DOCS / "results-data" / "method-levers"
              / "regret_gap_production_seed0_expected_objective.md").read_text()
    assert latest.strip() in page
    last = {line.split("|")[1].strip(): [c.strip() for c in line.strip("|").split("|")[1:]]
            for line in latest.strip().splitlines()[2:]}
    seen = (float(last["all"][1]) - float(last["other_configuration"][4])
            - float(last["this_configuration"][4]))
    assert f"every job the log has seen would now leave {seen:.1f}%" in flat
    assert f"on new jobs alone, {float(last['all'][1]) - float(last['new'][4]):.1f}%." in flat
    assert f"the gap from {cells['all'][4]} to {last['all'][4]} points" in flat
    assert f"New jobs still carry {last['new'][4]} of it, {last['new'][6]} in" in flat


def test_the_need_product_paragraph_quotes_its_kept_runs():
    """The need-model table and the placement figures of "Tried, not kept: the FLOPs of a step"."""
    page = (DOCS / "results.md").read_text()
    block = page.split("**Tried, not kept: the FLOPs of a step")[1].split("**The shared expert")[0]
    kept = DOCS / "results-data" / "method-levers"
    percent = lambda share: f"{100 * float(share):.1f}%"  # noqa: E731
    checked = 0
    for fleet in ("small", "production"):
        rows = {}
        for line in (kept / f"need_model_error_{fleet}_seed0.md").read_text().splitlines():
            cells = [c.strip() for c in line.strip("|").split("|")]
            if len(cells) == 5 and cells[1] in ("default", "with products"):
                rows[cells[0], cells[1]] = cells
        for label, slice_ in (("all", "all"), ("new jobs", "new jobs")):
            before, after = rows[slice_, "default"], rows[slice_, "with products"]
            line = (f"| `{fleet}` | {label} | {before[3]} -> {after[3]} | "
                    f"{percent(before[4])} -> {percent(after[4])} |")
            assert line in block, line
            checked += 1
        rare = "new jobs, model type under 30 peaks"
        before, after = rows[rare, "default"], rows[rare, "with products"]
        assert (f"under 30 peaks ({float(before[2]):.0f} a night) | {before[3]} -> {after[3]} | "
                f"{percent(before[4])} -> {percent(after[4])} |") in block
    assert checked == 4
    now = "placement_production_seed0_most_likely_rule_factor.md"
    tried = "placement_production_seed0_most_likely_need_products.md"
    assert f"kept in `{tried}`" in block
    objective = "expected_throughput_per_cost"
    leap, single = (_kept_objective_row(tried, p, "learned", objective) for p in ("leap", "single_lightgbm"))
    leap_now, single_now = (_kept_objective_row(now, p, "learned", objective)
                            for p in ("leap", "single_lightgbm"))
    assert (f"{percent(leap[5])} regret by the default objective (p90 {percent(leap[6])}) at\n"
            f"{percent(leap[7])} infeasible\npicks, against {percent(leap_now[5])} at "
            f"{percent(leap_now[7])}").replace("\n", " ") in " ".join(block.split())
    assert f"the single model {percent(single[5])} against {percent(single_now[5])}" in " ".join(
        block.split())


def test_the_second_production_fleet_paragraph_quotes_its_kept_run():
    page = " ".join((DOCS / "results.md").read_text().split())
    block = page.split("**A second `production` fleet.**")[1].split("**Tried, not kept")[0]
    percent = lambda share: f"{100 * float(share):.1f}%"  # noqa: E731
    seed0 = "placement_production_seed0_most_likely_rule_factor.md"
    seed1 = "placement_production_seed1_most_likely_default_of_now.md"
    objective = "expected_throughput_per_cost"
    leap = _kept_objective_row(seed1, "leap", "learned", objective)
    assert f"leap **{percent(leap[5])}** by the default objective (p90 {percent(leap[6])})" in block
    assert f"at {percent(leap[7])} infeasible picks" in block
    assert (f"{percent(_kept_objective_row(seed1, 'leap', 'learned')[5])} by throughput per cost, "
            f"{percent(_kept_objective_row(seed1, 'leap', 'true')[5])} with true feasibility") in block
    single = _kept_objective_row(seed1, "single_lightgbm", "learned", objective)
    assert f"the single model {percent(single[5])}" in block

    def pooled(policy, column):
        rows = [_kept_objective_row(name, policy, "learned", objective) for name in (seed0, seed1)]
        jobs = [int(r[4]) for r in rows]
        return percent(sum(float(r[column]) * n for r, n in zip(rows, jobs, strict=True)) / sum(jobs))

    text = (DOCS / "results-data" / "method-levers" / seed1).read_text()
    scores = next(line for line in text.splitlines() if line.startswith("| 0.500 |")).split("|")
    assert f"Precision and recall at 0.5 on seed 1: {scores[4].strip()} and {scores[5].strip()}" in block
    coverage = {line.split("|")[2].strip(): line.split("|")[5].strip()
                for line in text.splitlines() if line.startswith("| leap | ")}
    assert (f"intervals cover {percent(coverage['all'])} (new jobs "
            f"{percent(coverage['job_new'])})") in block
    jobs = sum(int(_kept_objective_row(n, "leap", "learned", objective)[4]) for n in (seed0, seed1))
    assert (f"Over the two fleets ({jobs:,} jobs) the default's mean regret is "
            f"**{pooled('leap', 5)}** at {pooled('leap', 7)} infeasible picks, against "
            f"{pooled('single_lightgbm', 5)} for the single model") in block


def test_cold_start_prose_quotes_the_kept_real_measurement_run():
    """docs/method.md's cold-start bullet quotes the kept run on the real measurements."""
    import json

    import pandas as pd

    run = json.loads((DOCS / "results-data" / "method-levers" / "public_cold_start.json").read_text())
    rows = pd.DataFrame(run["summary"])
    rows = rows[rows["source"] == "all"].set_index(["protocol", "model"])

    def percent(protocol, model, column):
        return f"{100 * rows.loc[(protocol, model), column]:.1f}%"

    page = " ".join((DOCS / "method.md").read_text().split())
    assert (f"({percent('jobs', 'leap_default', 'within_20')} against "
            f"{percent('jobs', 'cold_start=0', 'within_20')}, still") in page
    assert (f"({percent('hardware', 'leap_default', 'within_20')} against "
            f"{percent('hardware', 'cold_start=0', 'within_20')})") in page
    assert (f"({percent('hardware', 'leap_default', 'within_10')} against "
            f"{percent('hardware', 'cold_start=0', 'within_10')})") in page


def test_submission_bound_block_quotes_its_kept_run():
    """The "What a new job's memory allows" block of docs/results.md quotes its kept run."""
    page = (DOCS / "results.md").read_text()
    flat = " ".join(page.split())
    name = "placement_production_seeds012_submission_bound.md"
    percent = lambda share: f"{100 * float(share):.1f}%"  # noqa: E731
    labels = {"learned": "learned (the default)", "submission": "submission (a bound for new jobs)",
              "true": "true (a bound)"}
    for feasibility, label in labels.items():
        objective = "throughput_per_cost" if feasibility == "true" else "expected_throughput_per_cost"
        cells = _kept_objective_row(name, "leap", feasibility, objective)
        infeasible = "0%" if feasibility == "true" else percent(cells[7])
        assert (f"| {label} | {percent(cells[5])} | {percent(cells[6])} | {infeasible} |") in page
    # the new jobs of each fleet, from the per-seed tables split by job history
    text = (DOCS / "results-data" / "method-levers" / name).read_text()
    new = {}
    for seed_block in text.split("seed ")[1:4]:
        for line in seed_block.splitlines():
            cells = [c.strip() for c in line.strip("|").split("|")]
            if len(cells) == 10 and cells[4] == "new":
                new.setdefault(cells[1], []).append(percent(cells[6]))
    said = {"learned": "learned feasibility gives", "submission": "the submission bound",
            "true": "true feasibility"}
    for feasibility, words in said.items():
        values = new[feasibility]
        assert len(values) == 3
        assert f"{words} {values[0]}, {values[1]} and {values[2]}" in flat, feasibility


def test_real_measurement_table_is_the_kept_run():
    """Each row of docs/results.md's real-measurement table is a row of the kept benchmark output."""
    kept = (DOCS / "results-data" / "method-levers" / "public_measurements.txt").read_text()
    sections = dict(zip(("jobs", "hardware"), kept.split("## ")[1:], strict=True))
    text = (DOCS / "results.md").read_text()
    section = text[text.index("## Real measurements"):]
    rows = re.findall(r"^\| (jobs|hardware), (\w+) \| (.+) \|$", section, flags=re.M)
    assert len(rows) == 10
    for protocol, source, cells in rows:
        assert f"| {source} | {cells.replace('**', '')} |" in sections[protocol], (protocol, source)
    glance = text[text.index("## At a glance"):text.index("## The default model")]
    jobs, hardware = (re.search(r"^\| all \| [\d,]+ \| ([\d.]+)% / [\d.]+% \| ([\d.]+)% / [\d.]+% \| "
                                r"([\d.]+)% /", sections[p], flags=re.M).groups()
                      for p in ("jobs", "hardware"))
    assert f"jobs never trained on, within +-20% | {jobs[0]}% | {jobs[2]}% | {jobs[1]}% |" in glance
    assert f"hardware type never seen, within +-20% | {hardware[0]}% | {hardware[2]}% | {hardware[1]}% |" in glance


def test_objective_table_quotes_its_kept_run():
    """Each cell of the table of objectives (the mean's block of docs/results.md) is its run's."""
    page = (DOCS / "results.md").read_text()
    percent = lambda share: f"{100 * float(share):.1f}%"  # noqa: E731
    for objective in ("mean_throughput_per_cost", "expected_throughput_per_cost",
                      "throughput_per_cost", "lower_quantile_per_cost", "expected_utility"):
        seeds = [percent(_kept_seed_row(_MEAN_RUN, seed, "leap", "learned", objective)[5])
                 for seed in (0, 1, 2)]
        mean = _kept_objective_row(_MEAN_RUN, "leap", "learned", objective)
        line = next(line for line in page.splitlines() if line.startswith(f"| `{objective}`"))
        assert line.split(" | ")[1:4] == seeds, (objective, seeds)
        assert f"{percent(mean[5])}** ({percent(mean[6])})" in line or \
            f"| {percent(mean[5])} ({percent(mean[6])}) | {percent(mean[7])} |" in line, objective


def test_rate_placement_block_quotes_its_kept_run():
    """The table of the faster rate's placement (docs/results.md) is its kept run's, and the
    run before it's."""
    page = (DOCS / "results.md").read_text()
    percent = lambda share: f"{100 * float(share):.1f}%"  # noqa: E731
    for label, run in (("shared expert at rate 0.2", _RATE_RUN), ("at rate 0.1", _MEAN_RUN)):
        seeds = [percent(_kept_seed_row(run, seed, "leap", "learned", MEAN)[5]) for seed in (0, 1, 2)]
        mean = _kept_objective_row(run, "leap", "learned", MEAN)
        true = _kept_objective_row(run, "leap", "true", "throughput_per_cost")
        line = next(line for line in page.splitlines() if line.startswith(f"| {label}"))
        cells = [c.strip().replace("*", "") for c in line.strip("|").split("|")]
        assert cells[1:4] == seeds, (label, cells, seeds)
        assert cells[4] == f"{percent(mean[5])} ({percent(mean[6])})", (label, cells[4])
        assert cells[5] == percent(mean[7]) and cells[6] == percent(true[5]), (label, cells)


def test_compute_anchor_paragraph_quotes_its_kept_small_runs():
    """The `anchor="compute"` lever's small held-out figures are those of its kept runs."""
    import pandas as pd

    page = " ".join((DOCS / "method.md").read_text().split())
    kept = DOCS / "results-data" / "method-levers"
    figures = {}
    for by in ("hardware", "family"):
        for run in ("compute_anchor", "default_4f72417"):
            drops = pd.read_csv(kept / f"held_out_small_{by}_{run}.csv")["drop_points"]
            figures[by, run] = (f"{drops.median():.1f}", f"{drops.mean():.1f}")
    compute, default = figures["hardware", "compute_anchor"], figures["hardware", "default_4f72417"]
    assert (f"a new hardware type loses a median of {compute[0]} points (mean {compute[1]}) "
            f"against the default's {default[0]} ({default[1]})") in page
    compute, default = figures["family", "compute_anchor"], figures["family", "default_4f72417"]
    assert (f"the median drop rises from {default[0]} points (mean {default[1]}) to "
            f"{compute[0]} ({compute[1]})") in page


def test_small_default_rerun_paragraph_and_glance_rows_quote_its_kept_runs():
    """The default held out again on small at 4f72417: paragraph and at-a-glance rows."""
    import pandas as pd
    from held_out_figure import summary, versus

    text = (DOCS / "results.md").read_text()
    flat = " ".join(text.split("**The same default held out again on `small`, at `4f72417`**")[1]
                    .split("\n\n")[0].split())
    glance = text[text.index("## At a glance"):text.index("## The default model")]
    kept = DOCS / "results-data" / "method-levers"
    for by, name, row in (("model_family", "family", "an unseen model family (`small`)"),
                          ("hardware_type", "hardware", "a new hardware type (`small`)")):
        run = pd.read_csv(kept / f"held_out_small_{name}_default_4f72417.csv")
        stats, both = summary(run, by).loc["leap"], versus(run, by)
        assert (f"{stats['median']} points (mean {stats['mean']}, from {stats['least']} to "
                f"{stats['worst']}, above the published") in flat, name
        assert f"for {int(stats['above_published'])} of {int(stats['groups'])}), at" in flat, name
        assert f"at {both['held_leap']}% " in flat and f"and {both['in_leap']}% in distribution" in flat
        assert f"| {row}, median points lost (mean) | {stats['median']} ({stats['mean']});" in glance


def test_compute_anchor_production_family_paragraph_quotes_its_kept_run():
    """Every production family held out with anchor="compute", against the default's run."""
    import pandas as pd
    from held_out_figure import summary, versus

    page = " ".join((DOCS / "method.md").read_text().split())
    kept = DOCS / "results-data" / "method-levers"
    compute = pd.read_csv(kept / "held_out_production_family_compute_anchor.csv")
    default = pd.read_csv(kept / "held_out_production_family.csv")
    default = default[default["model"] == "leap"]
    ours, theirs = summary(compute, "model_family").loc["leap"], summary(default, "model_family").loc["leap"]
    assert (f"loses a median of {ours['median']} points (mean {ours['mean']}, from {ours['least']} "
            f"to {ours['worst']}) against the default's {theirs['median']} ({theirs['mean']}), above "
            f"the published 49.7 for {int(ours['above_published'])} of 24 families against "
            f"{int(theirs['above_published'])}") in page
    both = compute.merge(default, on="model_family", suffixes=("", "_default"))
    change = 100 * (both["held_out"] - both["held_out_default"])
    assert (f"the more accurate for {(change > 0).sum()} families and the less for "
            f"{(change < 0).sum()} (the median change {change.median():.1f} points)") in page
    ours, theirs = versus(compute, "model_family"), versus(default, "model_family")
    assert f"median {ours['held_leap']}% against {theirs['held_leap']}%" in page
    assert f"in distribution ({ours['in_leap']}% against {theirs['in_leap']}%)" in page


def test_ranking_levers_table_quotes_its_kept_runs():
    """The ranking levers' regret table and per-fleet gains are those of the three kept runs."""
    import json

    import pandas as pd

    text = (DOCS / "method.md").read_text()
    kept = DOCS / "results-data" / "method-levers"
    runs = {preset: pd.DataFrame(json.loads((kept / f"levers_{name}_ranking.json").read_text())["table"])
            for preset, name in (("tiny", "tiny_seeds012"), ("small", "small_seeds012"),
                                 ("production", "production_seed0"))}
    rows = {}
    for line in text.split("| ranking | `tiny` | `small` | `production` |")[1].split("\n\n")[0].splitlines()[2:]:
        cells = [c.strip().replace("*", "") for c in line.strip("|").split("|")]
        config = cells[0].split("`")[1] if "`" in cells[0] else "default"
        rows[config] = cells[1:]
    assert set(rows) == set(runs["tiny"]["model"])
    for config, cells in rows.items():
        for preset, cell in zip(("tiny", "small", "production"), cells, strict=True):
            mean = runs[preset][runs[preset]["model"] == config][["mean_regret", "p90_regret"]].mean()
            assert cell == f"{mean['mean_regret']:.2f} ({mean['p90_regret']:.1f})", (config, preset)
    flat = " ".join(text.split())
    for preset in ("tiny", "small"):
        seeds = runs[preset].pivot(index="seed", columns="model", values="mean_regret")
        gain = seeds["default"] - seeds["rank_spread=0.9"]
        assert (gain > 0).all()
        assert f"of `{preset}` ({gain.min():.2f} to {gain.max():.2f} points" in flat
        margin = seeds["rank_margin=0.05"] - seeds["default"]
        assert (margin > 0).all()
