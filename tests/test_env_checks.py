"""grpo-run check --env: property checks of an environment's episodes, each fault found and named with the episode
that shows it, and the example calculator passing."""

import json
import subprocess
import sys
import textwrap
import time
from pathlib import Path

import pytest

from grpo_core import EnvironmentSpec
from grpo_core.checks.env_properties import leak
from grpo_core.checks.episodes import EnvironmentUnderTest
from grpo_core.plugins.loading import Environment

from cli_helpers import invoke

ROOT = Path(__file__).resolve().parent.parent
PRODUCTS = ROOT / "examples" / "data" / "products.jsonl"
DATASET = ("--dataset", "local", "--dataset-arg", f"path={PRODUCTS}")

# A sound environment, which each fault below changes in one place.
BASE = '''
import re
import time
from fractions import Fraction

from grpo_core import EnvironmentSpec


def number(value):
    text = str(value) if isinstance(value, (int, str)) and not isinstance(value, bool) else ""
    if len(text) > 40 or not re.fullmatch(r"-?\\d+", text):
        raise ValueError("not a whole number")
    return Fraction(text)


def gold(row):
    a, b = re.findall(r"\\d+", row["prompt"][0]["content"])[:2]
    return [("multiply", {"a": a, "b": b})]


class Calc:
    """Exact multiplication as a tool."""

    def __init__(self):
        self.results = []

    def reset(self, **row):
        self.answer, self.results = row.get("answer"), []

    def multiply(self, a: str, b: str) -> str:
        """Multiply two whole numbers.

        Args:
            a: the first number
            b: the second number

        Returns:
            The product.
        """
        try:
            result = str(number(a) * number(b))
        except ValueError as error:
            return f"error: {error}"
        self.results.append(result)
        return result

    def get_reward(self) -> float:
        return float(str(self.answer) in self.results)


spec = EnvironmentSpec(name="calc", description="Exact multiplication", factory=Calc, columns=("answer",),
                       gold_episode=gold)
'''

FAULTS = {
    "no leak": ('''
    def hint(self, question: str) -> str:
        """Answer a question about the task.

        Args:
            question: what to ask

        Returns:
            A hint.
        """
        return f"I think it is {self.answer}"
''', "", None),
    "do-nothing": ('''
    def get_reward(self) -> float:
        return 1.0 if not self.results else float(str(self.answer) in self.results)
''', "", None),
    "hostile arguments": ("", '''
def number(value):  # None.strip() raises out of the tool
    return Fraction(value.strip())
''', "a=None"),
}


def environment_file(tmp_path, methods: str = "", extra: str = "") -> Path:
    """The base environment with ``methods`` added to (or replacing) its class's, and ``extra`` after it."""
    base = BASE.replace("\n\nspec = ", textwrap.indent(textwrap.dedent(methods), "    ") + "\n\nspec = ", 1)
    path = tmp_path / "env.py"
    path.write_text(base + extra)
    return path


def check(path: Path, *args) -> tuple[int, str]:
    return invoke("check", "--env", f"{path}:spec", *DATASET, "--seed", 0, "--max-examples", 10, *args)


def test_the_sound_environment_passes_with_its_gold_episode(tmp_path):
    code, output = check(environment_file(tmp_path))
    assert code == 0, output
    assert "0 failed" in output and "gold episode" in output


@pytest.mark.parametrize("prop", sorted(FAULTS))
def test_each_fault_fails_its_property_and_shows_the_episode(tmp_path, prop):
    methods, extra, shown = FAULTS[prop]
    code, output = check(environment_file(tmp_path, methods, extra))
    assert code == 1, output
    assert f"env:spec / {prop}\n  {prop} violated" in output, output
    assert "counterexample:" in output and "row: {'prompt': " in output and "calls: " in output
    assert shown is None or shown in output


@pytest.mark.parametrize("state", ["class", "instance"])
def test_state_kept_across_reset_fails_reset_isolation(tmp_path, state):
    if state == "class":  # a list on the class: every instance shares it, and reset never clears it
        methods = '''
        shared = []

        def __init__(self):
            self.results = self.shared

        def reset(self, **row):
            self.answer = row.get("answer")
        '''
    else:  # reset forgets to clear what the episode before found
        methods = '''
        def reset(self, **row):
            self.answer = row.get("answer")
        '''
    code, output = check(environment_file(tmp_path, methods))
    assert code == 1, output
    assert "env:spec / reset isolation\n  reset isolation violated" in output, output
    assert "episode before: calls: [\"multiply(a='964', b='59') -> '56876'\"]" in output


