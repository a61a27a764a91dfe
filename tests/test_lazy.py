"""Discovery is cheap: help and listings never import the training stack or plugins' heavy dependencies."""

import subprocess
import sys

import pytest

HEAVY = {"torch", "transformers", "trl", "datasets", "peft", "accelerate", "sympy", "jsonschema", "math_verify", "hypothesis"}


def imported_modules(*args):
    result = subprocess.run(
        [sys.executable, "-X", "importtime", "-m", "grpo_core", *args], capture_output=True, text=True, timeout=120
    )
    assert result.returncode == 0, result.stderr[-2000:]
    modules = set()
    for line in result.stderr.splitlines():
        if line.startswith("import time:") and "|" in line:
            name = line.rsplit("|", 1)[1].strip()
            modules.add(name.split(".")[0])
    return modules


@pytest.mark.parametrize("args", [["--help"], ["plugins"], ["plugins", "--json"], ["rewards"], ["datasets"], ["profiles"]])
def test_listing_imports_nothing_heavy(args):
    modules = imported_modules(*args)
    assert "grpo_core" in modules  # the measurement itself works
    assert not modules & HEAVY, f"grpo-run {' '.join(args)} imported {sorted(modules & HEAVY)}"
