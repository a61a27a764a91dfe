"""The tool as the model sees it: what a program printed, its traceback, how it ended, output cut to max_output,
anything that is not a program answered with a message, the call budget, and parameters checked."""

import math

import pytest

from grpo_core import UsageError, Unscored
from grpo_core.testing import HOSTILE_TEXTS

from grpo_env_python import ENVIRONMENT, PythonSandbox, gold_episode
from grpo_env_python.environment import MAX_CODE, NO_OUTPUT, clip, shown
from grpo_reward_code import ProgramRun


def episode(**params) -> PythonSandbox:
    sandbox = PythonSandbox(**params)
    sandbox.reset(prompt=[{"role": "user", "content": "Write add(a, b)."}], tests=["assert add(1, 2) == 3"])
    return sandbox


@pytest.mark.parametrize("code, answer", [
    ("print(6 * 7)", "42"),
    ("def add(a, b):\n    return a + b\n\nprint(add(2, 3), add(-1, 1))", "5 0"),
    ("x = 1", NO_OUTPUT),
    ("import sys\nprint('out')\nprint('err', file=sys.stderr)", "out\nerr"),
    ("import sys\nsys.exit(2)", "[exit status 2]"),
    ("import sys\nprint('partial')\nsys.exit('bye')", "partial\nbye"),  # as a terminal shows it
    ("import os\nos._exit(0)", NO_OUTPUT),
    ("import os, signal\nos.kill(os.getpid(), signal.SIGTERM)", "[killed by signal 15]"),
])
def test_what_a_program_printed_and_how_it_ended(isolated, code, answer):
    assert episode().run_python(code=code) == answer


def test_an_error_shows_the_traceback_of_the_models_own_lines(isolated):
    answer = episode().run_python(code="def f(xs):\n    return xs[3]\n\nprint('calling')\nprint(f([1, 2]))")
    assert answer.startswith("calling\nTraceback (most recent call last):\n")
    assert 'File "<code>", line 5, in <module>' in answer and 'File "<code>", line 2, in f' in answer
    assert answer.endswith("IndexError: list index out of range")
    syntax = episode().run_python(code="print(1")
    assert "SyntaxError" in syntax and "Traceback" not in syntax


def test_limits_are_reported_to_the_model(isolated):
    sandbox = episode(seconds=1)
    assert sandbox.run_python(code="print('go', flush=True)\nwhile True:\n    pass") == (
        "go\n[stopped: the program ran past its 1 s limit]")
    answer = sandbox.run_python(code="while True:\n    print('y' * 1000)")
    assert answer.endswith("[stopped: the program printed more than 64 KiB]") and len(answer) < 1200
    memory = episode(memory_mb=128).run_python(code="x = bytearray(512 * 1024 ** 2)")
    assert "MemoryError" in memory and memory.endswith("\n[the program ran out of memory: it may use 128 MB]")
    forks = sandbox.run_python(code="import os, time\nwhile True:\n    if os.fork() == 0:\n        time.sleep(30)\n"
                                    "        os._exit(0)")
    assert "BlockingIOError" in forks
    assert forks.endswith("[the program could not start another process: it may have 32 at once]")
    files = sandbox.run_python(code="files = [open('/dev/null') for _ in range(1000)]")
    assert files.endswith("[the program could not open another file: it may have 64 open at once]")
    assert sandbox.run_python(code="print('after')") == "after"  # the next call works


def test_a_limit_reached_is_said_as_that_limit_and_a_signal_as_a_signal():
    base = ProgramRun("error", "", "Traceback ...\nMemoryError", 1, limit="memory",
                      limit_note="the program ran out of memory: it may use 64 MB")
    assert shown(base, 1000, 3) == "Traceback ...\nMemoryError\n[the program ran out of memory: it may use 64 MB]"
    cpu = ProgramRun("timeout", "partial\n", limit="cpu", limit_note="stopped: the program used more than its 4 s of "
                     "CPU time (all its threads together)")
    assert shown(cpu, 1000, 3) == "partial\n[stopped: the program used more than its 4 s of CPU time (all its threads " \
        "together)]"
    assert shown(ProgramRun("error", exit_code=-24), 1000, 3) == "[killed by signal 24]"


def test_long_output_keeps_its_start_and_end_within_max_output(isolated):
    answer = episode(max_output=200).run_python(code="for i in range(1000):\n    print(i)\n1/0")
    assert answer.startswith("0\n1\n2\n") and answer.endswith("ZeroDivisionError: division by zero")
    assert "characters cut" in answer and len(answer) < 260
    assert clip("x" * 50, 50) == "x" * 50
    cut = clip("a" * 60 + "b" * 60, 100)
    assert cut.startswith("a" * 50) and cut.endswith("b" * 50) and "(20 characters cut)" in cut


