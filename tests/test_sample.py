"""The held-out prompts of a run's comparison are never trained on, and the comparison shows the change."""

import json
import warnings

import pytest

from grpo_core.plugins import get_registry
from grpo_core.settings.layers import settings_from_options
from grpo_core.training.sample import comparison_heading, format_comparison, held_out_rows, question_text


def resolved(name, **args):
    spec = get_registry().dataset(name)
    if spec is None:
        pytest.skip(f"dataset '{name}' is not installed")
    params = spec.resolve(args)
    return spec, params, spec.load(**params)


def test_arithmetic_held_out_questions_come_from_the_test_split_and_are_never_trained_on():
    spec, params, train = resolved("arithmetic", size=2000, difficulty="easy", few_shot=1)
    rows, where = held_out_rows(spec, params, train, 200)
    questions = [question_text(p) for p in rows["prompt"]]
    trained = {m["content"] for prompt in train["prompt"] for m in prompt if m["role"] == "user"}
    assert len(questions) == len(set(questions)) == 200
    assert not set(questions) & trained
    assert "200 distinct test-split questions" in where
    assert rows["prompt"][0][:-1] == train["prompt"][0][:-1]  # same system prompt and worked example as training


def test_a_dataset_without_a_test_split_says_its_held_out_rows_are_trained_on(data_file):
    spec, params, train = resolved("local", path=str(data_file))
    rows, where = held_out_rows(spec, params, train, 3)
    assert list(rows["prompt"]) == list(train["prompt"])[-3:]
    first_line = comparison_heading(spec, params) + where
    assert not first_line.startswith("held-out") and "which training also saw" in first_line
    assert "not a held-out measure" in first_line


def test_only_the_default_run_compares_unless_asked(tmp_path, data_file):
    assert settings_from_options().compare == 200  # grpo-run with no arguments
    custom = dict(rewards=("length",), dataset="local", dataset_args=(f"path={data_file}",), model="tiny-random")
    assert settings_from_options(**custom).compare == 0
    assert settings_from_options(**custom, compare=40).compare == 40
    config = tmp_path / "run.yaml"
    config.write_text("rewards: [length]\nmax_steps: 2\n")
    assert settings_from_options(config_file=str(config)).compare == 0


def test_question_text_is_the_last_user_turn():
    chat = [{"role": "system", "content": "s"}, {"role": "user", "content": "What is 1 + 1?"},
            {"role": "assistant", "content": "<answer>2</answer>"}, {"role": "user", "content": "What is 2 + 3?"}]
    assert question_text(chat) == "What is 2 + 3?"
    assert question_text("plain prompt") == "plain prompt"


def test_comparison_of_two_models_ends_with_the_change():
    results = [{"model": "base (before)", "means": {"math": 0.2, "xml-format": None}},
               {"model": "final (after)", "means": {"math": 0.45, "xml-format": 0.9}}]
    lines = format_comparison(results).splitlines()
    assert lines[-1].split() == ["change", "+0.250", "-"]


@pytest.fixture
def tiny(cache_dir):
    """The tiny random model in eval mode and its tokenizer, padding on the left as held-out generation does."""
    import torch
    from transformers import AutoModelForCausalLM, AutoTokenizer

    from grpo_core.plugins.loading import resolve_model

    path = resolve_model("tiny-random")
    tokenizer = AutoTokenizer.from_pretrained(path)
    tokenizer.padding_side = "left"
    tokenizer.pad_token = tokenizer.pad_token or tokenizer.eos_token
    return AutoModelForCausalLM.from_pretrained(path, dtype=torch.float32).eval(), tokenizer


