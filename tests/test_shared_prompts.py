"""Completions of one prompt share its forward pass (grpo_core.training.shared_prompts): the log-probabilities,
entropies and gradients of TRL's own pass, on left-padded prompts of different lengths in any order; each distinct
prompt run once; TRL's pass where no prompt repeats; a warning, once, and TRL's pass where sharing cannot apply."""

import pytest
import torch

from grpo_core import resolve_model
from grpo_core.training import shared_prompts

COMPLETION = 6


@pytest.fixture(scope="module")
def trainer(tmp_path_factory):
    from datasets import Dataset
    from trl import GRPOConfig, GRPOTrainer

    def constant(completions, **columns):
        return [0.0] * len(completions)

    args = GRPOConfig(output_dir=str(tmp_path_factory.mktemp("shared")), use_cpu=True, bf16=False, report_to="none",
                      per_device_train_batch_size=4, num_generations=4, max_completion_length=COMPLETION,
                      gradient_checkpointing=False)  # TRL's default is on; the CPU profiles turn it off
    return GRPOTrainer(model=resolve_model("tiny-random"), reward_funcs=constant, args=args,
                       train_dataset=Dataset.from_list([{"prompt": "What is 2 + 2?"}] * 4))


def batch(prompt_rows: list[int]):
    """Token ids and attention mask of prompts of 9, 5 and 7 tokens (left-padded to 9), row i holding prompt
    ``prompt_rows[i]``, each followed by its own completion of COMPLETION tokens, some cut short (right padding)."""
    generator = torch.Generator().manual_seed(0)
    prompts = [torch.randint(3, 90, (n,), generator=generator) for n in (9, 5, 7)]
    ids, mask = [], []
    for row, which in enumerate(prompt_rows):
        prompt = prompts[which]
        completion = torch.randint(3, 90, (COMPLETION,), generator=generator)
        kept = COMPLETION - row % 3  # 0, 1 or 2 padded tokens at the end
        ids.append(torch.cat([torch.zeros(9 - len(prompt), dtype=torch.long), prompt, completion]))
        pads, ones = torch.zeros(9 - len(prompt), dtype=torch.long), torch.ones(len(prompt) + kept, dtype=torch.long)
        mask.append(torch.cat([pads, ones, torch.zeros(COMPLETION - kept, dtype=torch.long)]))
    return torch.stack(ids), torch.stack(mask)


def scored(function, model, ids, mask):
    """(log-probabilities, entropies, gradient of their masked sum) from ``function``, and the row counts of each
    model call it made."""
    rows = []
    hook = model.register_forward_pre_hook(lambda module, args, kwargs: rows.append(kwargs["input_ids"].size(0)),
                                           with_kwargs=True)
    model.zero_grad()
    try:
        logps, entropies, _ = function(model, ids, mask, COMPLETION, compute_entropy=True)
    finally:
        hook.remove()
    keep = mask[:, -COMPLETION:]
    ((logps * keep).sum() + (entropies * keep).sum()).backward()
    gradient = torch.cat([p.grad.flatten() for p in model.parameters() if p.grad is not None])
    return logps.detach(), entropies.detach(), gradient, rows


@pytest.fixture
def passes(trainer, monkeypatch):
    """(TRL's own pass, the shared pass, the warnings the shared pass gave) on ``trainer``."""
    full = type(trainer)._get_per_token_logps_and_entropies.__get__(trainer)
    monkeypatch.setattr(trainer, "_get_per_token_logps_and_entropies", full)
    # share_prompts wraps the model's generate too: the model's own comes back after the test
    monkeypatch.setattr(trainer.model, "generate", type(trainer.model).generate.__get__(trainer.model))
    warnings: list[str] = []
    shared_prompts.share_prompts(trainer, warnings.append)
    return full, trainer._get_per_token_logps_and_entropies, warnings


