"""Final-answer extraction from free model text, and the numeric value of an answer string.

Models mark their final answer in many ways: `\\boxed{…}`, a GSM8K-style `#### 18` line, "The answer is …",
or nothing at all (then the last number written counts). `extract_answer` finds the marked span and
`normalize_answer` reduces it to a canonical string: currency signs, units, LaTeX spacing and thousands
separators go; numbers are written plainly ("1,000.00" → "1000", "3.2 \\times 10^{-4}" → "3.2e-4");
symbolic answers stay LaTeX ("\\frac{1}{2}", "2\\sqrt{3}"). `to_number` gives the value of such a string.

Percent policy: a percentage keeps the number as written — "50%" has the value 50, not 0.5 — because
benchmark references (GSM8K, MATH) state percentages as the bare number asked for.

Locating the answer span (boxed braces, markers, the last number) is hand-written here because
math-verify's own extraction is tuned to its regexes and returns parsed objects, not the span; parsing
LaTeX into a value is left to math-verify (`reward.equivalence`), which wraps latex2sympy.
"""

from __future__ import annotations

import math
import re
from decimal import Decimal, InvalidOperation
from functools import lru_cache

# A plain decimal number, with optional thousands separators and exponent. It never starts inside a
# digit run or after "#" (a label such as "horse #12"); the sign is only taken when it is not the minus
# of a subtraction or a range ("16-3", "5-7 days").
_SIGN = r"(?<![\d#.])(?:(?<![\w.)}\]])[-+−])?"
_UNSIGNED = r"(?:\d{1,3}(?:,\d{3})+|\d+)(?:\.\d+)?(?:[eE][-+]?\d+)?|\.\d+(?:[eE][-+]?\d+)?"
_NUMBER = rf"{_SIGN}(?:{_UNSIGNED})"
_EXPONENT = r"(?:\{\s*[-+−]?\s*\d+\s*\}|\(\s*[-+−]?\s*\d+\s*\)|[-+−]?\d+)"
_SCIENTIFIC = rf"{_NUMBER}\s*(?:\\times|\\cdot|×|\*|x)\s*10\s*\^\s*{_EXPONENT}"
_LATEX_FRAC = r"[-−]?\\[dt]?frac\s*(?:\{[^{}]*\}\s*\{[^{}]*\}|\d\s*\d)"
_SQRT = rf"(?:{_NUMBER}\s*)?\\sqrt\s*(?:\[[^\]]*\])?\s*(?:\{{[^{{}}]*\}}|\d+)"
_SLASH_FRAC = rf"{_NUMBER}\s*/\s*(?:{_UNSIGNED})"
_PERCENT = rf"{_NUMBER}\s*(?:\\?%|\s?percent\b)"

# Longer forms first: at one position the regex takes the first alternative that matches.
NUMERIC_TOKEN = re.compile(
    rf"{_SCIENTIFIC}|{_LATEX_FRAC}|{_SQRT}|{_PERCENT}|{_SLASH_FRAC}|{_NUMBER}", re.IGNORECASE
)
_PLAIN_NUMBER = re.compile(rf"[-+−]?(?:{_UNSIGNED})")
# GSM8K calculator annotations "<<9*2=18>>" repeat the value written next to them; a truncated one
# ("<<120*7/(7+1" at the very end) is dropped too.
_CALCULATOR = re.compile(r"<<[^<>]*>>|<<[^<>]*$")
_FOLLOW_ON_QUESTION = re.compile(r"(?<=\S)\s*\bQuestion\s*:", re.DOTALL)
_BOX_COMMAND = re.compile(r"\\(?:boxed|fbox)\b\s*")
_HASH_MARKER = re.compile(r"####\s*([^\n]*)")
_ANSWER_PHRASE = re.compile(
    r"(?:\b(?:the\s+)?(?:final\s+)?answer\s*(?:is|:|=)|\banswer\s+(?:would|will)\s+be)"
    r"\s*(?:therefore|thus|then|now|simply|just)?\s*[:=]?\s*",
    re.IGNORECASE,
)
_INLINE_MATH = re.compile(r"^\s*(?:\$\$?(.+?)\$\$?|\\\((.+?)\\\)|\\\[(.+?)\\\])", re.DOTALL)
_SENTENCE_END = re.compile(r"\n|\.(?=\s|$)|;|\?|!")
_TEXT_WRAPPER = re.compile(r"\\(?:text|textbf|textit|mathrm|mathbf|mbox|textrm|operatorname)\s*\{([^{}]*)\}")
_LATEX_SPACING = re.compile(r"\\(?:left|right|displaystyle|!|,|;|:|quad|qquad)(?![a-zA-Z])|\\ |~")
_CURRENCY = re.compile(r"\\\$|\$|€|£|¥|\bUSD\b|\bRs\.?\s", re.IGNORECASE)
_DEGREES = re.compile(r"\^\s*\{?\s*\\circ\s*\}?|°|\\degree")
_THOUSANDS = re.compile(r"(?<=\d),(?=\d{3}(?!\d))")
_SCI_PARTS = re.compile(
    rf"^({_PLAIN_NUMBER.pattern})\s*(?:\\times|\\cdot|×|\*|x)\s*10\s*\^\s*\{{?\(?\s*([-+−]?)\s*(\d+)\s*\)?\}}?$",
    re.IGNORECASE,
)
_UNIT_TAIL = re.compile(r"^[A-Za-zμ°][A-Za-zμ°/.^{}\-\s\d]*$")
_SPACE_AROUND_BRACKETS = re.compile(r"\s*([(){}\[\]])\s*")
_MAX_TEXT = 200_000


