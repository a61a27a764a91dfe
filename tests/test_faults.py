"""Fault injection: every mistake a user can make ends in one line and exit status 2, before anything is loaded,
and no failure changes the outputs of an earlier run."""

import json
import os
import struct
import subprocess
import sys
import time

import pytest
import yaml
from click.testing import CliRunner

from grpo_core.rundir import record
from grpo_core import RewardSpec, hookimpl
from grpo_core.rundir import claim
from grpo_core.rundir import folder as rundir
from grpo_core.training.resolve import resolve
from grpo_core.cli import cli
from grpo_core.plugins import registered

from grpo_core.settings.layers import settings_from_options

from cli_helpers import folder_hash, invoke, train_run


def error_line(output: str) -> str:
    lines = [line for line in output.splitlines() if line.startswith("Error:")]
    assert len(lines) == 1, output
    return lines[0]


def run_args(data_file, out, *extra):
    return ["--reward", "length", "--dataset", "local", "--dataset-arg", f"path={data_file}", "--model", "tiny-random",
            "--output-dir", out, "--no-preflight", "--set", "num_generations=2", "--set", "per_device_train_batch_size=2",
            "--max-steps", "4", *extra]


def safetensors_bytes() -> bytes:
    header = json.dumps({"w": {"dtype": "F32", "shape": [2], "data_offsets": [0, 8]}}).encode()
    return struct.pack("<Q", len(header)) + header + b"\0" * 8


@pytest.fixture
def earlier(data_file, tmp_path):
    """An output folder holding an earlier run of ``run_args``: its config, metrics, completions and a checkpoint."""
    out = tmp_path / "out"
    out.mkdir()
    settings = settings_from_options(rewards=("length",), dataset="local", dataset_args=(f"path={data_file}",),
                                     model="tiny-random", output_dir=str(out), max_steps=4,
                                     overrides=("num_generations=2", "per_device_train_batch_size=2"))
    run = resolve(settings, log=lambda m: None, load_dataset=False)
    record.write_run_config(run, out / "run_config.yaml")
    (out / "metrics.jsonl").write_text("".join(json.dumps({"step": s, "reward": 0.5}) + "\n" for s in (1, 2)))
    (out / "completions.jsonl").write_text(json.dumps({"step": 2, "completion": "hi"}) + "\n")
    checkpoint = out / "checkpoint-2"
    checkpoint.mkdir()
    (checkpoint / "trainer_state.json").write_text(json.dumps({"global_step": 2, "log_history": []}))
    (checkpoint / "model.safetensors").write_bytes(safetensors_bytes())
    (out / "notes.txt").write_text("the user's own file")
    return out


def refused(args, expected, folder=None):
    before = folder_hash(folder) if folder is not None else None
    code, output = invoke(*args)
    assert code == 2, output
    line = error_line(output)
    for part in [expected] if isinstance(expected, str) else expected:
        assert part in line, line
    if folder is not None:
        assert folder_hash(folder) == before
    return line


# --- an output folder belongs to one run ------------------------------------------------------


def test_a_folder_holding_another_run_is_refused(data_file, earlier):
    refused(run_args(data_file, earlier), ["holds another run's outputs (checkpoint-2, run_config.yaml", "--resume",
                                          "--overwrite"], earlier)


def test_a_failing_run_with_overwrite_keeps_the_earlier_outputs(data_file, earlier, tmp_path):
    bad = tmp_path / "d.jsonl"
    bad.write_text('{"prompt": "hi"}\n')
    args = run_args(bad, earlier, "--overwrite")
    args[args.index("length")] = "math"
    refused(args, "reward 'math' needs the column 'answer'", earlier)


def test_overwrite_removes_only_what_a_run_wrote_and_says_so(earlier):
    messages = []
    run = type("Run", (), {"settings": type("S", (), {"overwrite": True, "resume": False}),
                           "grpo": {"output_dir": str(earlier)}})
    claim.replace_outputs(run, log=messages.append)
    assert sorted(p.name for p in earlier.iterdir()) == ["notes.txt"]
    replaced = "checkpoint-2, run_config.yaml, metrics.jsonl, completions.jsonl"
    assert messages == [f"--overwrite: replaced the earlier run's {replaced} in {earlier}"]