@pytest.mark.parametrize("prompt_rows", [[0, 0, 0, 0, 1, 1, 1, 1, 2, 2, 2, 2], [2, 0, 1, 0, 2, 1, 0, 2, 1, 1]])
def test_the_shared_pass_gives_trl_s_log_probabilities_entropies_and_gradients(trainer, passes, prompt_rows):
    full, shared, warnings = passes
    ids, mask = batch(prompt_rows)
    theirs = scored(full, trainer.model, ids, mask)
    mine = scored(shared, trainer.model, ids, mask)
    keep = mask[:, -COMPLETION:].bool()
    assert torch.allclose(mine[0][keep], theirs[0][keep], atol=1e-5)
    assert torch.allclose(mine[1][keep], theirs[1][keep], atol=1e-5)
    assert torch.allclose(mine[2], theirs[2], rtol=1e-4, atol=1e-6)
    assert float(theirs[2].norm()) > 0
    assert warnings == []
    assert theirs[3] == [len(prompt_rows)]  # TRL: every row, prompt and all, in one call
    # the first batch is also compared both ways (3 calls, no gradient), then: the 3 distinct prompts, then every row
    assert mine[3][-2:] == [3, len(prompt_rows)]


def test_distinct_prompts_take_trl_s_pass(trainer, passes):
    full, shared, warnings = passes
    ids, mask = batch([0, 1, 2])
    theirs, mine = scored(full, trainer.model, ids, mask), scored(shared, trainer.model, ids, mask)
    assert torch.equal(mine[0], theirs[0]) and torch.equal(mine[2], theirs[2])
    assert mine[3] == [3] and warnings == []


def test_the_comparison_waits_for_the_first_batch_with_a_prompt_to_share(trainer, passes, monkeypatch):
    """A first batch of distinct prompts takes TRL's pass without spending the comparison: the next batch, whose
    prompts repeat, is still compared before it is shared."""
    full, shared, warnings = passes
    monkeypatch.setattr(shared_prompts, "AGREEMENT_NATS", -1.0)
    scored(shared, trainer.model, *batch([0, 1, 2]))
    assert warnings == []
    ids, mask = batch([0, 0, 1, 1])
    mine, theirs = scored(shared, trainer.model, ids, mask), scored(full, trainer.model, ids, mask)
    assert torch.equal(mine[0], theirs[0])
    assert len(warnings) == 1 and "log-probability differs from the full pass's" in warnings[0], warnings


@pytest.mark.parametrize("breakage, words", [
    ("cache", "TypeError: the model's cache is a DynamicCache, not a plain key/value cache"),
    ("agreement", "ValueError: the completion tokens' log-probability differs from the full pass's by"),
])
def test_where_sharing_cannot_apply_it_says_so_once_and_trl_s_pass_trains(trainer, passes, monkeypatch, breakage,
                                                                            words):
    full, shared, warnings = passes
    if breakage == "cache":
        monkeypatch.setattr(shared_prompts, "plain_cache", lambda cache: False)
    else:
        monkeypatch.setattr(shared_prompts, "AGREEMENT_NATS", -1.0)
    ids, mask = batch([0, 0, 1, 1])
    theirs = scored(full, trainer.model, ids, mask)
    for _ in range(2):
        mine = scored(shared, trainer.model, ids, mask)
        assert torch.equal(mine[0], theirs[0]) and torch.equal(mine[2], theirs[2])
    assert len(warnings) == 1 and words in warnings[0], warnings
    assert "training goes on with TRL's own pass" in warnings[0]
    assert mine[3] == [4]


