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
PUBLIC_MODULES = [
    "regressor", "ranking", "metrics", "features", "fleet", "baselines", "backtest",
    "placement", "io", "schema", "plotting", "report", "cli", "demo", "datasets",
    "distributed", "feasibility", "placement_backtest",
]

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
    for part in test_command.split(" && ")[1:]:
        assert part in ci, f".ci/run does not run {part!r} from the README"


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
    found = {p.stem for p in (ROOT / "src" / "leapml").glob("*.py") if not p.stem.startswith("_")}
    found.add("fleet")
    assert found == set(PUBLIC_MODULES)
    for module in PUBLIC_MODULES:
        page = DOCS / "api" / f"{module}.md"
        assert f"::: leapml.{module}\n" in page.read_text()
        assert f"api/{module}.md" in nav


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
