"""Scorer registry: build any CRM scorer from a spec string, a mapping or a blend YAML file.

Specs: "rule", "consensus", "reliability[:q]", "steps", "judge:<model spec>", "prm:<checkpoint>", "small:<dir>",
"staged:<dir>", "calibrated:<dir>", "peer:<dir>", "signals:<dir>", "blend:<file.yaml>", a path to a blend YAML file, a mapping
`{kind: <spec>, <setting>: …}`, or a mapping with a `scorers` list (an inline blend). The text after the first ":" is the factory's one positional
argument; mapping keys are its keyword settings and must be ones it accepts.

Factories are registered by kind, either as callables or as "module:attribute" strings imported on
first use, so that naming a scorer never loads torch or a chat model it does not need. Other modules
add kinds with `register_scorer("mykind", "reso.reward.mymodule:MyScorer")`.

`build_scorer(spec, **deps)` offers `deps` (a ready chat model as `chat_model=`, …) to every factory;
each takes the ones its signature names, so dependency names should be distinctive.
"""

from __future__ import annotations

import importlib
import inspect
import threading
from collections.abc import Callable, Mapping
from pathlib import Path
from typing import Any

from reso.reward.base import Scorer
from reso.reward.config_error import ScorerConfigError

ScorerFactory = Callable[..., Scorer]


_FACTORIES: dict[str, ScorerFactory | str] = {
    "rule": "reso.reward.rule:RuleScorer",
    "consensus": "reso.reward.consensus:ConsensusScorer",
    "steps": "reso.reward.steps:StepVerifierScorer",
    "judge": "reso.reward.judge:load_judge",
    "prm": "reso.reward.prm:ProcessRewardScorer",
    "small": "reso.reward.small_crm:SmallCRMScorer",
    "staged": "reso.reward.staged_crm:StagedCRMScorer",
    "calibrated": "reso.reward.calibrated_crm:CalibratedScorer",
    "reliability": "reso.reward.reliability_vote:ReliabilityVoteScorer",
    "peer": "reso.reward.peer_posterior:PeerPosteriorScorer",
    "signals": "reso.reward.signals_judge:SignalsJudge",
}
_LOCK = threading.Lock()
_BLENDS_BEING_BUILT = threading.local()
_BLEND_SUFFIXES = (".yaml", ".yml")


def register_scorer(kind: str, factory: ScorerFactory | str, *, replace: bool = False) -> None:
    """Make `kind` buildable by `build_scorer`.

    Args:
        kind: The spec prefix, e.g. "prm" for "prm:<checkpoint>". Letters, digits, "_" and "-".
        factory: A callable `factory([argument], **settings) -> Scorer`, or "module:attribute" naming one,
            imported when first built.
        replace: Allow replacing an existing registration.

    Raises:
        ValueError: A bad kind name, or a kind already registered without `replace`.
    """
    if not kind or not kind.replace("_", "").replace("-", "").isalnum():
        raise ValueError(f"scorer kind must be letters, digits, '_' or '-', got {kind!r}")
    if kind == "blend":
        raise ValueError("'blend' is built in and cannot be replaced")
    if isinstance(factory, str) and ":" not in factory:
        raise ValueError(f"a lazy factory is written 'module:attribute', got {factory!r}")
    with _LOCK:
        if kind in _FACTORIES and not replace:
            raise ValueError(f"scorer kind {kind!r} is already registered; pass replace=True to replace it")
        _FACTORIES[kind] = factory


def scorer_kinds() -> list[str]:
    """Every kind `build_scorer` knows, "blend" included."""
    with _LOCK:
        return sorted([*_FACTORIES, "blend"])


def build_scorer(spec: str | Path | Mapping[str, Any] | Scorer, **deps: Any) -> Scorer:
    """Build a scorer from its spec.

    Args:
        spec: "kind" or "kind:argument", a blend YAML path, a `{kind: …, setting: …}` mapping, an inline
            blend mapping with `scorers`, or a ready Scorer (returned as it is).
        **deps: Objects offered to every factory (for example `chat_model=` for the judge).

    Returns:
        The scorer.

    Raises:
        ScorerConfigError: Unknown kind, bad argument or setting, or a bad blend file.
    """
    if isinstance(spec, Scorer):
        return spec
    if isinstance(spec, Path) or (isinstance(spec, str) and spec.strip().lower().endswith(_BLEND_SUFFIXES)):
        path = str(spec).strip()
        return _build_blend(path.removeprefix("blend:"), deps)
    if isinstance(spec, Mapping):
        if "scorers" in spec:
            return _build_blend(spec, deps)
        kind = spec.get("kind")
        if not isinstance(kind, str) or not kind.strip():
            raise ScorerConfigError(f"scorer mapping needs a 'kind' string, got {dict(spec)!r}")
        options = {str(key): value for key, value in spec.items() if key != "kind"}
        return _build(kind.strip(), options, deps, where=f"scorer {kind.strip()!r}")
    if not isinstance(spec, str) or not spec.strip():
        raise ScorerConfigError(f"a scorer spec must be a non-empty string, mapping or path, got {spec!r}")
    return _build(spec.strip(), {}, deps, where=f"scorer {spec.strip()!r}")


