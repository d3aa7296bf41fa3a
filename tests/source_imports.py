"""Reading the project's imports from its source, for the tests that keep its layout (`test_layout.py`,
`test_runtime_apart.py`): every import statement counts, at module level, inside functions and under
`TYPE_CHECKING`, with relative imports resolved against the importing module."""

from __future__ import annotations

import ast
import re
from collections.abc import Iterator
from pathlib import Path

NAMESPACE = "reso"
# A string that is a module path, or a registry factory "module:attribute" (docstrings never match).
_MODULE_STRING = re.compile(r"reso(\.\w+)+(:\w+)?")


def module_name(path: Path, root: Path) -> str:
    """`reward/small_crm.py` → `reso.reward.small_crm`; a package's `__init__.py` is the package."""
    parts = list(path.relative_to(root).with_suffix("").parts)
    if parts[-1] == "__init__":
        parts.pop()
    return ".".join([NAMESPACE, *parts])


def imported_names(tree: ast.AST, module: str, *, is_package: bool,
                   module_strings: bool = False) -> Iterator[tuple[int, str]]:
    """(line, module or module.name) for every import in `tree`, relative ones made absolute; `from package
    import name` yields both the package and `package.name` (which may be a submodule). With
    `module_strings`, a string constant naming a module (as `importlib` or a "module:attribute" factory
    would) counts too."""
    for node in ast.walk(tree):
        if isinstance(node, ast.Import):
            for alias in node.names:
                yield node.lineno, alias.name
        elif isinstance(node, ast.ImportFrom):
            if node.level:
                anchor = module.split(".") if is_package else module.split(".")[:-1]
                anchor = anchor[: len(anchor) - (node.level - 1)]
                source = ".".join([*anchor, *([node.module] if node.module else [])])
            else:
                source = node.module or ""
            yield node.lineno, source
            for alias in node.names:
                yield node.lineno, f"{source}.{alias.name}"
        elif (module_strings and isinstance(node, ast.Constant) and isinstance(node.value, str)
              and _MODULE_STRING.fullmatch(node.value)):
            yield node.lineno, node.value.split(":")[0]