def test_a_folder_in_use_is_refused_naming_the_holder(data_file, tmp_path):
    out = tmp_path / "busy"
    hold = ("import time; from grpo_core.rundir.folder import RunLock; "
            f"RunLock({str(out)!r}).acquire(); print('locked', flush=True); time.sleep(60)")
    holder = subprocess.Popen([sys.executable, "-c", hold], stdout=subprocess.PIPE, text=True)
    try:
        assert holder.stdout.readline().strip() == "locked"
        before = folder_hash(out)
        in_use = f"output folder '{out}' is in use by another run (pid {holder.pid}"
        refused(run_args(data_file, out), [in_use, "wait for it"], out)
        assert folder_hash(out) == before
    finally:
        holder.kill()
        holder.wait()


def test_a_stale_lock_of_a_dead_process_is_taken_over(tmp_path):
    out = tmp_path / "out"
    dead = subprocess.run([sys.executable, "-c", "import os; print(os.getpid())"], capture_output=True, text=True,
                          check=True)
    out.mkdir()
    (out / rundir.LOCK_FILE).write_text(json.dumps({"pid": int(dead.stdout), "host": "here"}))
    with rundir.RunLock(out) as lock:
        assert json.loads(lock.path.read_text())["pid"] == os.getpid()
        with pytest.raises(Exception, match=f"in use by another run \\(pid {os.getpid()}"):
            rundir.RunLock(out).acquire()
    assert not (out / rundir.LOCK_FILE).exists()


def test_output_folder_that_is_a_file(data_file, tmp_path):
    file = tmp_path / "out"
    file.write_text("not a folder")
    refused(run_args(data_file, file), f"output folder '{file}' is a file; pass a folder path with --output-dir")
    assert file.read_text() == "not a folder"


# --- --resume checks the saved run ------------------------------------------------------------


def test_resume_with_other_settings_names_the_fields(data_file, earlier, tmp_path):
    other = tmp_path / "other-model"  # a model that is there: a missing one is reported before the folder's state
    other.mkdir()
    (other / "config.json").write_text("{}")
    line = refused(run_args(data_file, earlier, "--resume", "--set", "learning_rate=2e-5", "--model", other),
                   ["--resume: the run in", "model ('tiny-random' there, '", "learning_rate (",
                    "--overwrite"], earlier)
    assert "max_steps" not in line


def test_resume_past_max_steps(data_file, earlier):
    args = run_args(data_file, earlier, "--resume")
    args[args.index("--max-steps") + 1] = "2"
    refused(args, "checkpoint-2 is already at step 2 of max_steps=2; raise --max-steps", earlier)


def test_resume_and_overwrite_together(data_file, earlier):
    refused(run_args(data_file, earlier, "--resume", "--overwrite"), "--resume and --overwrite contradict", earlier)


def test_resume_without_a_checkpoint(data_file, tmp_path):
    refused(run_args(data_file, tmp_path / "new", "--resume"), "--resume: no checkpoint in")


@pytest.mark.parametrize("name, damage, why", [
    ("checkpoint-2/model.safetensors", lambda p: p.write_bytes(p.read_bytes()[:-4]), "is damaged (truncated)"),
    ("checkpoint-2/model.safetensors", lambda p: p.write_bytes(b"\x01"), "is damaged (truncated or not a safetensors"),
    ("checkpoint-2/trainer_state.json", lambda p: p.write_text('{"global_step": '), "is damaged (not a JSON trainer"),
    ("checkpoint-2/optimizer.pt", lambda p: p.write_bytes(b"PK\x03\x04 cut"), "is damaged (truncated or not a torch"),
    ("metrics.jsonl", lambda p: p.write_text(p.read_text() + '{"step": 3, "rew'), "line 3 is damaged"),
    ("run_config.yaml", lambda p: p.write_text("model: [unclosed\n"), "is damaged (not a YAML mapping)"),
])
def test_resume_from_damaged_outputs(data_file, earlier, name, damage, why):
    damage(earlier / name)
    line = refused(run_args(data_file, earlier, "--resume"), [why, "--overwrite"], earlier)
    assert name.split("/")[-1] in line


# --- cheap checks come first ------------------------------------------------------------------


def test_num_generations_that_does_not_divide_the_batch(data_file, tmp_path):
    refused(run_args(data_file, tmp_path / "o", "--set", "num_generations=3"),
            ["num_generations=3 does not divide the generation batch of 2 completions", "use num_generations=2"])