def test_held_out_generation_shares_the_prompts_head_and_gives_the_plain_generate_completions(tiny):
    import torch

    from grpo_core.training.generation import common_prefix_length, generate_ids, generate_shared_prefix

    model, tokenizer = tiny
    head = "Answer inside <answer></answer>. Example: What is 15 + 4? <answer>19</answer>. Now: "
    texts = [head + q for q in ("What is 4 + 18?", "What is 20 - 3?", "What is 7 + 7? Think.", "Why?")]
    encoded = [tokenizer(text, add_special_tokens=False)["input_ids"] for text in texts]
    assert common_prefix_length(encoded) >= len(tokenizer(head, add_special_tokens=False)["input_ids"]) - 1
    scores = {"max_new_tokens": 6, "do_sample": False, "output_logits": True, "return_dict_in_generate": True}
    with torch.inference_mode():
        padded = tokenizer(texts, return_tensors="pt", padding=True, add_special_tokens=False)
        plain = model.generate(**padded, pad_token_id=tokenizer.pad_token_id, **scores)
        with warnings.catch_warnings(record=True) as caught:
            warnings.simplefilter("always")
            shared, width = generate_ids(model, tokenizer.pad_token_id, encoded, **scores)
        assert not [str(w.message) for w in caught if "past_key_values" in str(w.message)]
        texts_plain = tokenizer.batch_decode(plain.sequences[:, padded["input_ids"].shape[1]:], skip_special_tokens=True)
        texts_shared = generate_shared_prefix(model, tokenizer, encoded, max_new_tokens=6)
    # every step's next-token logits, for every row: positions and padding are those of the plain call
    for plain_step, shared_step in zip(plain.logits, shared.logits, strict=True):
        torch.testing.assert_close(shared_step, plain_step, atol=1e-4, rtol=1e-4)
    assert texts_shared == texts_plain


def test_sampling_takes_the_top_k_it_is_given_and_not_the_models_default(tiny):
    import torch

    from grpo_core.training.generation import generate_shared_prefix, sampling_args

    model, tokenizer = tiny
    encoded = [tokenizer(f"What is {a} + {b}?", add_special_tokens=False)["input_ids"] for a, b in ((4, 18), (20, 3))]
    prompts = encoded * 4
    with torch.inference_mode():
        greedy = generate_shared_prefix(model, tokenizer, prompts, max_new_tokens=8)
        torch.manual_seed(0)
        top_one = generate_shared_prefix(model, tokenizer, prompts, max_new_tokens=8, temperature=1.0, top_k=1)
        torch.manual_seed(0)
        everything = generate_shared_prefix(model, tokenizer, prompts, max_new_tokens=8, temperature=1.0)
    assert top_one == greedy  # the one likeliest token each time is greedy decoding
    assert everything != greedy  # a random model's tokens drawn from its whole vocabulary
    assert sampling_args(1.0) == {"do_sample": True, "temperature": 1.0, "top_k": None}  # not transformers' 50
    assert sampling_args(0.0, top_k=50)["do_sample"] is False


def test_sample_passes_top_k_to_the_sampling(scored):
    code, output = sample("--model", "tiny-random", "--dataset", "arithmetic", "--reward", "math", "-n", "2",
                          "--temperature", "1.0", "--top-k", "20")
    assert code == 0, output
    assert scored[0]["top_k"] == 20 and scored[0]["temperature"] == 1.0


def test_common_prefix_leaves_every_prompt_a_token_to_feed():
    from grpo_core.training.generation import common_prefix_length

    assert common_prefix_length([[1, 2, 3], [1, 2, 3]]) == 2
    assert common_prefix_length([[1, 2, 3], [1, 2]]) == 1
    assert common_prefix_length([[5, 2], [1, 2]]) == 0


# --- grpo-run sample given a run's folder -------------------------------------------------------------


@pytest.fixture
def run_folder(data_file, tmp_path, cache_dir):
    """A finished run's folder as grpo-run leaves it: its run_config.yaml (the length reward with a target, the local
    dataset with few_shot=1, 6-token completions) and final/ (the tiny model)."""
    import shutil

    from grpo_core.plugins.loading import model_path
    from grpo_core.rundir.record import write_run_config
    from grpo_core.training.resolve import resolve

    out = tmp_path / "runs" / "demo"
    out.mkdir(parents=True)
    settings = settings_from_options(rewards=("length",), reward_args=("length.target=3",), dataset="local",
                                     dataset_args=(f"path={data_file}", "few_shot=1", "answer=answer"),
                                     model="tiny-random",
                                     output_dir=str(out), overrides=("max_completion_length=6",))
    write_run_config(resolve(settings, log=lambda m: None, load_dataset=False), out / "run_config.yaml")
    shutil.copytree(model_path("tiny-random"), out / "final")
    return out


