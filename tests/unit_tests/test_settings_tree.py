"""The settings tree: every setting declared once, reachable from the command line (a main option or `--set`),
a settings file and Python alike, and handed to the code that acts on it unchanged."""

from __future__ import annotations

import ast
import math
from enum import Enum
from pathlib import Path
from typing import Any

import pytest
import yaml
from typer.testing import CliRunner

from reso.agents.selection.config import SelectorConfig
from reso.evals.cli import app
from reso.evals.cli.demo import DEMO_TREES
from reso.evals.cli.eval import EVAL_TREES
from reso.evals.cli.settings_options import GivenSettings, Tree
from reso.graphs.escalation import AskingConfig, AskingRule, policy_for
from reso.graphs.settings import ANSWER_SETTINGS, FORMER_NAMES, ReSoSettings
from reso.graphs.settings_tree import Setting, SettingsError, settings_of

PACKAGE = Path(__file__).resolve().parents[2]
SETTINGS = {setting.key: setting for setting in settings_of(ReSoSettings)}

# A value that is not the default for each setting whose type alone does not give one that the settings accept.
SPECIAL: dict[str, Any] = {"selection.policy": "random", "asking.confidence": 0.7, "selection.embedder": "hash:16",
                           "reward.scorer": "rule", "plan.planner_model": "fake:planner", "pool": "my_pool.yaml",
                           "db": "my.sqlite", "asking.skills": "skills-folder", "asking.rule": "fixed",
                           "selection.per_domain": False}
# What a value needs beside it to be accepted (the confidence threshold is read by the confidence rule only).
NEEDS: dict[str, dict[str, Any]] = {"asking.confidence": {"asking.rule": "confidence", "asking.k_max": 3}}


def other_value(setting: Setting) -> Any:
    """A valid value other than the setting's default."""
    if setting.key in SPECIAL:
        return SPECIAL[setting.key]
    default, hint = setting.default, setting.hint
    if isinstance(hint, type) and issubclass(hint, Enum):
        return next(member for member in hint if member != default)
    if hint is bool:
        return not default
    if hint in (int, int | None):
        return (default or 1) + 2
    if hint in (float, float | None):
        return 0.75 if default in (None, 0.0) or default == 0.75 else default / 2
    raise AssertionError(f"no test value for {setting.key} ({hint})")


def as_text(value: Any) -> str:
    return str(value.value if isinstance(value, Enum) else value).lower() if isinstance(value, bool | Enum) \
        else str(value)


def test_each_setting_is_declared_once_in_every_command() -> None:
    for trees in (EVAL_TREES, DEMO_TREES):
        keys = [setting.key for tree in trees for setting in tree.settings()]
        assert len(keys) == len(set(keys))
        # Within a tree, a field name means one thing: a second section declaring `k` or `seed` is a copy.
        for tree in trees:
            names = [setting.name for setting in tree.settings()]
            assert len(names) == len(set(names)), sorted(n for n in names if names.count(n) > 1)


def _settings_fields() -> dict[str, set[str]]:
    """The fields each class of the package declares with a `description` (the settings sections), by class."""
    found: dict[str, set[str]] = {}
    for path in PACKAGE.rglob("*.py"):
        if any(part in {"tests", ".venv", ".ci", "build"} or part.startswith(".") for part in
               path.relative_to(PACKAGE).parts):
            continue
        for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
            if isinstance(node, ast.ClassDef):
                for item in node.body:
                    if (isinstance(item, ast.AnnAssign) and isinstance(item.target, ast.Name)
                            and "description" in ast.unparse(item.value or ast.Constant(None))):
                        found.setdefault(node.name, set()).add(item.target.id)
    return found


def test_no_class_outside_the_settings_tree_declares_a_setting_again() -> None:
    sections = {setting.owner.__name__ for tree in (*EVAL_TREES, *DEMO_TREES) for setting in tree.settings()}
    declared = _settings_fields()
    names = {setting.name for tree in EVAL_TREES for setting in tree.settings()}
    # Fields that share a name with a setting but are other things, each with why.
    unrelated = {
        "RunContext": {"settings"},  # the LangGraph run context holds the settings
        "FaultConfig": {"seed"},  # `reso bench faults`' own draw of failures, a benchmark's, not a run setting
        "PoolConfig": {"prices"},  # a pool file's own price table, which `run.prices` overrides
        "Verdict": {"confidence"},  # an LLM judge's reply
    }
    others = {cls: fields & names - unrelated.get(cls, set()) for cls, fields in declared.items()
              if cls not in sections}
    assert {cls: fields for cls, fields in others.items() if fields} == {}
    assert {"ReSoSettings", "SelectorConfig", "AskingConfig", "PlanSettings", "RewardSettings", "QuestionLimits",
            "RunOptions", "BackendOptions", "DemoConfig"} <= sections


