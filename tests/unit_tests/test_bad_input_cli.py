"""Bad input through the real `reso` command line: each gets one `error:` line naming the file, line or field,
exit code 2, no traceback, and nothing runs (or is written) before the input is known to be good.

Exit codes: 2 = the input is wrong (a file, a field, an option); 1 = the input was fine but the run could not
produce an answer (every candidate failed, no recording, budget spent). The table of these cases is
docs/bad-input.md. Cases that need a local HTTP server (a wrong key, an unreachable endpoint) are in
tests/integration_tests/test_bad_input_endpoints.py.
"""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from typer.testing import CliRunner

from reso.agents.defaults import two_model_pool_path
from reso.evals.cli import app
from reso.evals.cli import plan as cli_plan
from reso.reward.base import ScoreItem
from reso.reward.registry import build_scorer
from tests.fakes import ScriptedChatModel

GOOD_LINE = '{"id": "a", "question": "What is 2+2?", "answer": "4"}\n'
PLAN_QUESTION = "What is 2 + 3, then times 4?"


def invoke(*args: str, stdin: str | None = None):
    return CliRunner().invoke(app, list(args), input=stdin, env={"COLUMNS": "200"})


def assert_one_error_line(result, code: int, *parts: str) -> str:
    """The command exited with `code`, printed nothing on stdout and exactly one `error:` line on stderr
    holding every part; returns that line."""
    assert result.exit_code == code, (result.exit_code, result.stdout, result.stderr, result.exception)
    assert not isinstance(result.exception, Exception) or isinstance(result.exception, SystemExit)
    assert "Traceback" not in result.stderr
    assert result.stdout == ""
    lines = result.stderr.strip().splitlines()
    assert len(lines) == 1, result.stderr
    line = lines[0]
    assert line.startswith("error: "), line
    for part in parts:
        assert part in line, (part, line)
    return line


def write(path: Path, content: str | bytes) -> Path:
    path.write_bytes(content if isinstance(content, bytes) else content.encode("utf-8"))
    return path


# -- dataset files, through `reso eval` ---------------------------------------------------------------------

DATASETS = [
    ("broken.json", '[{"id": "a",\n "question": }]', ["broken.json:2: invalid JSON"]),
    ("broken.jsonl", GOOD_LINE + '{"id": "b", "question": \n', ["broken.jsonl:2: invalid JSON"]),
    ("types.jsonl", GOOD_LINE + '{"id": "b", "question": 5, "answer": "4"}\n',
     ["types.jsonl:2: field 'question': expected a non-empty string, got int"]),
    ("answer.jsonl", GOOD_LINE + '{"id": "b", "question": "q?", "answer": [4]}\n',
     ["answer.jsonl:2: field 'answer': expected a string or number, got list"]),
    ("missing.jsonl", GOOD_LINE + '{"id": "b", "answer": "4"}\n', ["missing.jsonl:2: field 'question': missing"]),
    ("empty.jsonl", "", ["empty.jsonl: empty file, no records"]),
    ("blank.jsonl", "\n  \n", ["blank.jsonl: empty file, no records"]),
    ("latin1.jsonl", GOOD_LINE.encode() + b'{"id": "b", "question": "caf\xe9?", "answer": "4"}\n',
     ["latin1.jsonl:2: not valid UTF-8 (byte 0xe9 at offset"]),
    ("object.json", '{"id": "a"}', ["object.json: expected a JSON list of items, got dict"]),
    ("array.jsonl", "[1, 2]\n", ["array.jsonl:1: expected a JSON object, got list"]),
    ("dupes.jsonl", GOOD_LINE + GOOD_LINE, ["dupes.jsonl: item 1: field 'id': duplicate id 'a'"]),
    ("cycle.jsonl", GOOD_LINE + json.dumps({"id": "b", "question": "q?", "answer": "1", "plan": [
        {"id": "x", "instruction": "Use Answer[y].", "depends_on": ["y"]},
        {"id": "y", "instruction": "Use Answer[x].", "depends_on": ["x"]}]}) + "\n",
     ["cycle.jsonl:2: field 'plan': steps form a cycle"]),
    ("plan_ids.jsonl", json.dumps({"id": "b", "question": "q?", "answer": "1", "plan": [
        {"id": "x", "instruction": "One."}, {"id": "x", "instruction": "Two."}]}) + "\n",
     ["plan_ids.jsonl:1: field 'plan': step id(s) 'x' used by more than one step"]),
    ("plan_shape.jsonl", json.dumps({"id": "b", "question": "q?", "answer": "1", "plan": [{"id": "x"}]}) + "\n",
     ["plan_shape.jsonl:1: field 'plan[0].instruction': missing"]),
    ("release.json", json.dumps([{"node_info": {"0": {}}, "problem_text": "x", "gt_plan": "[1,",
                                  "gt_subtask": [], "answer_number": 3}]),
     ["release.json: item 0: field 'gt_plan': not a Python list of strings"]),
]


