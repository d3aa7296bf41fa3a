"""The runtime stays apart from the research: what a running ReSo loads never imports training or evals code.

The runtime packages are `reso.agents`, `reso.graphs` and `reso.reward` outside `reso.reward.training`.
None of their modules may import `reso.reward.training` or `reso.evals`. Every import statement counts
(at module level, inside functions, under `TYPE_CHECKING`), relative imports are resolved against the
importing module, and so does a string constant that names a module the way `importlib` or the scorer
registry's "module:attribute" factories are written, since those are imported too.

Within `reso.evals`, the main job (`reso demo`) keeps to `reso.evals.jobs`: only the CLI and the tests import it.
"""

from __future__ import annotations

import ast
from collections.abc import Callable
from pathlib import Path

from tests.source_imports import imported_names, module_name

ROOT = Path(__file__).resolve().parents[2]
RUNTIME_FOLDERS = ("agents", "graphs", "reward")
RESEARCH = ("reso.reward.training", "reso.evals")
MAIN_JOB = "reso.evals.jobs"
MAIN_JOB_USERS = ("evals/jobs", "evals/cli")
def runtime_modules() -> list[Path]:
    training = ROOT / "reward" / "training"
    return sorted(path for folder in RUNTIME_FOLDERS for path in (ROOT / folder).rglob("*.py")
                  if training not in path.parents)


def is_under(name: str, root: str) -> bool:
    return name == root or name.startswith(root + ".")


def is_research(name: str) -> bool:
    return any(is_under(name, root) for root in RESEARCH)


def imports_of(path: Path, wanted: Callable[[str], bool]) -> list[str]:
    """A line per import in `path` of a module `wanted` accepts."""
    module = module_name(path, ROOT)
    return [f"{module} ({path.relative_to(ROOT)}:{line}) imports {name}"
            for line, name in imported_names(ast.parse(path.read_text(encoding="utf-8")), module,
                                             is_package=path.name == "__init__.py", module_strings=True)
            if wanted(name)]


def research_imports(path: Path) -> list[str]:
    return imports_of(path, is_research)


def test_no_runtime_module_imports_training_or_evals_code() -> None:
    modules = runtime_modules()
    assert any(path.name == "subtask.py" for path in modules) and len(modules) > 50
    violations = [line for path in modules for line in research_imports(path)]
    assert not violations, "runtime modules import research code:\n" + "\n".join(violations)


def test_the_training_package_holds_the_fitting_and_search_code() -> None:
    training = {path.stem for path in (ROOT / "reward" / "training").glob("*.py")}
    assert {"prm_training", "crm_ablation", "crm_search", "crm_eval", "crm_candidates", "step_layout",
            "small_crm_fit"} <= training
    assert training & {path.stem for path in (ROOT / "reward").glob("*.py")} == {"__init__"}


def test_only_the_cli_imports_the_main_job() -> None:
    users = tuple(ROOT / folder for folder in MAIN_JOB_USERS)
    others = sorted(path for folder in (*RUNTIME_FOLDERS, "evals") for path in (ROOT / folder).rglob("*.py")
                    if not any(user == path.parent or user in path.parents for user in users))
    assert any(path.name == "runner.py" for path in others) and len(others) > 100
    violations = [line for path in others for line in imports_of(path, lambda name: is_under(name, MAIN_JOB))]
    assert not violations, "modules outside the CLI import the main job:\n" + "\n".join(violations)


def test_the_jobs_package_holds_the_main_job() -> None:
    jobs = {path.stem for path in (ROOT / "evals" / "jobs").glob("*.py")}
    assert {"demo", "config", "runs", "crm_fit", "comparison", "events", "fine_stages", "validation",
            "benchmark_pool", "recorded_benchmark"} <= jobs
    assert jobs & {path.stem for path in (ROOT / "evals").glob("*.py")} == {"__init__"}


def test_every_form_of_import_is_seen() -> None:
    source = '''
import reso.evals.runner
from reso.reward.training import crm_eval
from reso.reward import training

def late():
    from reso.evals.jobs.demo import run_demo
    from ..training.crm_search import choose
    from . import small_crm

FACTORY = "reso.reward.training.small_crm_fit:fit_small_crm"
"""A docstring naming `reso.evals.runner` is no import."""
'''
    found = {name for _, name in imported_names(ast.parse(source), "reso.reward.sub.scorer", is_package=False,
                                                module_strings=True)
             if is_research(name)}
    assert found == {"reso.evals.runner", "reso.reward.training", "reso.reward.training.crm_eval",
                     "reso.evals.jobs.demo", "reso.evals.jobs.demo.run_demo",
                     "reso.reward.training.crm_search",
                     "reso.reward.training.crm_search.choose", "reso.reward.training.small_crm_fit"}