def extract_answer(text: str) -> str | None:
    """Find the final answer in free model text and return it normalised.

    Looks, in order, for the last `\\boxed{…}` (nested braces allowed), the last `#### …` line, the last
    "The answer is …" phrase, and finally the last number written. Anything after a follow-on
    "Question:" (a model continuing the few-shot pattern) is ignored first.

    Args:
        text: The model's answer text.

    Returns:
        The normalised answer (e.g. "18", "\\frac{1}{2}", "3.2e-4"), or None when there is none.
    """
    if not isinstance(text, str) or not text.strip():
        return None
    return _extract(text)


# One answer text is read several times (the breaker's check, the value passed on, the CRM's vote,
# the results row): remembered by text, as the normalised forms are below.
@lru_cache(maxsize=2048)
def _extract(text: str) -> str | None:
    try:
        text = _CALCULATOR.sub("", cut_follow_on(text[-_MAX_TEXT:]))
        for finder in (_last_boxed, _hash_marked, _answer_phrase, _last_number):
            span = finder(text)
            if span is not None:
                answer = normalize_answer(span)
                if answer:
                    return answer
    except (RecursionError, ValueError, OverflowError):
        return None
    return None


def cut_follow_on(text: str) -> str:
    """Drop anything from a follow-on "Question:" on (few-shot continuations)."""
    match = _FOLLOW_ON_QUESTION.search(text)
    return text[: match.start()] if match else text


def normalize_answer(answer: str | None) -> str | None:
    """Reduce an answer span to its canonical form; idempotent.

    Args:
        answer: A raw answer such as "$1,000.00", "18 dollars", "\\dfrac{1}{2}" or "x = 5".

    Returns:
        The canonical string ("1000", "18", "\\frac{1}{2}", "5"), or None when nothing is left.
    """
    if not isinstance(answer, str):
        return None
    return _normalize(answer)


@lru_cache(maxsize=4096)
def _normalize(answer: str) -> str | None:
    s = answer.strip()
    if not s:
        return None
    # Collapse whitespace first: a control character that splits "\\" from what follows would otherwise become
    # a LaTeX "\\ " space only after the spacing pass, and a second pass would change the result.
    s = _strip_delimiters(" ".join(s.split()))
    s = s.replace("−", "-").replace("\\dfrac", "\\frac").replace("\\tfrac", "\\frac")
    s = _LATEX_SPACING.sub(" ", s)
    s = _CURRENCY.sub("", s)
    s = _DEGREES.sub("", s)
    if "=" in s and not any(op in s for op in ("<", ">", "\\le", "\\ge", "\\ne")):
        s = s.rsplit("=", 1)[1]
    s = _THOUSANDS.sub("", s)
    s = s.strip().rstrip(".,;:").strip()
    s = _drop_units(s)
    s = _SPACE_AROUND_BRACKETS.sub(r"\1", " ".join(s.split()))
    if not s:
        return None
    if s.endswith(("\\%", "%")) or s.lower().endswith(" percent"):
        body = re.sub(r"\s*(?:\\?%|percent)$", "", s, flags=re.IGNORECASE).strip()
        canonical = _canonical_number(body)
        return f"{canonical}%" if canonical is not None else (f"{body}%" if body else None)
    canonical = _canonical_number(s)
    return canonical if canonical is not None else s


def plain_number(answer: str) -> float | None:
    """The value of a plainly written number (decimal, scientific, percent as written); else None.

    This is the fast path of `reward.equivalence.to_number`; LaTeX expressions go through math-verify.
    """
    s = normalize_answer(answer)
    if s is None:
        return None
    s = s.removesuffix("%").strip()
    if not _PLAIN_NUMBER.fullmatch(s):
        return None
    try:
        value = float(s)
    except (ValueError, OverflowError):
        return None
    return value if math.isfinite(value) else None


def looks_like_plain_number(s: str) -> bool:
    """Whether `s` is written as a plain decimal number (whatever its size)."""
    return _PLAIN_NUMBER.fullmatch(s.strip()) is not None