@pytest.mark.parametrize(("name", "content", "parts"), DATASETS, ids=[case[0] for case in DATASETS])
def test_a_malformed_dataset_fails_before_anything_runs(tmp_path: Path, name: str, content: str | bytes,
                                                         parts: list[str]) -> None:
    dataset = write(tmp_path / name, content)
    out = tmp_path / "run"
    result = invoke("eval", "--dataset", str(dataset), "--out", str(out), "--quiet")
    assert_one_error_line(result, 2, str(dataset.parent), *parts)
    assert not (out / "results.jsonl").exists()


def test_an_unknown_dataset_names_the_registered_ones_and_the_path_tried(tmp_path: Path) -> None:
    result = invoke("eval", "--dataset", "no-such-set", "--out", str(tmp_path / "run"), "--quiet")
    assert_one_error_line(result, 2, "unknown dataset 'no-such-set'", "gsm8k-mas-easy-test", "no file at")


def test_a_missing_data_root_names_the_file_looked_for(tmp_path: Path) -> None:
    result = invoke("eval", "--dataset", "math-mas-easy", "--set", f"run.data_root={tmp_path / 'nowhere'}",
                    "--out", str(tmp_path / "run"), "--quiet")
    assert_one_error_line(result, 2, "reso-mas/MATH-MAS-Easy.json", "--set run.data_root=")


def test_synth_validate_reports_an_unreadable_file_as_one_line(tmp_path: Path) -> None:
    dataset = write(tmp_path / "bad.jsonl", b'{"q": "\xff"}\n')
    assert_one_error_line(invoke("synth", "validate", str(dataset)), 2, "bad.jsonl:1: not valid UTF-8")


# -- pool files ---------------------------------------------------------------------------------------------

POOLS = [
    ("syntax.yaml", "models: [\n  - spec: x\n roles: ::", ["syntax.yaml:2: invalid YAML"]),
    ("field.yaml", "models:\n  - spec: tool:calculator\n    colour: red\nroles: [Algebra]\n",
     ["field 'models.0.colour': Extra inputs are not permitted"]),
    ("role.yaml", "models:\n  - spec: tool:calculator\nroles: [Astrology]\n",
     ["roles[0]: unknown role 'Astrology'; built-in roles are: Algebra"]),
    ("price.yaml", "models:\n  - spec: openai:my-own-model\nroles: [Algebra]\n",
     ["models[0]: no price known for model 'openai:my-own-model'; set price_in and price_out"]),
    ("half_price.yaml", "models:\n  - spec: openai:my-own-model\n    price_in: 1\nroles: [Algebra]\n",
     ["models[0]: give both price_in and price_out"]),
    ("dupes.yaml", "agents:\n" + "  - {id: a, model: {spec: 'tool:calculator'}, role: r, profile: p}\n" * 2,
     ["duplicate agent id 'a'"]),
    ("spec.yaml", "models:\n  - spec: no-colon\nroles: [Algebra]\n", ["field 'models.0.spec'"]),
    ("latin1.yaml", b"name: pool\nroles: [caf\xe9]\n", ["latin1.yaml:2: not valid UTF-8 (byte 0xe9 at offset 22)"]),
    ("scalar.yaml", "just text\n", ["a pool file must be a YAML mapping, got str"]),
    ("empty.yaml", "", ["a pool file must be a YAML mapping"]),
    ("no_agents.yaml", "name: nobody\n", ["the pool has no agents"]),
]


@pytest.mark.parametrize(("name", "content", "parts"), POOLS, ids=[case[0] for case in POOLS])
def test_a_bad_pool_file_is_one_line_naming_file_and_field(tmp_path: Path, name: str, content: str | bytes,
                                                           parts: list[str]) -> None:
    pool = write(tmp_path / name, content)
    assert_one_error_line(invoke("pool", "show", str(pool)), 2, name, *parts)


KEY = "sk-canary-9f8e7d6c5b4a"