@pytest.mark.parametrize("key", sorted(SETTINGS))
def test_every_setting_is_set_alike_from_python_a_file_and_the_command_line(key: str, tmp_path: Path) -> None:
    setting = SETTINGS[key]
    value = other_value(setting)
    changes = {**NEEDS.get(key, {}), key: value}
    from_python = ReSoSettings().with_changes(changes)
    assert from_python.values()[key] == value and from_python != ReSoSettings()
    nested: dict[str, Any] = {}
    for each, given in changes.items():
        head, _, rest = each.partition(".")
        if rest:
            nested.setdefault(head, {})[rest] = given.value if isinstance(given, Enum) else given
        else:
            nested[head] = given.value if isinstance(given, Enum) else given
    file = tmp_path / "settings.yaml"
    file.write_text(yaml.safe_dump(nested), encoding="utf-8")
    assert ReSoSettings.load(file) == from_python
    pairs = tuple(f"{each}={as_text(given)}" for each, given in changes.items())
    from_cli = GivenSettings(trees=EVAL_TREES, pairs=pairs).build("", ReSoSettings())
    assert from_cli == from_python
    if setting.main_option:  # a main option sets it as --set does
        options = {setting.key: as_text(value)}
        extra = tuple(f"{each}={as_text(given)}" for each, given in NEEDS.get(key, {}).items())
        assert GivenSettings(trees=EVAL_TREES, pairs=extra, options=options).build("", ReSoSettings()) == from_python


def test_options_override_set_which_overrides_the_file(tmp_path: Path) -> None:
    file = tmp_path / "s.yaml"
    file.write_text("asking:\n  k: 3\n  k_max: 5\nanswer_value_usd: 0.5\nrun:\n  concurrency: 2\n", encoding="utf-8")
    given = GivenSettings(trees=EVAL_TREES, file=file, pairs=("asking.k=4",), options={"answer_value_usd": "inf"})
    settings = given.build("", ReSoSettings())
    assert (settings.asking.k, settings.asking.k_max, settings.answer_value_usd) == (4, 5, math.inf)
    from reso.evals.eval_config import RunOptions

    assert given.build("run", RunOptions()).concurrency == 2  # the file's `run` section is the command's
    assert ReSoSettings.load(file).asking.k == 3  # …and the Python API reads the same file, its sections only


@pytest.mark.parametrize(("pairs", "message"), [
    (("asking.kk=3",), "--set: unknown setting 'asking.kk'"),
    (("k=3",), "--set: k is now asking.k"),
    (("asking.k=three",), "--set: asking.k: Input should be a valid integer"),
    (("asking.k",), "--set takes SECTION.FIELD=VALUE (asking.k_max=3), got 'asking.k'"),
    (("asking.rule=confidence",), "asking.rule 'confidence' needs both asking.confidence and asking.k_max"),
])
def test_a_bad_setting_is_one_line_naming_it(pairs: tuple[str, ...], message: str) -> None:
    result = CliRunner().invoke(app, ["eval", "--dataset", "x", "--out", "/nonexistent/never", *(
        arg for pair in pairs for arg in ("--set", pair))])
    assert result.exit_code == 2
    assert result.stderr.startswith(f"error: {message}") and result.stderr.count("\n") == 1


def test_a_settings_file_error_names_the_file_and_line(tmp_path: Path) -> None:
    file = tmp_path / "bad.yaml"
    file.write_text("asking:\n  k: [1,\n", encoding="utf-8")
    with pytest.raises(SettingsError, match=rf"^{file} line \d+: not YAML"):
        ReSoSettings.load(file)
    file.write_text("asking:\n  k: 0\n", encoding="utf-8")
    with pytest.raises(ValueError, match="asking.k must be >= 1, got 0"):
        ReSoSettings.load(file)


@pytest.mark.parametrize(("flag", "key"), [("--k-max", "asking.k_max"), ("--exploration", "selection.exploration_c"),
                                           ("--budget-usd", "run.budget_usd"), ("--workers", "backend.workers")])
def test_a_former_flag_names_its_new_spelling(flag: str, key: str) -> None:
    result = CliRunner().invoke(app, ["eval", "--dataset", "x", "--out", "/tmp/never", flag, "3"])
    assert result.exit_code == 2
    assert result.stderr == f"error: {flag} is now --set {key}=VALUE (or {key.split('.')[0]}: " \
                            f"{{{key.split('.')[1]}: …}} in a --settings file)\n"