def test_hub_model_while_offline_names_the_local_alternative(data_file, tmp_path):
    started = time.monotonic()
    args = run_args(data_file, tmp_path / "o")
    args[args.index("tiny-random")] = "HuggingFaceTB/SmolLM2-135M-Instruct"
    not_cached = "model 'HuggingFaceTB/SmolLM2-135M-Instruct' is not in the local Hugging Face cache and HF_HUB_OFFLINE"
    refused(args, [not_cached, "--model PATH"])
    assert time.monotonic() - started < 10


def test_hub_dataset_while_offline_names_path(tmp_path):
    started = time.monotonic()
    refused(["--reward", "math", "--dataset", "gsm8k", "--model", "tiny-random", "--output-dir", tmp_path / "o",
             "--no-preflight"],
            ["dataset 'gsm8k' needs the Hugging Face hub", "--dataset-arg path=FILE"])
    assert time.monotonic() - started < 10


@pytest.mark.parametrize("text, expected", [
    ("learning_rate: [1, 2]\n", "'learning_rate' expects float, got a list [1, 2]"),
    ("max_steps: {a: 1}\n", "'max_steps' expects int, got a mapping {'a': 1}"),
    ("model: [tiny-random]\n", "'model' expects str, got a list ['tiny-random']"),
    ("compare: yes\n", "'compare' expects int, got a true/false value True"),
    ("reward_args: {length: 3}\n", "reward_args of 'length' must be a mapping"),
])
def test_config_file_value_of_the_wrong_type(data_file, tmp_path, text, expected):
    config = tmp_path / "c.yaml"
    config.write_text(text)
    refused(run_args(data_file, tmp_path / "o", "--config", config), [f"config file '{config}'", expected])


def test_dataset_row_too_short_for_a_reward_column(tmp_path):
    data = tmp_path / "d.csv"
    data.write_text("prompt,answer\nwhat is 1+1,2\nwhat is 2+2\nwhat is 3+3,6\n")
    refused(["--reward", "math", "--dataset", "local", "--dataset-arg", f"path={data}", "--model", "tiny-random",
             "--output-dir", tmp_path / "o", "--no-preflight"],
            "has no value in column 'answer', which reward 'math' reads, in 1 of 3 rows (row 2); fill those rows")


def test_few_shot_beyond_its_bound(data_file, tmp_path):
    refused(["--reward", "math", "--dataset", "arithmetic", "--dataset-arg", "few_shot=100000", "--model", "tiny-random",
             "--dry-run"], "parameter 'few_shot' of dataset 'arithmetic' must be between 0 and 32; got 100000")


def test_dataset_paths_are_literal_and_patterns_explicit(tmp_path):
    from grpo_core.plugins import get_registry

    row = {"prompt": "p", "answer": "1"}
    (tmp_path / "data[1].jsonl").write_text(json.dumps(row) + "\n")
    (tmp_path / "data1.jsonl").write_text(json.dumps({**row, "answer": "2"}) + "\n")
    local = get_registry().dataset("local")
    assert local.load(path=str(tmp_path / "data[1].jsonl"))["answer"] == ["1"]
    assert sorted(local.load(files=str(tmp_path / "data*.jsonl"))["answer"]) == ["1", "2"]
    refused(["--reward", "length", "--dataset", "local", "--dataset-arg", f"path={tmp_path}/*.jsonl", "--model",
             "tiny-random", "--output-dir", tmp_path / "o", "--no-preflight"],
            ["*.jsonl' does not exist", "files=PATTERN"])


# --- a setting has one bound, however it is given ------------------------------------------------

OUT_OF_BOUNDS = [  # (field, --set text, YAML text, what the message says the bound is)
    ("max_steps", "-5", "0", "must be at least 1"),
    ("num_generations", "1", "1", "must be at least 2"),
    ("learning_rate", "-1e-5", "-1.0e-5", "must be at least 0"),
    ("per_device_train_batch_size", "0", "0", "must be at least 1"),
    ("max_completion_length", "0", "-8", "must be at least 1"),
    ("save_steps", "0", "2.5", "must be above 0, and a whole number from 1 on"),
    ("logging_steps", "-1", "0", "must be above 0"),
]