HOSTILE = [None, True, 0, 10 ** 400, math.nan, [], ["print(1)"], {"code": "print(1)"}, "", " \n\t",
           "x" * (MAX_CODE + 1), "9" * 1_000_000]


@pytest.mark.parametrize("value", HOSTILE, ids=[f"{i}-{type(v).__name__}" for i, v in enumerate(HOSTILE)])
def test_anything_but_a_program_is_answered_with_a_message_without_running(value, monkeypatch):
    monkeypatch.setattr("grpo_env_python.environment.run_with_timeouts", lambda *a: pytest.fail("it ran"))
    answer = episode().run_python(code=value)
    assert answer.startswith("error: ") and len(answer) < 200


@pytest.mark.parametrize("label, text", [(label, text) for label, text in HOSTILE_TEXTS if len(text) <= MAX_CODE])
def test_hostile_texts_run_as_programs_and_come_back_as_text(isolated, label, text):
    answer = episode().run_python(code=text)
    assert isinstance(answer, str) and 0 < len(answer) <= 1100


def test_calls_past_the_budget_are_refused_and_reset_gives_a_new_budget(isolated):
    sandbox = episode(max_calls=2)
    assert sandbox.run_python(code="print(1)") == "1"
    assert sandbox.run_python(code=None).startswith("error: code must be")  # a refused call counts too
    assert sandbox.run_python(code="print(3)") == ("error: no calls left in this episode (it allows 2); give your "
                                                   "answer")
    sandbox.reset(prompt="again")
    assert sandbox.run_python(code="print(4)") == "4"


def test_reset_keeps_nothing_of_the_row(isolated):
    sandbox = PythonSandbox()
    before = dict(vars(sandbox))
    sandbox.reset(prompt="Write add.", tests=["assert add(1, 2) == 3"], solution="def add(a, b): return a + b",
                  answer="3")
    assert vars(sandbox) == before  # only the call count, back at zero


def test_what_the_backend_gives_back_on_a_stopped_or_failed_call():
    assert shown(Unscored("timeout", "took longer than 8 s"), 1000, 3.0) == (
        "error: the program gave no answer within 8 s and was stopped")
    assert shown(Unscored("error", "OSError: no space\nmore"), 1000, 3.0) == (
        "error: the program could not be run: OSError: no space")
    assert shown(ProgramRun("sandbox", detail="bwrap: setting up uid map: Permission denied"), 1000, 3.0) == (
        "error: the sandbox failed to start: bwrap: setting up uid map: Permission denied")


@pytest.mark.parametrize("params, says", [
    ({"seconds": "0"}, "seconds"), ({"seconds": "inf"}, "seconds"), ({"seconds": "nan"}, "seconds"),
    ({"max_calls": "0"}, "max_calls"), ({"max_output": "10"}, "max_output"), ({"memory_mb": "8"}, "memory_mb"),
    ({"sandbox": "docker"}, "sandbox"),
])
def test_bad_parameters_are_refused_with_their_name(params, says):
    with pytest.raises((UsageError, ValueError), match=says):
        PythonSandbox(**ENVIRONMENT.resolve(params))


def test_the_tool_schema_trl_reads():
    from transformers.utils import get_json_schema

    schema = get_json_schema(PythonSandbox.run_python)
    assert schema["function"]["name"] == "run_python"
    assert schema["function"]["parameters"]["properties"]["code"]["type"] == "string"
    assert schema["function"]["parameters"]["required"] == ["code"]
    assert "sandbox" in schema["function"]["description"]


def test_the_gold_episode_runs_the_reference_solution_on_the_prompts_example(isolated, code_tasks):
    for row in list(code_tasks)[:10]:
        ((tool, args),) = gold_episode(row)
        example = row["prompt"][-1]["content"].split("returns `")[1].split("`")[0]
        assert tool == "run_python" and episode().run_python(**args) == example
    assert gold_episode({"prompt": "What is 2 + 2?", "answer": "4"}) == []


def test_running_without_the_sandbox_warns_once(capsys, monkeypatch):
    monkeypatch.setattr("grpo_env_python.environment._warned", set())
    PythonSandbox(sandbox="none")
    PythonSandbox(sandbox="none")
    assert capsys.readouterr().err.count("warning: environment 'python' runs model-written code with sandbox=none") == 1
