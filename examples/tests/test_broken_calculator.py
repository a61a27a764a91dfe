"""The broken example calculator fails the environment checks its three bugs break, and only those, in
check_environment and in `grpo-run check --env` (the run docs/plugin-authors.md shows)."""

import importlib.util
import json
from pathlib import Path

import pytest
from click.testing import CliRunner

EXAMPLE = Path(__file__).resolve().parents[1] / "environments" / "broken_calculator.py"
FAILED = ["reset isolation", "do-nothing", "no leak", "hostile arguments"]


@pytest.fixture(scope="module")
def example():
    spec = importlib.util.spec_from_file_location("broken_calculator", EXAMPLE)
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


@pytest.fixture(scope="module")
def products():
    from grpo_core import load_dataset

    return load_dataset("products", {"size": 20})


def test_check_environment_fails_what_the_bugs_break(example, products):
    from grpo_core.testing import check_environment

    report = check_environment(example.SPEC, products, seed=0, max_examples=10)
    assert not report.ok
    assert report.failed("broken-calculator") == FAILED
    assert not report.unchecked()  # the spec beside the class declares the gold episode, which passes


def test_grpo_run_check_fails_it_by_path(example):
    from grpo_core.testing import grpo_run

    result = CliRunner().invoke(grpo_run, ["check", "--env", f"{EXAMPLE}:SPEC", "--dataset", "products", "--seed", "0",
                                           "--max-examples", "10", "--json"])
    assert result.exit_code == 1, result.output
    report = json.loads(result.output[result.output.index("{"):])
    assert [r["property"] for r in report["results"] if r["status"] == "fail"] == FAILED