def _build(spec: str, options: dict[str, Any], deps: Mapping[str, Any], *, where: str) -> Scorer:
    kind, _, argument = spec.partition(":")
    kind = kind.strip()
    if kind == "blend":
        if options:
            raise ScorerConfigError(
                f"{where}: a blend takes its settings from its file, not {sorted(options)}"
            )
        if not argument.strip():
            raise ScorerConfigError(f"{where}: write 'blend:<file.yaml>'")
        return _build_blend(argument.strip(), deps)
    factory = _factory(kind, where)
    scorer = _invoke(factory, kind, argument.strip() or None, options, deps, where)
    if not isinstance(scorer, Scorer):
        raise ScorerConfigError(
            f"{where}: the factory for {kind!r} returned {type(scorer).__name__}, not a Scorer"
        )
    return scorer


def _factory(kind: str, where: str) -> ScorerFactory:
    with _LOCK:
        factory = _FACTORIES.get(kind)
    if factory is None:
        raise ScorerConfigError(f"{where}: unknown scorer kind {kind!r} (known: {', '.join(scorer_kinds())})")
    if isinstance(factory, str):
        module_name, _, attribute = factory.partition(":")
        try:
            module = importlib.import_module(module_name)
        except ImportError as exc:
            raise ScorerConfigError(
                f"{where}: scorer kind {kind!r} needs {module_name}, which failed to import: {exc}"
            ) from exc
        try:
            factory = getattr(module, attribute)
        except AttributeError:
            raise ScorerConfigError(
                f"{where}: {module_name} has no {attribute!r} for scorer kind {kind!r}"
            ) from None
    return factory


def _invoke(
    factory: ScorerFactory,
    kind: str,
    argument: str | None,
    options: dict[str, Any],
    deps: Mapping[str, Any],
    where: str,
) -> Any:
    parameters: Mapping[str, inspect.Parameter]
    try:
        parameters = inspect.signature(factory).parameters
    except (TypeError, ValueError):
        parameters = {}
    kinds = {name: p.kind for name, p in parameters.items()}
    takes_any = inspect.Parameter.VAR_KEYWORD in kinds.values()
    keywords = {
        name
        for name, k in kinds.items()
        if k in (inspect.Parameter.KEYWORD_ONLY, inspect.Parameter.POSITIONAL_OR_KEYWORD)
    }
    positional = [
        name
        for name, k in kinds.items()
        if k in (inspect.Parameter.POSITIONAL_ONLY, inspect.Parameter.POSITIONAL_OR_KEYWORD)
    ]
    if argument is not None and not positional and not takes_any:
        raise ScorerConfigError(f"{where}: scorer kind {kind!r} takes no ':<argument>', got {argument!r}")
    if not takes_any:
        unknown = sorted(set(options) - keywords - set(positional[:1] if argument is not None else []))
        if unknown:
            accepted = ", ".join(sorted(keywords - set(positional[:1]))) or "none"
            raise ScorerConfigError(
                f"{where}: unknown setting {unknown[0]!r} for {kind!r} (accepted: {accepted})"
            )
    offered = {name: value for name, value in deps.items() if takes_any or name in keywords}
    if argument is not None and positional:
        offered.pop(positional[0], None)
    kwargs = {**offered, **options}
    try:
        return factory(argument, **kwargs) if argument is not None else factory(**kwargs)
    except (TypeError, ValueError, OSError) as exc:  # OSError: a model folder or file that is not there
        raise ScorerConfigError(f"{where}: {exc}") from exc


def _build_blend(source: str | Mapping[str, Any], deps: Mapping[str, Any]) -> Scorer:
    from reso.reward.blend import BlendScorer, read_blend_config

    key = str(Path(source).resolve()) if isinstance(source, str) else None
    opened = _BLENDS_BEING_BUILT.__dict__.setdefault("files", [])
    if key is not None and key in opened:
        raise ScorerConfigError(f"{source}: the blend includes itself (through {' -> '.join(opened)})")
    if key is not None:
        opened.append(key)
    try:
        members = [
            (entry.kind, _build(entry.kind, dict(entry.options), deps, where=entry.where), entry.weight)
            for entry in read_blend_config(source)
        ]
    finally:
        if key is not None:
            opened.pop()
    return BlendScorer(members)
