"""`reso docs`: the documentation's figures rendered from the runs committed under `docs/results/`.

Each `docs/results/NAME.json` (the JSON a `reso demo --json` run prints) gives the blocks
`NAME.frontier-figures`, `NAME.frontier-STEM`, `NAME.knob-STEM` and `NAME.table-STEM`
(`reso.evals.reports.results_doc`); every markdown file under the project (README.md, docs/*.md) that marks
one with `<!-- results:NAME.BLOCK -->` … `<!-- /results:NAME.BLOCK -->` gets it filled in. `--check` writes
nothing and fails (exit code 1) when a file differs from what its JSON renders.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Annotated, Any

import typer

from reso.evals.cli.errors import fail
from reso.evals.cli.paths import in_folder

RESULTS = Path("docs") / "results"


def _titles(run: dict[str, Any]) -> dict[str, str]:
    from reso.evals.jobs.config import WORLDS

    return {benchmark.stem: benchmark.title for benchmark in WORLDS.get(str(run.get("world")), ())}


def docs_command(
    root: Annotated[Path, typer.Option(help="The project folder: README.md, docs/ and docs/results/.")] = Path("."),
    check: Annotated[bool, typer.Option(help="Write nothing; fail when a file is not what its JSON renders.")] = False,
) -> None:
    """Fill the documentation's generated tables from the runs under docs/results/ (or check them)."""
    from reso.evals.reports.results_doc import fill, render_blocks

    in_folder("--root", root)
    if not (root / "README.md").is_file():
        fail(f"--root {root}: no README.md there (not the project folder)")
    blocks: dict[str, str] = {}
    for path in sorted((root / RESULTS).glob("*.json")):
        try:
            run = json.loads(path.read_text(encoding="utf-8"))
        except (OSError, json.JSONDecodeError) as error:
            fail(f"{path}: not a run's JSON ({error})")
        blocks |= {f"{path.stem}.{name}": block for name, block in render_blocks(run, _titles(run)).items()}
    stale = []
    for page in [root / "README.md", *sorted((root / "docs").glob("*.md"))]:
        text = page.read_text(encoding="utf-8")
        try:
            filled = fill(text, blocks, source=str(root / RESULTS))
        except ValueError as error:
            fail(f"{page}: {error}")
        if filled != text:
            stale.append(page)
            if not check:
                page.write_text(filled, encoding="utf-8")
    if check and stale:
        typer.echo(f"error: {stale[0]}: its generated tables differ from {root / RESULTS} (run `reso docs`)", err=True)
        raise typer.Exit(1)
    for page in stale:
        typer.echo(f"wrote {page}")