@pytest.mark.parametrize("command", ["eval", "demo", "solve"])
def test_each_command_shows_at_most_fifteen_options(command: str) -> None:
    import typer

    click_command = typer.main.get_command(app).commands[command]  # type: ignore[attr-defined]
    shown = [p for p in click_command.params if p.param_type_name == "option" and not p.hidden]
    assert len(shown) + 1 <= 15  # --help is added by click when the help is printed


def test_the_sections_reach_their_code_unchanged() -> None:
    settings = ReSoSettings().with_changes({"selection.policy": "random", "selection.top_m": 5, "mode": "train",
                                            "limits.max_usd": 0.25, "limits.max_tokens": 900,
                                            "asking.rule": "fixed", "reward.scorer": "rule"})
    from reso.graphs.context import RunContext
    from reso.graphs.team import build_team

    team = build_team(settings)
    assert team.selector.config is settings.selection  # the section itself, no copy (training: no exploit)
    assert type(team.scorer).__name__ == "RuleScorer"
    budget = RunContext(settings=settings, team=team).question_budget()
    assert (budget.max_usd, budget.max_tokens, budget.max_seconds) == (0.25, 900, None)
    assert type(policy_for(settings.asking)).__name__ == "FixedK"
    tested = build_team(settings.replace(mode="test"))
    assert tested.selector.config == settings.selection.exploiting()
    assert isinstance(settings.selection, SelectorConfig) and isinstance(settings.asking, AskingConfig)
    assert settings.asking.rule is AskingRule.FIXED


def test_answer_settings_and_former_names_point_at_real_keys() -> None:
    assert set(ANSWER_SETTINGS) <= set(SETTINGS)
    assert set(FORMER_NAMES.values()) <= set(SETTINGS)


def test_a_trees_keys_carry_its_prefix() -> None:
    assert {setting.key for setting in Tree("run", __import__("reso.evals.eval_config", fromlist=["RunOptions"])
                                            .RunOptions).settings()} >= {"run.concurrency", "run.budget_usd"}


def test_a_run_hands_each_section_to_the_code_that_acts_on_it(monkeypatch: pytest.MonkeyPatch) -> None:
    """The fine stage's policy is made from the `asking` section itself, each question's budget from `limits`:
    spies on the code that acts on them see the very objects of the run's settings."""
    import reso.graphs.subtask as subtask_module
    from reso.graphs.api import ReSo
    from reso.graphs.limits import QuestionLimits
    from tests.engine_fakes import ScriptedAnswerer, scripted_team

    seen: dict[str, Any] = {}
    real_policy_for, real_budget = subtask_module.policy_for, QuestionLimits.question_budget

    def spy_policy_for(config: AskingConfig, **kwargs: Any) -> Any:
        seen["asking"] = config
        return real_policy_for(config, **kwargs)

    def spy_budget(limits: QuestionLimits, parent: Any = None) -> Any:
        seen["limits"] = limits
        return real_budget(limits, parent)

    monkeypatch.setattr(subtask_module, "policy_for", spy_policy_for)
    monkeypatch.setattr(QuestionLimits, "question_budget", spy_budget)
    solver = ScriptedAnswerer(answers={"Step A": "A is \\boxed{3}"}, calls=[])
    team = scripted_team({"solver": solver}, lambda subtask: ["solver"])
    settings = ReSoSettings().with_changes({"asking.rule": "fixed", "asking.k": 1, "limits.max_tokens": 10_000})
    result = ReSo(settings, team=team).solve("one step", plan=[
        {"id": "a", "instruction": "Step A: how many?", "depends_on": []}])
    assert result.answer == "3"
    assert seen["asking"] is settings.asking and seen["limits"] is settings.limits


def test_values_that_go_together_may_come_from_the_file_and_the_command_line(tmp_path: Path) -> None:
    file = tmp_path / "s.yaml"
    file.write_text("asking:\n  rule: confidence\n  k_max: 3\n", encoding="utf-8")
    settings = GivenSettings(trees=EVAL_TREES, file=file, pairs=("asking.confidence=0.8",)).build("", ReSoSettings())
    assert (settings.asking.rule, settings.asking.k_max, settings.asking.confidence) == (AskingRule.CONFIDENCE, 3, 0.8)


def test_reso_settings_lists_every_key_of_a_command_with_its_default() -> None:
    result = CliRunner().invoke(app, ["settings", "eval"], env={"COLUMNS": "250"})
    assert result.exit_code == 0, result.output
    for tree in EVAL_TREES:
        for setting in tree.settings():
            assert setting.key in result.stdout
    assert "asking.k_max" in result.stdout and "--answer-value" in result.stdout
    refused = CliRunner().invoke(app, ["settings", "nothing"])
    assert refused.exit_code == 2 and "COMMAND must be one of eval, solve, demo" in refused.stderr
