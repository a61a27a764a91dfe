"""Rewards and datasets named by a path: ``--reward file.py:function`` and ``--reward module:function``."""

import os
import subprocess
import sys
import textwrap
import time
from pathlib import Path

import pytest
import yaml

import grpo_core
from grpo_core.rundir import record
from grpo_core.rundir.folder import run_differences
from grpo_core.settings.layers import flag_layer, settings_from_options
from grpo_core.training.resolve import resolve

from cli_helpers import folder_hash, invoke

ROOT = Path(__file__).resolve().parents[1]
BREVITY = ROOT / "examples" / "rewards" / "brevity.py"

LENGTHY = '''
import time

def score(completion, answer, bonus: float = 0.0, label="x", table=None):
    """Half a point for the answer anywhere, plus the bonus."""
    if completion == "hang":
        time.sleep(30)
    return (0.5 if answer in completion else 0.0) + bonus

score.bounds = (0, 2)
'''


def write(folder: Path, name: str, text: str) -> Path:
    path = folder / name
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(textwrap.dedent(text))
    return path


def test_a_file_reward_reads_its_columns_and_parameters_from_its_signature(tmp_path):
    path = write(tmp_path, "lengthy.py", LENGTHY)
    reward, = grpo_core.load_rewards([f"{path}:score"], params={"lengthy:score": {"bonus": "0.25"}})
    assert reward.__name__ == "lengthy:score"
    assert reward.spec.columns == ("answer",) and reward.spec.bounds == (0.0, 2.0)
    assert {p.name: p.type for p in reward.spec.params} == {"bonus": float, "label": str, "table": str,
                                                            "answer_column": str}  # any column can stand for it
    assert reward.params == {"bonus": 0.25, "label": "x", "table": None, "answer_column": None}
    assert reward.score(completions=["it is 4", "no"], answer=["4", "4"]) == [0.75, 0.25]


def test_parameters_and_weights_reach_a_path_reward_by_either_name(tmp_path, monkeypatch):
    write(tmp_path, "rewards/lengthy.py", LENGTHY)
    monkeypatch.chdir(tmp_path)
    given = flag_layer(rewards=["./rewards/lengthy.py:score=2"],
                       reward_args=["./rewards/lengthy.py:score.bonus=0.5", "lengthy:score.label=y"])
    assert given["rewards"] == ["./rewards/lengthy.py:score"] and given["weights"] == {"./rewards/lengthy.py:score": 2.0}
    reward, = grpo_core.load_rewards(given["rewards"], params=given["reward_args"], weights=given["weights"])
    assert (reward.weight, reward.params["bonus"], reward.params["label"]) == (2.0, 0.5, "y")


def test_a_weight_follows_the_last_equals_sign_only_where_it_could_be_a_number():
    assert flag_layer(rewards=["./lr=0.1/r.py:score"])["weights"] == {}
    assert flag_layer(rewards=["./lr=0.1/r.py:score=3"])["weights"] == {"./lr=0.1/r.py:score": 3.0}
    assert flag_layer(rewards=["math=2"])["weights"] == {"math": 2.0}


def test_a_config_file_selects_a_path_reward_with_its_weight(tmp_path, monkeypatch):
    write(tmp_path, "my.py", LENGTHY)
    config = write(tmp_path, "run.yaml", "rewards: [./my.py:score=2, math]\nreward_args: {my:score: {bonus: 1}}\n")
    monkeypatch.chdir(tmp_path)
    settings = settings_from_options(config_file=str(config), dataset="arithmetic", model="tiny-random")
    run = resolve(settings, log=lambda m: None, load_dataset=False)
    assert [(r.__name__, r.weight) for r in run.rewards] == [("my:score", 2.0), ("math", 1.0)]
    assert run.rewards[0].params["bonus"] == 1.0


