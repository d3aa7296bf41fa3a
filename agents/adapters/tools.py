"""Tool agents: deterministic chat models, starting with an exact arithmetic evaluator.

The calculator reads the current subtask of a prompt ("Please calculate the value of
Answer[0]*Answer[1]*Answer[2]. Conclude ...", "calculate Answer[1] + Answer[2]/3", or a bare expression),
substitutes the earlier answers given as `Answer[<id>] = <value>` lines, and evaluates the result exactly
with SymPy rationals. It declines (`ToolDeclined`) anything it cannot read as a calculation: a word
problem, a reference without a value, a value it cannot parse.

Parsing safety: SymPy's `parse_expr` evaluates generated Python, so the expression is first checked
token by token against a whitelist (numbers, operators, parentheses, a few function names and the
placeholders of substituted answers); nothing else ever reaches the parser.
"""

from __future__ import annotations

import re
from collections.abc import Mapping
from dataclasses import dataclass
from decimal import Decimal, localcontext
from tokenize import TokenError
from typing import Any

import sympy
from langchain_core.callbacks import CallbackManagerForLLMRun
from langchain_core.language_models import BaseChatModel
from langchain_core.messages import AIMessage, BaseMessage, HumanMessage
from langchain_core.outputs import ChatGeneration, ChatResult
from sympy.parsing.sympy_parser import auto_number, parse_expr, rationalize

from reso.agents.adapters.failures import DeclinedCall, FailureKind
from reso.agents.adapters.inline import InlineChatModel
from reso.agents.adapters.prompting import answer_bindings, current_subtask


class ToolDeclined(DeclinedCall, ValueError):
    """The tool cannot answer this prompt; the message says why."""

    kind = FailureKind.TOOL_DECLINED


MAX_EXPRESSION_CHARS = 1000
MAX_EXPONENT = 10_000
SIGNIFICANT_DIGITS = 15

_ASK = re.compile(
    r"\b(?:calculate|compute|evaluate|what\s+is|find)\s+"
    r"(?:the\s+(?:value|result)\s+of\s+)?(?P<expr>.+?)(?=[.?!;:](?:\s|$)|\n|$)",
    re.IGNORECASE | re.DOTALL,
)
_REFERENCE = re.compile(r"Answer\[\s*([^\]]+?)\s*\]")
_AGGREGATE = re.compile(r"^(?:the\s+)?(sum|product)\s+of\s+(.+)$", re.IGNORECASE | re.DOTALL)
# A parenthesised remark in words, e.g. "Answer[0]*Answer[1](They are numerical values and do not include
# units)" in SciBench-MAS: prose, not part of the expression.
_REMARK = re.compile(r"\((?=[^()]*[A-Za-z]{3,})(?![^()]*Answer\[)[^()]*\)")
_THOUSANDS = re.compile(r"(?<![\d.])\d{1,3}(?:,\d{3})+(?![\d,])")
_NUMBER = r"(?:\d+\.?\d*|\.\d+)(?:[eE][+-]?\d+)?"
_PLAIN_NUMBER = re.compile(rf"[+-]?{_NUMBER}")
_TOKEN = re.compile(rf"\s+|(?P<num>{_NUMBER})|(?P<name>[A-Za-z_][A-Za-z_0-9]*)|(?P<op>\*\*|[-+*/(),])")
_WORD_OPERATORS = (
    (re.compile(r"\bmultiplied\s+by\b|\btimes\b", re.IGNORECASE), "*"),
    (re.compile(r"\bdivided\s+by\b|\bover\b", re.IGNORECASE), "/"),
    (re.compile(r"\bplus\b", re.IGNORECASE), "+"),
    (re.compile(r"\bminus\b", re.IGNORECASE), "-"),
    (re.compile(r"\\times|\\cdot|[×·⋅∙]"), "*"),
    (re.compile(r"[÷]"), "/"),
    (re.compile(r"[−–]"), "-"),
    (re.compile(r"\^"), "**"),
)
_FUNCTIONS: dict[str, Any] = {
    "sqrt": sympy.sqrt, "exp": sympy.exp, "log": sympy.log, "ln": sympy.log, "abs": sympy.Abs,
    "sin": sympy.sin, "cos": sympy.cos, "tan": sympy.tan, "pi": sympy.pi,
}
# The names SymPy's generated code refers to (number constructors and unevaluated operators).
_PARSER_GLOBALS: dict[str, Any] = {
    name: getattr(sympy, name) for name in ("Integer", "Rational", "Float", "Add", "Mul", "Pow", "Symbol")
} | {"__builtins__": {}}