def test_a_wrong_gold_episode_fails_gold_episode(tmp_path):
    path = environment_file(tmp_path, extra='\nspec = EnvironmentSpec(name="calc", description="x", factory=Calc, '
                                             'gold_episode=lambda row: [("multiply", {"a": "2", "b": "3"})])\n')
    code, output = check(path)
    assert code == 1 and "env:spec / gold episode\n  gold episode violated: the declared gold episode earns the high " \
                         "bound 1; it earned 0.0" in output, output


def test_a_hanging_tool_fires_the_limit_and_the_check_ends_in_seconds(tmp_path):
    path = environment_file(tmp_path, '''
    def wait(self, seconds: str) -> str:
        """Wait.

        Args:
            seconds: how long

        Returns:
            Nothing much.
        """
        time.sleep(60)
        return "done"
    ''')
    started = time.monotonic()
    # A subprocess: the hung call's thread is abandoned, and grpo-run leaves at once rather than wait for it.
    done = subprocess.run([sys.executable, "-m", "grpo_core", "check", "--env", f"{path}:spec", *DATASET, "--seed", "0",
                           "--max-examples", "10"], capture_output=True, text=True, timeout=50, cwd=tmp_path)
    assert time.monotonic() - started < 30
    assert done.returncode == 1, done.stdout + done.stderr
    assert "env:spec / time\n  time violated: each call answers within 5 s; wait gave no answer within 5 s, so the " \
           "limit fired" in done.stdout, done.stdout
    assert "wait(seconds=" in done.stdout and "(no answer after 5 s)" in done.stdout
    assert "env:spec / no leak: not checked, a call hung (see time)" in done.stdout


def test_tool_timeout_sets_the_limit_each_call_is_checked_against(tmp_path):
    path = environment_file(tmp_path, '''
    def wait(self, seconds: str) -> str:
        """Wait a little.

        Args:
            seconds: ignored

        Returns:
            done
        """
        time.sleep(0.4)
        return "done"
    ''')
    # A subprocess: grpo-run check leaves at once when a call it abandoned is still running.
    done = subprocess.run([sys.executable, "-m", "grpo_core", "check", "--env", f"{path}:spec", *DATASET, "--seed", "0",
                           "--max-examples", "2", "--tool-timeout", "0.1"], capture_output=True, text=True,
                          timeout=120, cwd=tmp_path)
    assert done.returncode == 1, done.stdout + done.stderr
    assert "time violated: each call answers within 0.1 s; wait gave no answer within 0.1 s" in done.stdout
    code, output = check(path, "--tool-timeout", "0", "--max-examples", "2")
    assert code == 2 and "--tool-timeout" in output and "Traceback" not in output


def test_an_environment_without_get_reward_skips_the_reward_properties(tmp_path):
    path = environment_file(tmp_path, extra="\ndel Calc.get_reward\n")
    code, output = check(path, "--json")
    assert code == 0, output
    report = json.JSONDecoder().raw_decode(output[output.index("{"):])[0]  # a plugin's warning may come around it
    skipped = {r["property"] for r in report["results"] if r["status"] == "skip"}
    assert skipped == {"gold episode", "do-nothing", "bounds"}
    assert any("has no get_reward()" in line for line in report["not_checked"])


def test_the_example_calculator_passes_for_every_seed():
    for seed in range(10):
        code, output = invoke("check", "--env", "examples/environments/calculator.py:Calculator", *DATASET,
                              "--seed", seed, "--max-examples", 5)
        assert code == 0, output


def test_env_needs_a_dataset_and_a_known_environment():
    code, output = invoke("check", "--env", "examples/environments/calculator.py:Calculator")
    assert code == 2 and "--env needs --dataset NAME" in output
    code, output = invoke("check", "--env", "no-such-environment", *DATASET)
    said = [line for line in output.strip().splitlines() if not line.startswith("grpo-run: warning:")]
    assert code == 2 and said[0].startswith("Error: ") and len(said) == 1, output


def test_leak_sees_none_in_a_calculators_gold_call_but_one_in_a_tool_that_tells_the_answer(tmp_path):
    path = environment_file(tmp_path, FAULTS["no leak"][0])
    namespace: dict = {}
    exec(compile(path.read_text(), str(path), "exec"), namespace)  # noqa: S102
    row = json.loads(PRODUCTS.read_text().splitlines()[0])
    gold_call = ("multiply", {"a": "964", "b": "59"})
    for declared in (namespace["gold"], None):  # with the gold episode declared, and without: the product follows
        spec = EnvironmentSpec(name="calc", description="x", factory=namespace["Calc"], gold_episode=declared)
        subject = EnvironmentUnderTest(Environment(spec, {}, "calc"), [row])
        assert leak(subject, row, gold_call) is None
        assert leak(subject, row, ("multiply", {"a": 964, "b": "59"})) is None
        found = leak(subject, row, ("hint", {"question": "what is it?"}))
        assert found is not None and "follows the hidden 'answer' column" in found[0]