def test_run_config_records_the_absolute_path_and_reloads_from_another_folder(tmp_path, monkeypatch):
    write(tmp_path, "work/my.py", LENGTHY)
    monkeypatch.chdir(tmp_path / "work")
    settings = settings_from_options(rewards=("./my.py:score=2",), reward_args=("my:score.bonus=1",),
                                     dataset="arithmetic", model="tiny-random", output_dir=str(tmp_path / "out"))
    run = resolve(settings, log=lambda m: None, load_dataset=False)
    saved = record.run_config(run)
    assert saved["rewards"] == [f"{tmp_path / 'work' / 'my.py'}:score=2"]
    config = tmp_path / "run_config.yaml"
    config.write_text(yaml.safe_dump(saved))
    elsewhere = tmp_path / "elsewhere"
    elsewhere.mkdir()
    monkeypatch.chdir(elsewhere)
    again = resolve(settings_from_options(config_file=str(config)), log=lambda m: None, load_dataset=False)
    assert [r.__name__ for r in again.rewards] == ["my:score"] and again.rewards[0].params["bonus"] == 1.0
    assert run_differences(saved, record.run_config(again)) == []


def test_a_file_reward_with_a_timeout_runs_in_the_worker_pool(tmp_path):
    path = write(tmp_path, "slowly.py", LENGTHY + "score.timeout = 0.5\n")
    reward, = grpo_core.load_rewards([f"{path}:score"])
    assert isinstance(reward, grpo_core.ConcurrentReward)
    started = time.monotonic()
    assert reward.score(completions=["4", "hang", "x"], answer=["4", "4", "4"]) == [0.5, None, 0.0]
    assert time.monotonic() - started < 20


def test_a_file_function_pickles_as_its_path_and_name(tmp_path):
    import pickle

    path = write(tmp_path, "lengthy.py", LENGTHY)
    reward, = grpo_core.load_rewards([f"{path}:score"])
    code = (f"import pickle, sys; f = pickle.loads({pickle.dumps(reward.spec.func)!r}); "
            "print(f('it is 4', answer='4'))")
    done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, cwd=ROOT)
    assert done.stdout.strip() == "0.5", done.stderr


def test_a_module_path_reward_is_found_in_the_current_folder(tmp_path, monkeypatch):
    write(tmp_path, "pkg_by_path_test/__init__.py", "")
    write(tmp_path, "pkg_by_path_test/scoring.py", LENGTHY)
    monkeypatch.chdir(tmp_path)
    monkeypatch.setattr(sys, "path", [p for p in sys.path if p not in ("", str(tmp_path))])
    reward, = grpo_core.load_rewards(["pkg_by_path_test.scoring:score"])
    assert reward.__name__ == "pkg_by_path_test.scoring:score"
    assert reward.score(completions=["4"], answer=["4"]) == [0.5]


def test_two_files_with_one_name_are_refused_naming_both(tmp_path):
    a, b = write(tmp_path, "a/same.py", LENGTHY), write(tmp_path, "b/same.py", LENGTHY)
    with pytest.raises(grpo_core.UsageError, match="would both be named 'same:score'"):
        grpo_core.load_rewards([f"{a}:score", f"{b}:score"])


def test_remote_names_are_not_paths():
    import socket

    with socket.socket() as sock:  # a port nothing listens on
        sock.bind(("127.0.0.1", 0))
        port = sock.getsockname()[1]
    url = f"http://127.0.0.1:{port}"
    with pytest.raises(grpo_core.UsageError, match=f"reward 'remote:math': cannot reach {url}/rewards"):
        grpo_core.load_rewards(["remote:math"], params={"remote:math": {"url": url}})