@dataclass(frozen=True, slots=True)
class Calculation:
    """A finished calculation: the expression as read, with values substituted, and the exact value."""

    expression: str
    substituted: str
    value: sympy.Expr

    @property
    def text(self) -> str:
        """The tool's answer: a one-line derivation and the boxed value."""
        shown = format_value(self.value)
        steps = [self.expression]
        if self.substituted != self.expression:
            steps.append(self.substituted)
        exact = ""
        if not _is_exact_decimal(self.value) and self.value.is_Rational and len(str(self.value)) <= 24:
            exact = f" (exactly {self.value})"
        return f"{' = '.join(steps)} = {shown}{exact}\nThe answer is therefore \\boxed{{{shown}}}."


def _is_exact_decimal(value: sympy.Expr) -> bool:
    if not value.is_Rational:
        return False
    q = int(value.q)
    for prime in (2, 5):
        while q % prime == 0:
            q //= prime
    return q == 1


def format_value(value: sympy.Expr) -> str:
    """An exact value as text: integers in full, terminating decimals exactly, others to 15 digits."""
    if value.is_Integer:
        return str(value)
    if _is_exact_decimal(value):
        with localcontext() as context:
            context.prec = len(str(value.p)) + len(str(value.q)) + 10
            decimal = Decimal(int(value.p)) / Decimal(int(value.q))
        return format(decimal.normalize(), "f")
    return str(sympy.N(value, SIGNIFICANT_DIGITS))


def _safe_parse(text: str, names: Mapping[str, sympy.Expr]) -> sympy.Expr:
    """Parse an arithmetic expression whose tokens are all whitelisted; floats become exact rationals."""
    if len(text) > MAX_EXPRESSION_CHARS:
        raise ToolDeclined(f"expression longer than {MAX_EXPRESSION_CHARS} characters")
    position = 0
    while position < len(text):
        match = _TOKEN.match(text, position)
        if match is None:
            raise ToolDeclined(f"not a calculation: unexpected {text[position:position + 20]!r}")
        name = match.group("name")
        if name is not None and name not in names and name not in _FUNCTIONS:
            raise ToolDeclined(f"not a calculation: unexpected word {name!r}")
        position = match.end()
    if not re.search(r"\d|[A-Za-z]", text):
        raise ToolDeclined("not a calculation: no numbers")
    local = {**_FUNCTIONS, **names}
    try:
        parsed = parse_expr(text, local_dict=local, global_dict=dict(_PARSER_GLOBALS),
                            transformations=(auto_number, rationalize), evaluate=False)
    except (SyntaxError, TypeError, ValueError, NameError, AttributeError, TokenError) as error:
        raise ToolDeclined(f"cannot parse {text!r} ({type(error).__name__})") from None
    if not isinstance(parsed, sympy.Basic):
        raise ToolDeclined(f"cannot parse {text!r}")
    for power in parsed.atoms(sympy.Pow):
        exponent = power.exp
        if exponent.is_number and abs(sympy.N(exponent)) > MAX_EXPONENT:
            raise ToolDeclined(f"exponent {exponent} is too large to evaluate")
    return parsed.doit()


def parse_value(text: str) -> sympy.Expr:
    """An earlier answer's value as an exact SymPy number.

    Accepts plain numbers ("233.0", "3.2e-4", "1,000", "-7"), fractions ("1/2"), LaTeX ("\\frac{1}{2}",
    "\\boxed{18}"), a leading currency sign ("$18") and a trailing percent sign ("50%" is 1/2).

    Raises:
        ToolDeclined: The text is not a single number.
    """
    raw = text
    text = text.strip().strip("$").strip()
    boxed = re.fullmatch(r"\\boxed\{(.*)\}", text, re.DOTALL)
    if boxed:
        text = boxed.group(1).strip()
    text = re.sub(r"\\[,!;: ]|\\text\{\s*\}", "", text).lstrip("$€£").strip().rstrip(".")
    percent = text.endswith(("%", "\\%"))
    text = text.removesuffix("\\%").removesuffix("%").strip()
    text = _THOUSANDS.sub(lambda match: match.group(0).replace(",", ""), text)
    scale = sympy.Rational(1, 100) if percent else sympy.Integer(1)
    if _PLAIN_NUMBER.fullmatch(text):
        return sympy.Rational(text) * scale
    if "\\" in text:
        value = _latex_value(text, raw)
    else:
        value = _safe_parse(text, {})
    if value.free_symbols or not value.is_number:
        raise ToolDeclined(f"cannot read {raw!r} as a number")
    return value * scale