def without(args: list, field: str) -> list:
    """``args`` without the flag or ``--set`` that gives ``field`` (a flag would override the value under test)."""
    args = list(args)
    for flag in ("--max-steps", "--set"):
        for at in [i for i, a in enumerate(args) if a == flag]:
            if flag == "--max-steps" and field == "max_steps" or str(args[at + 1]).startswith(f"{field}="):
                args[at:at + 2] = [None, None]
    return [a for a in args if a is not None]


def shown(field: str, text: str) -> str:
    """How the message shows ``text`` read as ``field``'s type (TRL's *_steps and learning_rate are floats)."""
    value = yaml.safe_load(text)
    return repr(float(value) if field in ("learning_rate", "save_steps", "logging_steps") else value)


@pytest.mark.parametrize("field, value, _yaml, rule", OUT_OF_BOUNDS)
def test_set_value_out_of_bounds_is_refused_before_anything(data_file, earlier, field, value, _yaml, rule):
    # ``earlier`` holds another run: the bad value is reported first, and the folder stays as it was
    line = refused(without(run_args(data_file, earlier), field) + ["--set", f"{field}={value}"],
                   [f"--set: '{field}' (", rule, f"use e.g. {field}="], earlier)
    assert f"got {shown(field, value)}; use e.g. {field}=" in line


@pytest.mark.parametrize("field, _set, value, rule", OUT_OF_BOUNDS)
def test_config_file_value_out_of_bounds_is_refused_before_anything(data_file, earlier, tmp_path, field, _set, value,
                                                                    rule):
    config = tmp_path / "c.yaml"
    config.write_text(f"{field}: {value}\n")
    line = refused(without(run_args(data_file, earlier, "--config", config), field),
                   [f"config file '{config}': '{field}' (", rule],
                   earlier)
    assert f"got {shown(field, value)}; use e.g. {field}=" in line


def test_a_flag_and_set_share_one_bound(data_file, tmp_path):
    args = run_args(data_file, tmp_path / "o")
    args[args.index("--max-steps") + 1] = "0"
    flag = refused(args, "Invalid value for '--max-steps'")
    by_set = refused(without(run_args(data_file, tmp_path / "o"), "max_steps") + ["--set", "max_steps=0"], "--set: ")
    assert flag.split("--max-steps': ")[1] == by_set.split("--set: ")[1]


def test_compare_in_a_config_file_has_its_flag_bound(data_file, tmp_path):
    config = tmp_path / "c.yaml"
    config.write_text("compare: -3\n")
    refused(run_args(data_file, tmp_path / "o", "--config", config), "'compare' (held-out prompts to compare on, 0 "
            "for none) must be at least 0, got -3")


def test_a_choice_field_names_the_close_choice(data_file, tmp_path):
    refused(run_args(data_file, tmp_path / "o", "--set", "lr_scheduler_type=cosin"),
            ["'lr_scheduler_type' expects one of linear, cosine,", "got 'cosin' (did you mean 'cosine'?)"])


# --- input errors come before the output folder, and before the profile line -------------------


def test_a_folder_given_as_the_dataset_file_says_it_is_a_folder(data_file, tmp_path):
    line = refused(run_args(data_file.parent, tmp_path / "o"), [f"dataset file '{data_file.parent}' is a folder",
                                                                f"files='{data_file.parent}/*.jsonl'"])
    assert "does not exist" not in line


def test_a_missing_dataset_is_reported_before_a_leftover_output_folder(data_file, earlier, tmp_path):
    refused(run_args(tmp_path / "nothere.jsonl", earlier), "dataset file", earlier)


def test_a_missing_model_is_reported_before_a_leftover_output_folder(data_file, earlier):
    args = run_args(data_file, earlier)
    args[args.index("tiny-random")] = "org/not-cached"
    refused(args, "model 'org/not-cached' is not in the local Hugging Face cache", earlier)


def test_a_usage_error_prints_no_profile_line(data_file, earlier):
    code, output = invoke(*run_args(data_file, earlier))
    assert code == 2 and "holds another run's outputs" in output
    assert "profile:" not in output, output


# --- plugins and standard output --------------------------------------------------------------


class Chatty:
    @hookimpl
    def register_rewards(self, register):
        print("hello from a chatty plugin")
        register(RewardSpec("chatty", "Always 1", lambda c: 1.0))


