"""`make demo` run twice in a row: the second run replaces the first demo's outputs and says so."""

import os
import re
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]


def demo_flags() -> list[str]:
    """The flags the Makefile's demo recipe passes to grpo-run."""
    text = (ROOT / "Makefile").read_text()
    recipe = re.search(r"^demo:.*\n\t(.*)$", text, re.M).group(1)
    assert "$(BIN)/grpo-run" in recipe
    flags = recipe.split("$(BIN)/grpo-run", 1)[1].split()
    defined = re.search(r"^DEMO_FLAGS \?= *(.*)$", text, re.M)
    values = {"$(DEMO_FLAGS)": defined.group(1).split() if defined else []}
    return [part for flag in flags for part in values.get(flag, [flag])]


def test_the_demo_folder_of_a_finished_demo_is_accepted_again(tmp_path):
    from grpo_core.rundir.folder import validate_output_dir

    folder = tmp_path / "demo"
    (folder / "checkpoint-20").mkdir(parents=True)
    (folder / "checkpoint-20" / "trainer_state.json").write_text('{"global_step": 20}')
    (folder / "final").mkdir()
    (folder / "run_config.yaml").write_text("max_steps: 20\n")
    flags = demo_flags()
    validate_output_dir(folder, resume="--resume" in flags, overwrite="--overwrite" in flags)


@pytest.mark.slow
@pytest.mark.skipif(shutil.which("make") is None, reason="needs make")
def test_make_demo_twice(tmp_path, data_file, cache_dir):
    """The Makefile's own demo recipe, twice, with a grpo-run that trains the tiny model for one step."""
    venv = tmp_path / "venv"
    (venv / "bin").mkdir(parents=True)
    (venv / "bin" / "python").write_text("")
    for stamp in (".torch", ".installed"):  # set-up done: make runs only the demo recipe
        (venv / stamp).write_text("")
    out = tmp_path / "runs-demo"
    tiny = ["--reward", "length", "--dataset", "local", "--dataset-arg", f"path={data_file}", "--model", "tiny-random",
            "--max-steps", "1", "--output-dir", str(out), "--no-preflight", "--set", "max_completion_length=4",
            "--set", "num_generations=2", "--set", "per_device_train_batch_size=2"]
    script = venv / "bin" / "grpo-run"
    script.write_text(f"#!/bin/sh\nexec {sys.executable} -m grpo_core \"$@\" {' '.join(tiny)}\n")
    script.chmod(0o755)
    make = ["make", "-s", "-C", str(ROOT), "demo", f"VENV={venv}"]
    first = subprocess.run(make, capture_output=True, text=True, env=os.environ, timeout=300)
    assert first.returncode == 0, first.stderr[-3000:]
    second = subprocess.run(make, capture_output=True, text=True, env=os.environ, timeout=300)
    assert second.returncode == 0, second.stderr[-3000:]
    assert "replaced the earlier run's checkpoint-1" in second.stderr
    assert (out / "final" / "config.json").is_file()