def _latex_value(text: str, raw: str) -> sympy.Expr:
    from latex2sympy2_extended import latex2sympy

    try:
        value = latex2sympy(text)
    except Exception:  # noqa: BLE001 - the LaTeX parser raises many unrelated types on bad input
        raise ToolDeclined(f"cannot read {raw!r} as a number") from None
    if not isinstance(value, sympy.Expr):
        raise ToolDeclined(f"cannot read {raw!r} as a number")
    value = value.doit()
    return sympy.nsimplify(value, rational=True) if value.has(sympy.Float) else value


def _expression_text(subtask: str) -> str:
    match = _ASK.search(subtask)
    text = match.group("expr") if match else subtask
    text = text.strip().strip("$").strip()
    for pattern, operator in _WORD_OPERATORS:
        text = pattern.sub(operator, text)
    text = _REMARK.sub(" ", text).strip()
    aggregate = _AGGREGATE.match(text)
    if aggregate:
        kind, items = aggregate.groups()
        items = _REFERENCE.sub(lambda m: ", ".join(f"Answer[{part.strip()}]" for part in m.group(1).split(",")),
                               items)
        terms = [term.strip() for term in re.split(r",|\band\b", items) if term.strip()]
        joiner = " + " if kind.lower() == "sum" else " * "
        text = joiner.join(term if _REFERENCE.fullmatch(term) or _PLAIN_NUMBER.fullmatch(term) else f"({term})"
                           for term in terms)
    return _THOUSANDS.sub(lambda m: m.group(0).replace(",", ""), text)


def calculate(prompt: str) -> Calculation:
    """Evaluate the calculation that a subtask prompt asks for.

    Args:
        prompt: A full subtask prompt (earlier `Answer[<id>] = <value>` lines, then the current subtask)
            or a bare instruction / expression.

    Returns:
        The calculation with its exact value.

    Raises:
        ToolDeclined: The subtask is not a calculation, refers to an answer with no value, or cannot be
            parsed or evaluated to a real number.
    """
    subtask = current_subtask(prompt)
    bindings = answer_bindings(prompt)
    expression = _expression_text(subtask)
    if not expression:
        raise ToolDeclined("empty subtask")
    values: dict[str, sympy.Expr] = {}
    for ref in dict.fromkeys(match.group(1).strip() for match in _REFERENCE.finditer(expression)):
        if ref not in bindings:
            raise ToolDeclined(f"Answer[{ref}] has no value in the prompt")
        values[ref] = parse_value(bindings[ref])
    placeholders = {ref: f"ref{index}" for index, ref in enumerate(values)}
    with_placeholders = _REFERENCE.sub(lambda m: f" {placeholders[m.group(1).strip()]} ", expression)
    value = _safe_parse(with_placeholders, {placeholders[ref]: values[ref] for ref in values})
    if value.has(sympy.zoo, sympy.nan, sympy.oo, -sympy.oo):
        raise ToolDeclined(f"{expression} is undefined (division by zero?)")
    if not value.is_number or value.is_real is False:
        raise ToolDeclined(f"{expression} does not evaluate to a real number")
    substituted = _REFERENCE.sub(lambda m: _shown(values[m.group(1).strip()]), expression)
    return Calculation(expression=re.sub(r"\s+", " ", expression).strip(),
                       substituted=re.sub(r"\s+", " ", substituted).strip(),
                       value=value)


def _shown(value: sympy.Expr) -> str:
    shown = format_value(value) if value.is_Rational else str(value)
    return f"({shown})" if shown.startswith("-") or not re.fullmatch(r"[\d.]+", shown) else shown


class CalculatorChatModel(InlineChatModel):
    """An exact-arithmetic tool agent as a chat model (see `calculate`); reports zero tokens."""

    @property
    def _llm_type(self) -> str:
        return "tool-calculator"

    def _generate(
        self,
        messages: list[BaseMessage],
        stop: list[str] | None = None,
        run_manager: CallbackManagerForLLMRun | None = None,
        **kwargs: Any,
    ) -> ChatResult:
        human = [m for m in messages if isinstance(m, HumanMessage)]
        if not human:
            raise ToolDeclined("no human message to read")
        calculation = calculate(human[-1].text)
        message = AIMessage(
            content=calculation.text,
            usage_metadata={"input_tokens": 0, "output_tokens": 0, "total_tokens": 0},
            response_metadata={"model_name": "tool:calculator", "value": format_value(calculation.value)},
        )
        return ChatResult(generations=[ChatGeneration(message=message)])


TOOLS: dict[str, type[BaseChatModel]] = {"calculator": CalculatorChatModel}
"""Tool agents by the name used in `tool:<name>` specs."""