def test_a_plugin_that_prints_cannot_corrupt_json_or_dry_run(data_file):
    with registered(Chatty(), distribution="chatty-dist"):
        listing = CliRunner().invoke(cli, ["rewards", "--json"])
        dry = CliRunner().invoke(cli, ["--reward", "chatty", "--dataset", "local", "--dataset-arg",
                                       f"path={data_file}", "--model", "tiny-random", "--dry-run"])
    assert listing.exit_code == 0 and dry.exit_code == 0, listing.output + dry.output
    assert "chatty" in {row["name"] for row in json.loads(listing.stdout)}
    assert json.loads(dry.stdout)["rewards"][0]["name"] == "chatty"
    assert "hello" not in listing.stdout and "hello" not in dry.stdout


def test_dry_run_loads_no_dataset_and_uses_no_network(tmp_path):
    code = ("import sys, time; from click.testing import CliRunner; from grpo_core.cli import cli; "
            "t = time.monotonic(); r = CliRunner().invoke(cli, ['--reward', 'math', '--dataset', 'gsm8k', "
            "'--model', 'HuggingFaceTB/SmolLM2-135M-Instruct', '--dry-run']); "
            "print(r.exit_code, 'datasets' in sys.modules, round(time.monotonic() - t)); print(r.stdout)")
    env = {k: v for k, v in os.environ.items() if not k.startswith(("HF_", "TRANSFORMERS_OFFLINE"))}
    env["HF_ENDPOINT"] = "http://192.0.2.1"  # unroutable: a connection attempt would hang, not fail
    done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, env=env, timeout=120,
                          check=False)
    status, imported, _seconds = done.stdout.splitlines()[0].split()
    assert (status, imported) == ("0", "False"), done.stdout + done.stderr
    resolved = json.loads(done.stdout[done.stdout.index("{"):])
    assert resolved["dataset"]["name"] == "gsm8k" and "rows" not in resolved["dataset"]
    assert "preflight" not in done.stderr


# --- run_config.yaml reproduces the run from any folder ---------------------------------------


def test_run_config_holds_absolute_paths(data_file, tmp_path, monkeypatch):
    monkeypatch.chdir(data_file.parent)
    settings = settings_from_options(rewards=("length",), dataset="local", dataset_args=(f"path={data_file.name}",),
                                     model="tiny-random", output_dir="out")
    run = resolve(settings, log=lambda m: None, load_dataset=False)
    record.write_run_config(run, tmp_path / "run_config.yaml")
    saved = yaml.safe_load((tmp_path / "run_config.yaml").read_text())
    assert saved["dataset_args"]["path"] == str(data_file)
    assert saved["output_dir"] == str(data_file.parent / "out")
    elsewhere = tmp_path / "elsewhere"
    elsewhere.mkdir()
    monkeypatch.chdir(elsewhere)
    again = resolve(settings_from_options(config_file=str(tmp_path / "run_config.yaml")), log=lambda m: None)
    assert len(again.dataset) == 8 and again.grpo == run.grpo


# --- training goes on through a step nothing could score, and never touches the network --------


class Unscorable:
    @hookimpl
    def register_rewards(self, register):
        register(RewardSpec("never", "Scores nothing (an empty gold answer, say)", lambda c: None))


@pytest.mark.slow
def test_steps_where_nothing_scores_train_on_warn_once_and_are_counted(data_file, tmp_path, cache_dir, no_network,
                                                                        capsys):
    settings = settings_from_options(rewards=("never",), dataset="local", dataset_args=(f"path={data_file}",),
                                     model="tiny-random", output_dir=str(tmp_path / "out"), max_steps=2,
                                     overrides=("num_generations=2", "per_device_train_batch_size=2",
                                                "max_completion_length=4"))
    with registered(Unscorable()):
        run = resolve(settings, log=lambda m: None)
        trainer = train_run(run, log=lambda m: None).trainer
    assert trainer.state.global_step == 2
    err = capsys.readouterr().err
    warnings = [line for line in err.splitlines() if "could be scored" in line]
    assert len(warnings) == 1 and "every reward returned None" in warnings[0]
    assert "All reward functions returned None" not in err
    records = [json.loads(line) for line in (tmp_path / "out" / "metrics.jsonl").read_text().splitlines()]
    assert [r["unscored_steps"] for r in records if "reward" in r] == [1, 2]
    assert (tmp_path / "out" / "final" / "config.json").exists()
    assert no_network == []  # the run made no connection attempt (the guard would have failed it, too)
