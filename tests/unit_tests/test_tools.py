"""The exact-arithmetic tool agent: reads Answer[i] bindings, evaluates exactly, declines the rest."""

from __future__ import annotations

import pytest
import sympy
from langchain_core.messages import HumanMessage, SystemMessage

from reso.agents.adapters.load_error import ModelLoadError
from reso.agents.adapters.loader import load_chat_model
from reso.agents.adapters.prompting import ContextAnswer, render_subtask_prompt
from reso.agents.adapters.tools import ToolDeclined, calculate, parse_value

FINAL_STEP = ("Please calculate the value of Answer[0]*Answer[1]*Answer[2]. Conclude the answer by stating "
              "'The answer is therefore \\boxed{[ANSWER]}.'")


def _prompt(instruction: str, **values: str) -> str:
    context = [ContextAnswer(key.removeprefix("a"), f"step {key}", value) for key, value in values.items()]
    return render_subtask_prompt(instruction, context)


def test_mas_final_step_is_the_exact_product_of_earlier_answers() -> None:
    model = load_chat_model("tool:calculator")
    reply = model.invoke([SystemMessage("You are a calculator."),
                          HumanMessage(_prompt(FINAL_STEP, a0="233.0", a1="20", a2="64"))])
    assert reply.text.endswith("\\boxed{298240}.")
    assert "233*20*64 = 298240" in reply.text
    assert reply.usage_metadata == {"input_tokens": 0, "output_tokens": 0, "total_tokens": 0}


def test_decimal_products_stay_exact() -> None:
    # SciBench-MAS-Medium item 0: 7 * 36 * 169 * 2.89 * 107 = 13169487.24 (floats would drift).
    instruction = "Please calculate the value of Answer[0]*Answer[1]*Answer[2]*Answer[3]*Answer[4]."
    result = calculate(_prompt(instruction, a0="7.0", a1="36.0", a2="169.0", a3="2.89", a4="107.0"))
    assert result.value == sympy.Rational("13169487.24")
    assert result.text.endswith("\\boxed{13169487.24}.")


@pytest.mark.parametrize(
    ("value", "expected"),
    [("233.0", sympy.Integer(233)), ("1/2", sympy.Rational(1, 2)), ("3.2e-4", sympy.Rational(1, 3125)),
     ("\\frac{1}{2}", sympy.Rational(1, 2)), ("1,000", sympy.Integer(1000)), ("$18", sympy.Integer(18)),
     ("50%", sympy.Rational(1, 2)), ("\\boxed{-7}", sympy.Integer(-7)), ("\\sqrt{4}", sympy.Integer(2))],
)
def test_values_are_read_exactly(value: str, expected: sympy.Expr) -> None:
    assert parse_value(value) == expected


def test_mixed_references_and_non_terminating_results_show_decimal_and_fraction() -> None:
    result = calculate(_prompt("calculate Answer[1] + Answer[2]/3", a1="1/2", a2="\\frac{1}{2}"))
    assert result.value == sympy.Rational(2, 3)
    assert "(exactly 2/3)" in result.text
    assert result.text.endswith("\\boxed{0.666666666666667}.")


@pytest.mark.parametrize(
    ("instruction", "expected"),
    [("233*20*64", 298240), ("What is 2^10?", 1024), ("compute 12 times 3 minus 4", 32),
     ("the sum of Answer[1, 2]", 9), ("the product of Answer[0], Answer[1] and Answer[2]", 60),
     ("Calculate 1,000 / 8.", sympy.Rational(125)), ("calculate -Answer[0] - 1", -4)],
)
def test_instruction_forms(instruction: str, expected: int) -> None:
    assert calculate(_prompt(instruction, a0="3", a1="4", a2="5")).value == expected


@pytest.mark.parametrize(
    ("instruction", "reason"),
    [("Janet's ducks lay 16 eggs per day. She eats three for breakfast every morning.", "not a calculation"),
     ("Calculate the work required to expand the cell surface.", "not a calculation"),
     ("calculate Answer[7] + 1", r"Answer\[7\] has no value"),
     ("calculate (2 + 3", "cannot parse"),
     ("compute 1/0", "undefined"),
     ("calculate 2**100000000", "too large"),
     ("calculate __import__('os').system('true')", "not a calculation")],
)
def test_declines_what_it_cannot_do(instruction: str, reason: str) -> None:
    with pytest.raises(ToolDeclined, match=reason):
        calculate(_prompt(instruction, a0="3"))


def test_declines_an_unknown_earlier_answer_and_unreadable_values() -> None:
    unknown = render_subtask_prompt(FINAL_STEP, [ContextAnswer("0", "a", None, failed=True),
                                                 ContextAnswer("1", "b", "2"), ContextAnswer("2", "c", "3")])
    with pytest.raises(ToolDeclined, match=r"Answer\[0\] has no value"):
        load_chat_model("tool:calculator").invoke(unknown)
    with pytest.raises(ToolDeclined, match="cannot read|not a calculation"):
        calculate(_prompt(FINAL_STEP, a0="about twelve", a1="2", a2="3"))


def test_unknown_tool_is_a_load_error() -> None:
    with pytest.raises(ModelLoadError, match="unknown tool 'abacus'; known tools: calculator"):
        load_chat_model("tool:abacus")


def test_a_parenthesised_remark_in_words_is_not_part_of_the_expression():
    from reso.agents.adapters.tools import calculate

    prompt = ("Answer[0] = 11\nAnswer[1] = 1.602\nAnswer[2] = 0.66\nCurrent subtask:\n"
              "Please calculate the value of Answer[0]*Answer[1]*Answer[2](They are numerical values and do not "
              "include units). Conclude the answer by stating \"The answer is therefore \\boxed{[ANSWER]}.\"")
    assert float(calculate(prompt).value) == pytest.approx(11 * 1.602 * 0.66)
    assert calculate("Current subtask:\ncalculate (2 plus 3) times 4").value == 20