def test_under_gradient_checkpointing_training_takes_trl_s_pass_and_a_note_says_why(trainer, monkeypatch):
    """Checkpointing runs each layer again without its cache: the training pass is TRL's from the first batch, said
    in one note (not a warning), and generation, which runs without gradients, still shares."""
    full = type(trainer)._get_per_token_logps_and_entropies.__get__(trainer)
    monkeypatch.setattr(trainer, "_get_per_token_logps_and_entropies", full)
    original = type(trainer.model).generate.__get__(trainer.model)
    monkeypatch.setattr(trainer.model, "generate", original)
    monkeypatch.setattr(trainer.args, "gradient_checkpointing", True)
    monkeypatch.setattr(trainer.args, "activation_checkpointing", True, raising=False)
    warnings, notes = [], []
    shared_prompts.share_prompts(trainer, warnings.append, notes.append)
    ids, mask = batch([0, 0, 1, 1])
    theirs = scored(full, trainer.model, ids, mask)
    mine = scored(trainer._get_per_token_logps_and_entropies, trainer.model, ids, mask)
    assert torch.equal(mine[0], theirs[0]) and torch.equal(mine[2], theirs[2])
    assert mine[3] == [4]  # every row with its own copy of its prompt, in one call
    assert warnings == [] and len(notes) == 1, (warnings, notes)
    assert "gradient checkpointing" in notes[0] and "--set gradient_checkpointing=false" in notes[0], notes
    assert trainer.model.generate is not original  # generation shares


@pytest.fixture
def generators(trainer, monkeypatch):
    """(the model's own generate, the shared one, the warnings the shared one gave)."""
    original = type(trainer.model).generate.__get__(trainer.model)
    monkeypatch.setattr(trainer.model, "generate", original)  # and again after the test
    warnings: list[str] = []
    shared_prompts.share_generation(trainer.model, warnings.append)
    shared = trainer.model.generate
    trainer.model.generate = original
    return original, shared, warnings


def test_generation_from_shared_prompts_is_generate_s_own(trainer, generators):
    """Greedy and seeded sampling give the same tokens with the prompts read once as with every copy read;
    the distinct prompts are what the model reads first."""
    model = trainer.model
    original, shared, warnings = generators
    ids, mask = batch([0, 1, 0, 2, 1, 0])
    prompt_ids, prompt_mask = ids[:, :9], mask[:, :9]
    for sample in (False, True):
        outputs = []
        for generate in (original, shared):
            rows = []
            hook = model.register_forward_pre_hook(
                lambda module, args, kwargs: rows.append(tuple(kwargs["input_ids"].shape)), with_kwargs=True)
            torch.manual_seed(0)
            try:
                with torch.no_grad():
                    outputs.append(generate(input_ids=prompt_ids, attention_mask=prompt_mask, max_new_tokens=5,
                                            do_sample=sample, pad_token_id=0, output_logits=True,
                                            return_dict_in_generate=True))
            finally:
                hook.remove()
            if generate is shared:
                assert rows[-6:] == [(3, 8)] + [(6, 1)] * 5  # the three prompts read once, then one token a row
        assert torch.equal(outputs[0].sequences, outputs[1].sequences)
        for theirs, mine in zip(outputs[0].logits, outputs[1].logits):  # each step's logits, row by row
            assert torch.allclose(mine, theirs, atol=1e-5)
    assert warnings == []


def test_a_generation_call_sharing_cannot_serve_is_generate_s_own(generators, monkeypatch):
    original, shared, warnings = generators
    monkeypatch.setattr(shared_prompts, "AGREEMENT_NATS", -1.0)
    ids, mask = batch([0, 0, 1])
    with torch.no_grad():
        torch.manual_seed(0)
        theirs = original(input_ids=ids[:, :9], attention_mask=mask[:, :9], max_new_tokens=3, do_sample=False,
                          pad_token_id=0)
        for _ in range(2):
            mine = shared(input_ids=ids[:, :9], attention_mask=mask[:, :9], max_new_tokens=3, do_sample=False,
                          pad_token_id=0)
            assert torch.equal(mine, theirs)
    expected = "generation no longer shares each prompt's reading (ValueError: the next token's log-probability differs"
    assert len(warnings) == 1 and expected in warnings[0], warnings