BAD = {
    "missing file": ("{tmp}/nope.py:score", "file '{tmp}/nope.py' does not exist"),
    "import fails": ("{tmp}/broken.py:score", "importing file '{tmp}/broken.py' failed: ZeroDivisionError: "
                                              "division by zero (line 2)"),
    "syntax error": ("{tmp}/syntax.py:score", "failed: SyntaxError: "),
    "missing function": ("{tmp}/ok.py:scor", "has no function 'scor' (did you mean 'score'?); its functions: bounded, score"),
    "not callable": ("{tmp}/ok.py:LIMIT", "is not a function but a int value"),
    "bad bounds": ("{tmp}/ok.py:bounded", "its .bounds must be (low, high)"),
    "no module": ("no_such_module_xyz:score", "there is no module 'no_such_module_xyz'"),
    "colon in path": ("{tmp}/a:b.py:score", "a ':' inside the path is not supported"),
    "a folder": ("{tmp}:score", "is a folder; name a file in it"),
    "no function named": ("{tmp}/ok.py", "names a file but no function; write --reward {tmp}/ok.py:FUNCTION"),
}


@pytest.mark.parametrize("name", list(BAD))
def test_a_bad_path_is_one_line_exit_2_and_touches_nothing(tmp_path, name):
    write(tmp_path, "broken.py", "import os\nx = 1 / 0\n")
    write(tmp_path, "syntax.py", "def score(:\n")
    write(tmp_path, "ok.py", "LIMIT = 3\ndef score(completion):\n    return 1.0\n"
                             "def bounded(completion):\n    return 1.0\nbounded.bounds = (1, 0)\n")
    out = tmp_path / "out"
    out.mkdir()
    (out / "notes.txt").write_text("kept")
    before = folder_hash(out)
    spelled, message = (text.format(tmp=tmp_path) for text in BAD[name])
    code, output = invoke("--reward", spelled, "--dataset", "arithmetic", "--model", "tiny-random",
                          "--output-dir", out)
    errors = [line for line in output.splitlines() if line.startswith("Error:")]
    assert code == 2 and len(errors) == 1 and message in errors[0], output
    assert folder_hash(out) == before


def test_a_bad_path_fails_before_trl_is_imported(tmp_path):
    code = ("import sys\nfrom grpo_core.cli import cli\n"
            f"try:\n    cli(['--reward', '{tmp_path}/nope.py:score', '--dataset', 'arithmetic'])\n"
            "except SystemExit as exit:\n    print(exit.code, 'trl' in sys.modules, 'torch' in sys.modules)\n")
    done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, cwd=ROOT)
    assert done.stdout.split() == ["2", "False", "False"], done.stderr


def test_a_dataset_from_a_file_gives_rows_and_takes_its_parameters(tmp_path, monkeypatch):
    write(tmp_path, "data.py", '''
        def rows(size: int = 3):
            return [{"prompt": f"What is {i} + 1?", "answer": str(i + 1)} for i in range(size)]
        ''')
    monkeypatch.chdir(tmp_path)
    data = grpo_core.load_dataset("./data.py:rows", {"size": "5"})
    assert len(data) == 5 and data[4] == {"prompt": "What is 4 + 1?", "answer": "5"}
    settings = settings_from_options(rewards=("math",), dataset="./data.py:rows", model="tiny-random")
    run = resolve(settings, log=lambda m: None)
    assert len(run.dataset) == 3 and record.run_config(run)["dataset"] == f"{tmp_path / 'data.py'}:rows"


def test_grpo_run_check_checks_the_example_file_reward():
    code, output = invoke("check", "--reward", f"{BREVITY}:score", "--max-examples", "5", "--seed", "1")
    assert code == 0, output
    assert "brevity:score" in output and "0 failed" in output


@pytest.mark.slow
def test_a_file_reward_trains(tmp_path, cache_dir, monkeypatch):
    monkeypatch.chdir(ROOT)
    out = tmp_path / "out"
    code, output = invoke("--reward", "./examples/rewards/brevity.py:score", "--dataset", "arithmetic",
                          "--model", "tiny-random", "--max-steps", "2", "--output-dir", out)
    assert code == 0, output
    saved = yaml.safe_load((out / "run_config.yaml").read_text())
    assert saved["rewards"] == [f"{BREVITY}:score=1"]
    assert "rewards/brevity:score/mean" in (out / "metrics.jsonl").read_text()