def test_gold_episode_may_be_a_module_function_string_imported_on_first_use(tmp_path, monkeypatch):
    (tmp_path / "golds.py").write_text("def gold(row):\n    return [('multiply', {'a': '2', 'b': '3'})]\n")
    monkeypatch.syspath_prepend(str(tmp_path))
    spec = EnvironmentSpec(name="calc", description="x", factory=dict, gold_episode="golds:gold")
    assert spec.gold_episode({}) == [("multiply", {"a": "2", "b": "3"})]


def test_a_two_parameter_gold_episode_gets_the_environments_parameters(tmp_path):
    path = environment_file(tmp_path)
    namespace: dict = {}
    exec(compile(path.read_text(), str(path), "exec"), namespace)  # noqa: S102
    row = json.loads(PRODUCTS.read_text().splitlines()[0])
    seen = []

    def gold(row, params):
        seen.append(params)
        return namespace["gold"](row)

    spec = EnvironmentSpec(name="calc", description="x", factory=namespace["Calc"], gold_episode=gold)
    subject = EnvironmentUnderTest(Environment(spec, {"places": 2}, "calc"), [row])
    assert subject.gold_calls(row) == [("multiply", {"a": "964", "b": "59"})] and seen == [{"places": 2}]
    one = EnvironmentSpec(name="calc", description="x", factory=namespace["Calc"], gold_episode=namespace["gold"])
    assert one.gold_calls(row, {"places": 2}) == [("multiply", {"a": "964", "b": "59"})]  # the row only, as before


def test_the_testing_kit_checks_an_environment_spec_and_returns_the_report(tmp_path):
    import runpy

    from grpo_core.testing import check_environment

    rows = [json.loads(line) for line in PRODUCTS.read_text().splitlines()[:5]]
    sound = runpy.run_path(str(environment_file(tmp_path)))["spec"]
    report = check_environment(sound, rows, seed=0, max_examples=5)
    assert report.ok and report.result("calc", "gold episode").status == "pass"
    broken = runpy.run_path(str(environment_file(tmp_path, FAULTS["do-nothing"][0])))["spec"]
    report = check_environment(broken, rows, seed=0, max_examples=5)  # a failure is reported, not raised
    assert not report.ok and "do-nothing" in report.failed("calc")
    with pytest.raises(TypeError, match="EnvironmentSpec"):
        check_environment(object(), rows)


class RunsCode:
    """A tool environment that reads no column (as the python environment): its output follows the argument only."""

    def reset(self, **row):
        self.tests = row.get("tests") or []

    def run(self, code: str) -> str:
        """Pretend to run a program.

        Args:
            code: the program

        Returns:
            What it printed.
        """
        return f"ran {len(str(code))} characters"


class HandsBackATest(RunsCode):
    def run(self, code: str) -> str:
        """Pretend to run a program, and give away one of the row's hidden tests.

        Args:
            code: the program

        Returns:
            What it printed.
        """
        return f"ran {len(str(code))} characters\n{self.tests[0]}"


CODE_ROWS = [{"prompt": [{"role": "user", "content": f"Write `add{n}(a, b)`, e.g. add{n}(1, 1) returns {n + 2}."}],
              "tests": [f"assert add{n}(2, 3) == {n + 5}", f"assert add{n}(0, 0) == {n}"],
              "solution": f"def add{n}(a, b):\n    return a + b + {n}\n", "entry_point": f"add{n}"} for n in range(4)]


def test_rows_without_an_answer_are_searched_for_every_column_the_prompt_does_not_show():
    from grpo_core.checks.env_properties import hidden_golds
    from grpo_core.testing import check_environment

    sound = EnvironmentSpec(name="runs", description="x", factory=RunsCode)
    subject = EnvironmentUnderTest(Environment(sound, {}, "runs"), CODE_ROWS)
    # the tests and the solution are hidden; the function's name is in the prompt, so showing it gives nothing away
    assert [column for column, _ in hidden_golds(subject, CODE_ROWS[1])] == ["tests", "solution"]
    report = check_environment(sound, CODE_ROWS, seed=0, max_examples=10)
    assert report.ok and "no leak" not in " ".join(report.unchecked()), report.unchecked()
    leaking = EnvironmentSpec(name="leaks", description="x", factory=HandsBackATest)
    report = check_environment(leaking, CODE_ROWS, seed=0, max_examples=10)
    assert report.failed("leaks") == ["no leak"]
    (failure,) = report.failures
    assert "holds the row's hidden 'tests'" in failure.message and "follows the hidden 'tests' column" in failure.message