@pytest.mark.parametrize(
    ("body", "part"),
    [
        (f"    api_key_env: {KEY}\n", "models[0].api_key_env: not an environment variable name"),
        (f"    params: {{api_key: {KEY}}}\n", "models[0].params.api_key: keys and tokens are not read from pool files"),
        (f"    params: {{openai_api_key: {KEY}}}\n", "models[0].params.openai_api_key: keys and tokens"),
        (f"    api_key: {KEY}\n", "field 'models.0.api_key': Extra inputs are not permitted"),
    ],
    ids=["key-as-variable-name", "params-api-key", "params-openai-api-key", "api-key-field"],
)
def test_a_key_written_into_a_pool_file_is_refused_without_echoing_it(tmp_path: Path, body: str, part: str) -> None:
    pool = write(tmp_path / "pool.yaml", "models:\n  - spec: openai:gpt-4o-mini\n" + body + "roles: [Algebra]\n")
    line = assert_one_error_line(invoke("pool", "show", str(pool)), 2, "pool.yaml", part)
    assert KEY not in line


def test_a_missing_pool_file_and_a_folder_are_one_line(tmp_path: Path) -> None:
    assert_one_error_line(invoke("pool", "show", str(tmp_path / "none.yaml")), 2, "none.yaml: pool file not found")
    assert_one_error_line(invoke("pool", "show", str(tmp_path)), 2, "cannot read the pool file")


def test_eval_and_solve_refuse_a_bad_pool_before_running(tmp_path: Path) -> None:
    pool = write(tmp_path / "role.yaml", POOLS[2][1])
    dataset = write(tmp_path / "ok.jsonl", GOOD_LINE)
    out = tmp_path / "run"
    result = invoke("eval", "--dataset", str(dataset), "--pool", str(pool), "--out", str(out), "--quiet")
    assert_one_error_line(result, 2, "role.yaml: roles[0]: unknown role 'Astrology'")
    assert not (out / "results.jsonl").exists()
    result = invoke("solve", "What is 2+2?", "--pool", str(pool))
    assert_one_error_line(result, 2, "role.yaml: roles[0]: unknown role 'Astrology'")


UNSET_KEY_POOL = """\
models:
  - spec: openai:some-model
    base_url: http://127.0.0.1:9/v1
    api_key_env: RESO_TEST_UNSET_KEY_VAR
    price_in: 1.0
    price_out: 2.0
roles: [Algebra]
"""