@pytest.fixture
def scored(monkeypatch):
    """What sample scored, with nothing generated: each model's (label, path), the rows, rewards and token count."""
    from grpo_core.training import runner

    calls = []

    def score_models(models, rows, rewards, max_new_tokens, temperature=0.0, episodes=None, top_k=0):
        calls.append({"models": models, "rows": rows, "rewards": rewards, "tokens": max_new_tokens,
                      "temperature": temperature, "top_k": top_k})
        return [{"model": label, "n": len(rows), "means": {r.__name__: 0.5 for r in rewards}, "samples": []}
                for label, _ in models]

    monkeypatch.setattr(runner, "score_models", score_models)
    return calls


def sample(*args):
    from cli_helpers import invoke

    return invoke("sample", *args)


def test_sample_of_a_run_folder_scores_its_final_model_on_its_data_with_its_rewards(run_folder, scored):
    code, output = sample("--model", "tiny-random", "--model", run_folder, "-n", "3")
    assert code == 0, output
    assert [call["models"][0][0] for call in scored] == ["tiny-random", str(run_folder / "final")]
    (length,) = scored[0]["rewards"]
    assert length.__name__ == "length" and length.params["target"] == 3 and scored[0]["tokens"] == 6
    assert len(scored[0]["rows"]["prompt"][0]) == 3  # few_shot=1: an example's two turns before the question
    assert f"sample: what is not given here (dataset, rewards, completion length) comes from " \
           f"{run_folder / 'run_config.yaml'}" in output
    assert "prompts: the dataset's last 3 rows, which training also saw" in output and "few_shot=1" in output


def test_what_is_given_to_sample_wins_over_the_run_folder(run_folder, scored, data_file):
    code, output = sample("--model", run_folder, "--reward-arg", "length.target=5", "--dataset-arg", "few_shot=0",
                          "--max-new-tokens", "4", "-n", "2")
    assert code == 0, output
    (call,) = scored
    assert call["rewards"][0].params["target"] == 5 and call["tokens"] == 4
    assert len(call["rows"]["prompt"][0]) == 1 and "few_shot=0" in output


def test_sample_names_the_split_its_held_out_prompts_come_from(scored):
    code, output = sample("--model", "tiny-random", "--dataset", "arithmetic", "--reward", "math", "-n", "4")
    assert code == 0, output
    header = next(line for line in output.splitlines() if line.startswith("prompts: "))
    assert header.startswith("prompts: 4 distinct test-split questions, none of them in the training rows, of "
                             "dataset 'arithmetic' (split=test, "), header
    assert "split=train" not in header
    assert all("What is" in row[-1]["content"] for row in scored[0]["rows"]["prompt"])


@pytest.mark.parametrize("args, expected", [
    (["--model", "{tmp}/runs/demoo"], "model folder '{tmp}/runs/demoo' does not exist"),
    (["--model", "tiny-random", "--reward", "length"], "grpo-run sample needs --dataset, or a run's folder as --model"),
    (["--model", "tiny-random", "--dataset", "local"], "grpo-run sample needs --reward (or --env), or a run's folder"),
    (["--model", "{tmp}/runs/half"], "run folder '{tmp}/runs/half' has no final/ model (the run did not finish); "
                                     "pass one of its checkpoints, e.g. --model {tmp}/runs/half/checkpoint-2"),
])
def test_sample_mistakes_are_one_line_with_exit_status_2(run_folder, scored, tmp_path, args, expected):
    half = tmp_path / "runs" / "half"
    half.mkdir()
    (half / "run_config.yaml").write_text((run_folder / "run_config.yaml").read_text())
    (half / "checkpoint-2").mkdir()
    before = sorted(p.name for p in half.iterdir())
    code, output = sample(*[a.format(tmp=tmp_path) for a in args])
    errors = [line for line in output.splitlines() if line.startswith("Error:")]
    assert code == 2 and len(errors) == 1 and expected.format(tmp=tmp_path) in errors[0], output
    assert "Traceback" not in output and not scored
    assert sorted(p.name for p in half.iterdir()) == before


@pytest.mark.slow
def test_sample_of_a_run_folder_generates_with_its_final_model(run_folder):
    code, output = sample("--model", run_folder, "-n", "2", "--json")
    assert code == 0, output
    (result,) = json.loads(output[output.index("[\n"):output.rindex("]") + 1])
    assert result["model"] == str(run_folder / "final") and result["n"] == 2 and set(result["means"]) == {"length"}