def _strip_delimiters(s: str) -> str:
    for opening, closing in (("$$", "$$"), ("\\(", "\\)"), ("\\[", "\\]"), ("$", "$")):
        if s.startswith(opening) and s.endswith(closing) and len(s) > len(opening) + len(closing):
            s = s[len(opening) : -len(closing)].strip()
    box = _BOX_COMMAND.match(s)
    if box:
        inner = _braced(s, box.end())
        if inner is not None and inner[1] == len(s):
            s = inner[0].strip()
    return s


def _drop_units(s: str) -> str:
    """Drop a unit that follows a number: wrapped units (`\\mathrm{~m}`) always, bare words of 2+ letters."""
    unwrapped = _TEXT_WRAPPER.sub(lambda m: " " + m.group(1) + " ", s).strip()
    unwrapped = re.sub(r"\\mu\s*(?=[A-Za-z])", "μ", unwrapped)  # micro-units: "\mu \mathrm{C}"
    token = NUMERIC_TOKEN.match(unwrapped)
    if token is None:
        return unwrapped if _TEXT_WRAPPER.search(s) and not re.search(r"\d|\\", unwrapped) else s
    tail = unwrapped[token.end() :].strip()
    if not tail:
        return unwrapped
    was_wrapped = _TEXT_WRAPPER.search(s) is not None
    bare_word = re.match(r"[A-Za-zμ°]{2,}", tail) is not None
    if _UNIT_TAIL.match(tail) and (was_wrapped or bare_word):
        return unwrapped[: token.end()].strip()
    return s


def _canonical_number(s: str) -> str | None:
    """Plain decimals lose a '+' sign and trailing zeros; scientific forms become '3.2e-4'."""
    sci = _SCI_PARTS.match(s)
    if sci:
        mantissa, sign, exponent = sci.groups()
        s = f"{mantissa}e{'-' if sign in ('-', '−') else ''}{exponent}"
    if not _PLAIN_NUMBER.fullmatch(s):
        return None
    try:
        value = Decimal(s.replace("−", "-"))
    except InvalidOperation:
        return None
    if not value.is_finite():
        return None
    if "e" in s.lower():
        mantissa, exponent = s.lower().lstrip("+").split("e")
        return f"{_trim_decimal(mantissa)}e{int(exponent)}"
    return _trim_decimal(s.lstrip("+"))


def _trim_decimal(s: str) -> str:
    if "." in s:
        s = s.rstrip("0").rstrip(".")
    if s.startswith("."):
        s = "0" + s
    if s.startswith("-."):
        s = "-0" + s[1:]
    return "0" if s in ("-0", "") else s


def _braced(text: str, start: int) -> tuple[str, int] | None:
    """The content of the brace group opening at `start` (nesting allowed) and the index after it."""
    if start >= len(text) or text[start] != "{":
        return None
    depth = 0
    for index in range(start, len(text)):
        char = text[index]
        if char == "{" and (index == 0 or text[index - 1] != "\\"):
            depth += 1
        elif char == "}" and (index == 0 or text[index - 1] != "\\"):
            depth -= 1
            if depth == 0:
                return text[start + 1 : index], index + 1
    return None


def _last_boxed(text: str) -> str | None:
    for match in reversed(list(_BOX_COMMAND.finditer(text))):
        inner = _braced(text, match.end())
        if inner is not None and inner[0].strip():
            return inner[0]
        if inner is None:
            bare = NUMERIC_TOKEN.match(text, match.end())
            if bare:
                return bare.group(0)
    return None


def _hash_marked(text: str) -> str | None:
    matches = [m.group(1).strip() for m in _HASH_MARKER.finditer(text)]
    for line in reversed(matches):
        token = _first_answer_in(line)
        if token is not None:
            return token
    return None


def _answer_phrase(text: str) -> str | None:
    for match in reversed(list(_ANSWER_PHRASE.finditer(text))):
        span = text[match.end() :]
        boxed = _last_boxed(span[:200]) if span.lstrip().startswith("\\boxed") else None
        found = boxed if boxed is not None else _first_answer_in(span)
        if found is not None:
            return found
    return None


def _first_answer_in(span: str) -> str | None:
    """The answer at the start of a marked span: inline math when it opens with it, else its first number."""
    inline = _INLINE_MATH.match(span)
    if inline:
        return next(group for group in inline.groups() if group is not None)
    end = _SENTENCE_END.search(span)
    sentence = span[: end.start()] if end else span
    if "=" in sentence:
        sentence = sentence.rsplit("=", 1)[1]
    token = NUMERIC_TOKEN.search(sentence)
    if token is None:
        return None
    trailing = sentence[token.end() :]
    unit = re.match(r"\s*\\(?:text|mathrm|mbox)\s*\{[^{}]*\}", trailing)
    return token.group(0) + (unit.group(0) if unit else "")


def _last_number(text: str) -> str | None:
    last = None
    for last in NUMERIC_TOKEN.finditer(text):
        pass
    return last.group(0) if last else None