def test_an_unset_api_key_variable_is_named_before_any_call(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.delenv("RESO_TEST_UNSET_KEY_VAR", raising=False)
    pool = write(tmp_path / "pool.yaml", UNSET_KEY_POOL)
    expected = "environment variable RESO_TEST_UNSET_KEY_VAR (api_key_env) is not set or empty"
    assert_one_error_line(invoke("solve", "What is 2+2?", "--pool", str(pool)), 2, "openai:some-model", expected)
    dataset = write(tmp_path / "ok.jsonl", GOOD_LINE)
    out = tmp_path / "run"
    result = invoke("eval", "--dataset", str(dataset), "--pool", str(pool), "--out", str(out), "--quiet")
    assert_one_error_line(result, 2, expected)
    assert not (out / "results.jsonl").exists()


# -- options of `reso solve` and `reso eval` ------------------------------------------------------------------

@pytest.mark.parametrize(
    ("args", "parts"),
    [
        (("solve", "q?", "--set", "plan.planner=magic"),
         ["--set: plan.planner: Input should be 'auto', 'structural', 'llm' or 'given', got 'magic'"]),
        (("solve", "q?", "--set", "plan.planner_model=no-colon"),
         ["plan.planner_model 'no-colon' is not a model spec"]),
        (("solve", "q?", "--scorer", "magic"), ["scorer 'magic': unknown scorer kind 'magic'"]),
        (("solve", "q?", "--set", "asking.k=0"), ["asking.k must be >= 1, got 0"]),
        (("solve", "   "), ["no question given: the question in the argument is empty"]),
        (("plan", ""), ["no question given: the question in the argument is empty"]),  # one reader for both
        (("solve", "q?", "--file", "q.txt"), ["give the question either as an argument or with --file, not both"]),
        (("plan", "q?", "--planner", "magic"), ["unknown planner 'magic'"]),
        (("plan", "q?", "--planner", "llm", "--planner-model", "no-colon"), ["--planner-model 'no-colon' is not a model spec"]),
    ],
)
def test_bad_options_are_one_line(args: tuple[str, ...], parts: list[str]) -> None:
    assert_one_error_line(invoke(*args), 2, *parts)


def test_eval_refuses_bad_options_before_running(tmp_path: Path) -> None:
    dataset = write(tmp_path / "ok.jsonl", GOOD_LINE)
    out = tmp_path / "run"
    for args, part in [(("--method", "single:nobody"), "no agent or model 'nobody' in pool"),
                       (("--method", "vote:1"), "a vote needs K ≥ 2 models"),
                       # Who votes is read from training records: a pool without a trained DADB has none (the
                       # default pool's shipped DADB has).
                       (("--method", "vote:2", "--pool", str(two_model_pool_path())), "the DADB has none"),
                       (("--method", "cascade:gpt-4-1106-preview"), "expected cascade:A,B>C"),
                       (("--set", "plan.integration=maybe"),
                        "--set: plan.integration: Input should be 'tool' or 'select', got 'maybe'"),
                       (("--set", "asking.rule=confidence", "--set", "asking.k_max=3"),
                        "needs both asking.confidence and asking.k_max"),
                       (("--set", "asking.rule=confidence", "--set", "asking.k_max=3", "--set", "asking.confidence=1.5"),
                        "asking.confidence must be in [0, 1], got 1.5"),
                       (("--set", "asking.rule=always"),
                        "--set: asking.rule: Input should be 'priced', 'confidence' or 'fixed', got 'always'"),
                       (("--set", "asking.confidence=0.8"), "asking.confidence is read by asking.rule 'confidence' only"),
                       (("--answer-value", "-1"), "answer_value_usd must be a USD amount > 0"),
                       (("--scorer", "magic"), "unknown scorer kind 'magic'"),
                       (("--limit", "-1"), "limit must be >= 0"),
                       (("--pool", f"replay:{tmp_path / 'none.jsonl'}"), "none.jsonl: replay file not found")]:
        result = invoke("eval", "--dataset", str(dataset), "--out", str(out), "--quiet", *args)
        assert_one_error_line(result, 2, part)
    assert not (out / "results.jsonl").exists()


# -- question files -------------------------------------------------------------------------------------------

@pytest.mark.parametrize("command", ["plan", "solve"])
def test_question_files_that_are_not_utf8_or_missing(tmp_path: Path, command: str) -> None:
    latin1 = write(tmp_path / "q.txt", "What is 2 € + 2?".encode("cp1252"))
    assert_one_error_line(invoke(command, "--file", str(latin1)), 2,
                          f"cannot read question file {latin1}: not valid UTF-8 (byte 0x80 at offset 10)")
    missing = tmp_path / "none.txt"
    assert_one_error_line(invoke(command, "--file", str(missing)), 2,
                          f"cannot read question file {missing}: No such file or directory")


# -- planner output that is no plan ---------------------------------------------------------------------------

CYCLE = {"steps": [{"id": "a", "instruction": "Use Answer[b].", "depends_on": ["b"]},
                   {"id": "b", "instruction": "Use Answer[a].", "depends_on": ["a"]}]}


@pytest.mark.parametrize(
    ("reply", "note"),
    [
        ("Let me think: first add, then multiply.", "no complete JSON object with the plan's steps"),
        ("", "no complete JSON object with the plan's steps"),
        (json.dumps(CYCLE), "steps form a cycle: 'a' needs 'b' needs 'a'"),
        (json.dumps({"steps": []}), "steps: List should have at least 1 item"),
        (json.dumps({"steps": [{"id": "a"}]}), "the plan does not match the schema"),
    ],
    ids=["prose", "empty-text", "cyclic", "no-steps", "no-instruction"],
)
def test_planner_output_that_is_no_plan_falls_back_to_one_step(monkeypatch: pytest.MonkeyPatch, reply: str,
                                                              note: str) -> None:
    monkeypatch.setattr(cli_plan, "_load_model", lambda spec: ScriptedChatModel(script=[reply] * 5))
    result = invoke("plan", PLAN_QUESTION, "--planner", "llm", "--planner-model", "openai:gpt-4o-mini", "--json")
    assert result.exit_code == 0, result.stderr
    assert json.loads(result.stdout) == {"plan": [{"id": "final", "instruction": PLAN_QUESTION, "depends_on": []}]}
    assert "note: attempt 1: " in result.stderr and note in result.stderr
    assert "the question is planned as a single step" in result.stderr
    assert "Traceback" not in result.stderr


def test_a_dangling_dependency_in_planner_output_is_repaired_with_a_note(monkeypatch: pytest.MonkeyPatch) -> None:
    plan = {"steps": [{"id": "a", "instruction": "Add 2 and 3.", "depends_on": ["zz"]},
                      {"id": "b", "instruction": "Multiply Answer[a] by 4.", "depends_on": ["a"]}]}
    monkeypatch.setattr(cli_plan, "_load_model", lambda spec: ScriptedChatModel(script=[json.dumps(plan)]))
    result = invoke("plan", PLAN_QUESTION, "--planner", "llm", "--planner-model", "openai:gpt-4o-mini", "--json")
    assert result.exit_code == 0, result.stderr
    assert [step["depends_on"] for step in json.loads(result.stdout)["plan"]] == [[], ["a"]]
    assert "note: step 'a': dropped the dependency on unknown step 'zz'" in result.stderr


# -- answers with no number -----------------------------------------------------------------------------------

@pytest.mark.parametrize("kind", ["rule", "steps", "consensus"])
def test_answers_with_no_number_score_without_raising(kind: str) -> None:
    items = [ScoreItem(subtask="What is 2+2?", answer=text, reference="4", agent_id=f"agent-{i}")
             for i, text in enumerate(["I am not sure.", "", "\\boxed{}", "The answer is: unknown", "4"])]
    scores = build_scorer(kind).score(items)
    assert len(scores) == len(items)
    assert all(0.0 <= value <= 1.0 for value in scores)
    if kind == "rule":
        assert scores == [0.0, 0.0, 0.0, 0.0, 1.0]


# -- CRM record files -----------------------------------------------------------------------------------------

@pytest.mark.parametrize(
    ("content", "parts"),
    [
        ('{"instruction": "q", "answer": "a", "label": 1}\n{"instruction": "q", "answer": "a"}\n',
         ["records.jsonl:2: field 'label': missing"]),
        ('{"instruction": "q", "answer": "a", "label": 1}\n{"instruction": \n', ["records.jsonl:2: invalid JSON"]),
        (b'{"instruction": "q", "answer": "a", "label": 1}\n{"instruction": "\xff"}\n',
         ["records.jsonl:2: not valid UTF-8 (byte 0xff"]),
        ('{"instruction": "q", "answer": "a", "label": "maybe"}\n',
         ["records.jsonl:1: field 'label': expected 0/1 or true/false"]),
    ],
    ids=["missing-field", "broken-line", "not-utf8", "bad-label"],
)
def test_crm_train_refuses_bad_records(tmp_path: Path, content: str | bytes, parts: list[str]) -> None:
    data = write(tmp_path / "records.jsonl", content)
    out = tmp_path / "crm"
    assert_one_error_line(invoke("crm", "train", "--data", str(data), "--out", str(out)), 2, *parts)
    assert not out.exists()


# -- an enormous question -------------------------------------------------------------------------------------

BIG = ("Janet has 3 apples and buys 4 more. " * 30_000)[:1_000_000]


def test_a_1mb_question_is_planned_whole(tmp_path: Path) -> None:
    question = write(tmp_path / "big.txt", BIG)
    result = invoke("plan", "--file", str(question), "--json")
    assert result.exit_code == 0, result.stderr
    [step] = json.loads(result.stdout)["plan"]
    assert step["instruction"] == BIG.strip()


def test_a_1mb_question_to_the_default_pool_says_there_is_no_recording(tmp_path: Path) -> None:
    question = write(tmp_path / "big.txt", BIG)
    result = invoke("solve", "--file", str(question), "--json")
    assert result.exit_code == 1
    assert json.loads(result.stdout.strip().splitlines()[-1])["answer"] is None
    error, hint = result.stderr.strip().splitlines()[-2:]
    assert error.startswith("error: no answer: every candidate failed: ") and "NoRecordingError" in error
    assert "no recorded answer to this question" in hint and "--pool" in hint
    assert "Traceback" not in result.stderr


def test_a_planner_model_rejecting_the_key_does_not_echo_it(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("OPENAI_API_KEY", KEY)
    rejected = RuntimeError(f"Error code: 401 - Incorrect API key provided: {KEY}")
    monkeypatch.setattr(cli_plan, "_load_model", lambda spec: ScriptedChatModel(script=[rejected] * 3))
    result = invoke("plan", PLAN_QUESTION, "--planner", "llm", "--planner-model", "openai:gpt-4o-mini", "--json")
    assert result.exit_code == 0, result.stderr
    assert "note: attempt 1: the model call failed: RuntimeError: Error code: 401" in result.stderr
    assert KEY not in result.stderr and KEY not in result.stdout


def test_demo_refuses_a_bad_pool_or_an_unset_key_before_starting(tmp_path: Path,
                                                                 monkeypatch: pytest.MonkeyPatch) -> None:
    out = tmp_path / "demo"
    pool = write(tmp_path / "role.yaml", POOLS[2][1])
    assert_one_error_line(invoke("demo", "--pool", str(pool), "--out", str(out)), 2, "unknown role 'Astrology'")
    monkeypatch.delenv("RESO_TEST_UNSET_KEY_VAR", raising=False)
    pool = write(tmp_path / "pool.yaml", UNSET_KEY_POOL)
    assert_one_error_line(invoke("demo", "--pool", str(pool), "--out", str(out)), 2,
                          "RESO_TEST_UNSET_KEY_VAR (api_key_env) is not set or empty")
    assert_one_error_line(invoke("demo", "--level", "extreme", "--out", str(out)), 2,
                          "demo.level must be easy, medium or hard, got 'extreme'")
    assert_one_error_line(invoke("demo", "--world", "flat", "--out", str(out)), 2,
                          "demo.world must be one of many, open, two-model")
    assert not out.exists()


@pytest.mark.parametrize("command", ["eval", "solve"])
def test_a_dadb_file_that_is_not_sqlite_and_a_missing_crm_folder(tmp_path: Path, command: str) -> None:
    bad_db = write(tmp_path / "dadb.sqlite", "not a database, just some text " * 10)
    where = (["eval", "--dataset", str(write(tmp_path / "ok.jsonl", GOOD_LINE)), "--out", str(tmp_path / "run"),
              "--quiet"] if command == "eval" else ["solve", "What is 2+2?"])
    assert_one_error_line(invoke(*where, "--db", str(bad_db)), 2, f"{bad_db}: cannot use as a DADB")
    missing = tmp_path / "no-crm"
    assert_one_error_line(invoke(*where, "--scorer", f"small:{missing}"), 2,
                          f"scorer 'small:{missing}'", "not a small CRM folder")
    assert not (tmp_path / "run" / "results.jsonl").exists()


# -- reso eval's own input errors ------------------------------------------------------------------------

def test_eval_bad_mode_is_one_line(tmp_path: Path) -> None:
    dataset = write(tmp_path / "ok.jsonl", GOOD_LINE)
    result = invoke("eval", "--dataset", str(dataset), "--mode", "exam", "--out", str(tmp_path / "run"), "--quiet")
    assert_one_error_line(result, 2, "--mode: Input should be 'train' or 'test', got 'exam'")


def test_eval_cache_file_that_is_not_sqlite_is_one_line(tmp_path: Path) -> None:
    dataset = write(tmp_path / "ok.jsonl", GOOD_LINE)
    cache = write(tmp_path / "responses.sqlite", "not a database, just some text " * 10)
    result = invoke("eval", "--dataset", str(dataset), "--set", f"run.cache_file={cache}",
                    "--out", str(tmp_path / "run"), "--quiet")
    assert_one_error_line(result, 2, f"{cache}: cannot use as a response cache")


def test_eval_out_that_is_a_file_is_one_line(tmp_path: Path) -> None:
    dataset = write(tmp_path / "ok.jsonl", GOOD_LINE)
    result = invoke("eval", "--dataset", str(dataset), "--out", str(dataset), "--quiet")
    assert_one_error_line(result, 2, str(dataset))


def test_a_byte_order_mark_and_crlf_line_ends_are_accepted(tmp_path: Path) -> None:
    from reso.evals.datasets import load_dataset
    from reso.reward.labelled_records import load_records

    dataset = write(tmp_path / "bom.jsonl", b"\xef\xbb\xbf" + GOOD_LINE.replace("\n", "\r\n").encode())
    assert [problem.id for problem in load_dataset(str(dataset))] == ["a"]
    records = write(tmp_path / "records.jsonl", b'\xef\xbb\xbf{"instruction": "q", "answer": "a", "label": 1}\r\n')
    assert [record.label for record in load_records(records)] == [1]


@pytest.mark.parametrize(
    ("content", "args", "part"),
    [
        ('{"instruction": "q", "answer": "a", "label": 1}\n', (),
         "cannot train on these 1 records: cross-validation needs records from at least two questions"),
        ('{"instruction": "q", "answer": "a", "label": 1}\n{"instruction": "r", "answer": "b", "label": 1}\n',
         ("--cv-folds", "0"), "cannot train on these 2 records: all 2 training records have label 1"),
        ('{"instruction": "q", "answer": "a", "label": 1}\n', ("--kind", "prm"), "--kind prm needs --base"),
    ],
    ids=["one-question", "one-label", "prm-without-base"],
)
def test_crm_train_on_too_little_data_is_one_line(tmp_path: Path, content: str, args: tuple[str, ...],
                                                  part: str) -> None:
    data = write(tmp_path / "records.jsonl", content)
    out = tmp_path / "crm"
    assert_one_error_line(invoke("crm", "train", "--data", str(data), "--out", str(out), *args), 2, part)
    assert not out.exists()


def test_a_dadb_path_that_is_a_folder_is_one_line(tmp_path: Path) -> None:
    assert_one_error_line(invoke("solve", "What is 2+2?", "--db", str(tmp_path)), 2,
                          f"{tmp_path}: cannot open as a DADB")


def test_eval_refuses_a_rerun_with_other_settings_into_the_same_out(tmp_path: Path) -> None:
    dataset = write(tmp_path / "ok.jsonl", GOOD_LINE + '{"id": "b", "question": "What is 3+5?", "answer": "8"}\n')
    out = tmp_path / "run"
    args = ("eval", "--dataset", str(dataset), "--out", str(out), "--set", "selection.embedder=hash:64",
            "--quiet")
    first = invoke(*args, "--limit", "1")
    assert first.exit_code == 0, first.stderr
    rows = (out / "results.jsonl").read_text()
    assert_one_error_line(invoke(*args, "--set", "asking.k=3", "--method", "random"), 2,
                          f"{out}: holds 1 result(s) of a different run (method 'reso' → 'random'; asking.rule "
                          "'priced' → 'fixed'; asking.k 2 → 3)")
    assert (out / "results.jsonl").read_text() == rows
    again = invoke(*args)  # the same values resume, and the larger limit adds the second item
    assert again.exit_code == 0, again.stderr
    assert json.loads(again.stdout)["n"] == 2
    assert (out / "results.jsonl").read_text().startswith(rows)
    (out / "provenance.json").write_text('{"method": 3}')
    assert_one_error_line(invoke(*args), 2, f"{out / 'provenance.json'}: field 'method': Input should be a valid string")


# -- checkpoints of `reso solve` ------------------------------------------------------------------------------

def test_solve_checkpoint_and_thread_errors_are_one_line(tmp_path: Path) -> None:
    from tests.unit_tests.test_cli_solve import JANET

    store = tmp_path / "checkpoints.sqlite"
    assert_one_error_line(invoke("solve", "What is 2+2?", "--thread", "t1"), 2,
                          "--thread needs --checkpoint PATH|postgresql://… (or $RESO_CHECKPOINT_URL)")
    assert_one_error_line(invoke("solve", "What is 2+2?", "--checkpoint", str(store), "--thread", " "), 2,
                          "--thread must not be empty")
    assert_one_error_line(invoke("solve", "--checkpoint", str(store), "--thread", "t1"), 2,
                          f"error: --thread t1: {store} holds no run of this thread to resume; give the question")
    assert invoke("solve", JANET, "--checkpoint", str(store), "--thread", "t1").exit_code == 0
    assert_one_error_line(invoke("solve", "What is 2+2?", "--checkpoint", str(store), "--thread", "t1"), 2,
                          f"error: --thread t1: {store} holds a run of another question ('Janet’s ducks lay",
                          "leave the question out to resume it, or choose another thread")
    assert_one_error_line(invoke("solve", "What is 2+2?", "--checkpoint", str(tmp_path), "--thread", "t1"), 2,
                          f"error: --checkpoint {tmp_path}: cannot open as a checkpoint store: unable to open")
    not_sqlite = write(tmp_path / "notes.txt", "not a database\n")
    assert_one_error_line(invoke("solve", "What is 2+2?", "--checkpoint", str(not_sqlite)), 2,
                          f"error: --checkpoint {not_sqlite}: cannot open as a checkpoint store: file is not a")


def test_an_unreachable_checkpoint_server_is_one_line_without_its_password(tmp_path: Path) -> None:
    pytest.importorskip("langgraph.checkpoint.postgres", reason="the postgres extra is not installed")
    url = f"postgresql://reso:pw-canary-ckpt-1a2b@/reso?host={tmp_path / 'nothing-listens'}"
    result = invoke("solve", "What is 2+2?", "--checkpoint", url, "--thread", "t1")
    line = assert_one_error_line(result, 2, "error: --checkpoint postgresql://reso:***@/reso?host=",
                                 ": cannot open the checkpoint database: connection",
                                 "nothing-listens/.s.PGSQL.5432\" failed: No such file or directory")
    assert "pw-canary-ckpt-1a2b" not in line


# -- path options, checked before any work ------------------------------------------------------------------

# Each: the arguments ({file}: a file, {folder}: a folder, {tmp}: the test's folder) and the one line.
PATH_OPTIONS = [
    (["demo", "--out", "{file}"], "error: --out {file}: not a folder"),
    (["demo", "--out", "{file}/sub"], "error: --out {file}/sub: not a folder ({file} is a file)"),
    (["eval", "--dataset", "gsm8k-mas-easy-test", "--out", "{file}/sub"],
     "error: --out {file}/sub: not a folder ({file} is a file)"),
    (["eval", "--dataset", "gsm8k-mas-easy-test", "--out", "{tmp}/run", "--set", "run.cache_file={folder}"],
     "error: run.cache_file {folder}: a folder, not a file"),
    (["eval", "--dataset", "gsm8k-mas-easy-test", "--out", "{tmp}/run", "--set", "run.cache_file={file}/c.sqlite"],
     "error: run.cache_file {file}/c.sqlite: cannot be made ({file} is a file, not a folder)"),
    (["eval", "--dataset", "gsm8k-mas-easy-test", "--out", "{tmp}/run", "--mode", "train", "--db",
      "{file}/d.sqlite"], "error: --db {file}/d.sqlite: cannot be made ({file} is a file, not a folder)"),
    (["eval", "--dataset", "gsm8k-mas-easy-test", "--out", "{tmp}/run", "--set", "run.data_root={file}"],
     "error: run.data_root {file}: not a folder"),
    (["crm", "train", "--data", "{file}", "--out", "{file}"], "error: --out {file}: not a folder"),
    (["crm", "as-steps", "--data", "{file}", "--out", "{folder}"], "error: --out {folder}: a folder, not a file"),
    (["synth", "gsm8k", "--out", "{folder}"], "error: --out {folder}: a folder, not a file"),
    (["synth", "mas", "--questions", "{file}", "--out", "{file}/x.json"],
     "error: --out {file}/x.json: cannot be made ({file} is a file, not a folder)"),
    (["compare", "{folder}", "--out", "{file}/sub"], "error: --out {file}/sub: not a folder ({file} is a file)"),
    (["frontier", "{folder}", "--out", "{file}/sub"], "error: --out {file}/sub: not a folder ({file} is a file)"),
    (["docs", "--root", "{tmp}/nowhere", "--check"], "error: --root {tmp}/nowhere: no such folder"),
    (["docs", "--root", "{folder}", "--check"], "error: --root {folder}: no README.md there (not the project folder)"),
    (["bench", "dag", "--profile", "{folder}"], "error: --profile {folder}: a folder, not a file"),
    (["bench", "eval", "--profile", "{folder}"], "error: --profile {folder}: a folder, not a file"),
    (["bench", "routing", "--plot", "{folder}"], "error: --plot {folder}: a folder, not a file"),
    (["bench", "faults", "--out", "{file}"], "error: --out {file}: not a folder"),
]


@pytest.mark.parametrize(("args", "line"), PATH_OPTIONS, ids=[" ".join(args[:2]) + f" {i}"
                                                             for i, (args, _) in enumerate(PATH_OPTIONS)])
def test_a_path_option_that_cannot_be_what_it_names_is_one_line_before_any_work(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch, args: list[str], line: str) -> None:
    import reso.evals.jobs.demo
    import reso.evals.runner

    def no_work(*args: object, **kwargs: object) -> None:
        raise AssertionError("the command started its work")

    monkeypatch.setattr(reso.evals.jobs.demo, "run_demo", no_work)
    monkeypatch.setattr(reso.evals.runner, "run_eval", no_work)
    names = {"file": str(write(tmp_path / "afile.txt", "not a folder\n")), "folder": str(tmp_path / "adir"),
             "tmp": str(tmp_path)}
    (tmp_path / "adir").mkdir()
    result = invoke(*(arg.format(**names) for arg in args))
    assert assert_one_error_line(result, 2) == line.format(**names)
    assert sorted(path.name for path in tmp_path.iterdir()) == ["adir", "afile.txt"]  # nothing written


# -- a model's params, checked when the pool loads ----------------------------------------------------------

TYPO_POOL = """\
models:
  - spec: openai:gpt-4o-mini
    api_key_env: RESO_TEST_PARAMS_KEY
    price_in: 0.15
    price_out: 0.6
    params: {max_tokns: 256}
roles: [Algebra]
"""


def test_a_misspelled_model_param_is_refused_when_the_pool_loads_by_every_command(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("RESO_TEST_PARAMS_KEY", "sk-test-not-used")
    pool = write(tmp_path / "pool.yaml", TYPO_POOL)
    out = tmp_path / "run"
    parts = (f"{pool}: models[0] (gpt-4o-mini): params.max_tokns: not a parameter of the openai client",
             "did you mean max_tokens?")
    for args in (["pool", "show", str(pool)], ["solve", "What is 2+2?", "--pool", str(pool)],
                 ["eval", "--dataset", "gsm8k-mas-easy-test", "--pool", str(pool), "--out", str(out), "--quiet"],
                 ["demo", "--pool", str(pool), "--out", str(out)]):
        assert_one_error_line(invoke(*args), 2, *parts)
    assert not out.exists()
    fixed = write(tmp_path / "fixed.yaml", TYPO_POOL.replace("max_tokns", "max_tokens"))
    assert invoke("pool", "show", str(fixed)).exit_code == 0
