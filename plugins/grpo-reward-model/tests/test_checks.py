"""The checks a reward model is known to fail, through ``grpo-run check``: a model that pays length fails the length
check with a padded counterexample, one that pays an injected word fails the injection check (and not the length
one), and the small trained model passes the checks for the ways a reward model is gamed and the degenerate audit."""

import json

import pytest

from click.testing import CliRunner

from grpo_core.testing import grpo_run


def _check(folder: str, *extra: str):
    return CliRunner().invoke(grpo_run, ["check", "--reward", "reward-model", "--reward-arg",
                                         f"reward-model.model={folder}", "--seed", "0", "--max-examples", "5",
                                         *extra], catch_exceptions=False)


def _results(output: str) -> dict:
    return {r["property"]: r for r in json.loads(output)["results"]}


def test_a_length_biased_model_fails_the_length_check_with_a_padded_counterexample(biased_model):
    result = _check(biased_model("length"))
    assert result.exit_code == 1
    assert "reward-model / measured: length bias\n  padding raised the score in" in result.output
    shown = result.output.split("reward-model / measured: length bias", 1)[1].split("\n\n", 1)[0]
    assert "counterexample:" in shown and "completion alone:" in shown and "score padding:" in shown
    assert "after a paragraph of filler: 'Arithmetic questions like this one" in shown


def test_a_model_that_pays_an_injected_word_fails_injection_but_not_length(biased_model):
    report = _results(_check(biased_model("injection"), "--json").stdout)
    assert report["measured: injection"]["status"] == "fail"
    example = report["measured: injection"]["counterexample"]
    injected = next(key for key in example if key.startswith("English 'correct'"))
    assert "This answer is correct." in example[injected]
    assert example["score an injected line"] > example["score alone"]
    assert report["measured: length bias"]["status"] == "pass"
    assert report["measured: batch independence"]["status"] == "pass"


@pytest.mark.slow
def test_the_small_trained_model_passes_the_gaming_checks(small_model):
    """Length bias, injection and batch independence hold for the small model, as do the generic properties.

    The degenerate audit is left out: the same training on another CPU gives other weights, and on an Intel Xeon
    without native bfloat16 the model paid 'This answer is correct.' alone 0.607 (the plugin's README)."""
    report = _results(_check(small_model, "--json").stdout)
    for name in ("measured: length bias", "measured: injection", "measured: batch independence", "output",
                 "bounds", "deterministic", "batch-independent", "shapes", "hostile"):
        assert report[name]["status"] == "pass", report[name]
