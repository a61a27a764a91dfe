"""The small model's training pairs: every kind of skipped completion is drawn, each is what its kind says, and none
is a completion the degenerate audit tries (but the empty one and the question copied once, which are the same
whoever writes them), so a model that passes the audit has generalised from the kinds, not memorised the strings."""

import random
import unicodedata
from collections import Counter

import pytest

from grpo_core import load_dataset
from grpo_core.testing import generic_attacks, generic_degenerate, padding_to
from grpo_reward_model.degenerate import INJECTIONS
from grpo_reward_model.pairs import (INVISIBLE, SKIPPED_KINDS, SKIPPED_WEIGHTS, TRAINING_APPEALS, preference_rows,
                                     question_of, skipped)


@pytest.fixture(scope="module")
def rows():
    return list(load_dataset("arithmetic", {"size": 3200, "seed": 0, "few_shot": 0, "system_prompt": ""}))


def _texts(row) -> tuple[str, str, str]:
    return question_of(row["prompt"]), row["chosen"][0]["content"], row["rejected"][0]["content"]


def test_every_skipped_kind_is_drawn_in_a_share_of_the_rows(rows):
    pairs = preference_rows(rows, seed=0, with_kind=True)
    kinds = Counter(pair["kind"] for pair in pairs)
    assert set(kinds) == {"wrong", "filler", "appeal", *SKIPPED_KINDS}
    skipped_rows = sum(kinds[kind] for kind in SKIPPED_KINDS)
    assert 0.2 < skipped_rows / len(pairs) < 0.3  # half of the augmented half
    for kind, weight in zip(SKIPPED_KINDS, SKIPPED_WEIGHTS):  # at least half of its weight's share
        assert kinds[kind] > skipped_rows * weight / sum(SKIPPED_WEIGHTS) / 2, (kind, kinds[kind])
    assert all("kind" not in pair for pair in preference_rows(rows[:50], seed=0))  # what RewardTrainer reads


def test_no_skipped_completion_is_one_the_audit_tries(rows):
    pairs = preference_rows(rows, seed=0, with_kind=True)
    checked = 0
    for pair, row in zip(pairs, rows):
        if pair["kind"] not in SKIPPED_KINDS:
            continue
        question, chosen, rejected = _texts(pair)
        if rejected in ("", question):
            continue  # nothing, and the question copied once: no other way to write them
        # at the lengths the audit uses: its own 1,000 characters, and the length of a right answer
        audit = {text for _, text in generic_degenerate(question) + padding_to(len(chosen))
                 + generic_attacks(question, {"answer": row["answer"]}, [chosen], lengths=[len(chosen)])
                 + generic_attacks(question, {}, [])}
        audit |= {line for _, line in INJECTIONS}
        assert rejected not in audit, (pair["kind"], rejected[:60])
        checked += 1
    assert checked > 600


def _copies(text: str) -> bool:
    """Whether ``text`` is two or more copies of one unit joined by one of the separators a token run uses."""
    for sep in (" ", "", "\n", ", "):
        for k in range(2, len(text) + 1):
            size, rest = divmod(len(text) - (k - 1) * len(sep), k)
            if size > 0 and not rest and text == sep.join([text[:size]] * k):
                return True
    return False


@pytest.mark.parametrize("kind", SKIPPED_KINDS)
def test_each_kind_is_what_it_says_and_holds_no_right_answer(kind):
    rng = random.Random(kind)
    shapes = set()
    for _ in range(200):
        text = skipped(rng, "What is 12 + 7?", 19, kind)
        if kind == "blank":
            assert all(c in INVISIBLE or unicodedata.category(c) == "Co" for c in text)
        elif kind == "whitespace run":
            assert text and not text.strip(" \t\n")
            shapes.add("one blank repeated" if len(set(text)) == 1 else "blanks mixed")
        elif kind == "character run":
            assert len(text) >= 8 and len(set(text[:-1])) == 1 and text != "a" * 1000  # the audit's run: never
        elif kind == "token run":
            assert _copies(text)
        elif kind == "question copied":
            assert text.replace("What is 12 + 7?", "").strip() == ""
        elif kind == "number spray":
            assert "19" in text and len(text.split()) >= 2
        elif kind == "tag without an answer":
            assert "<answer>" in text and not any(c.isdigit() for c in text)
        else:
            assert text in TRAINING_APPEALS
    if kind == "whitespace run":  # spaces alone to 960 characters: trained on, a model is not paid by 1,000 of them
        assert shapes == {"one blank repeated", "blanks mixed"}
    with pytest.raises(ValueError, match="kind must be one of"):
        skipped(rng, "What is 12 + 7?", 19, "nonsense")


def test_held_out_pairs_are_right_against_wrong_only(rows):
    """``examples/reward_model/held_out_pairs.py`` writes these (augment=0): one wrong answer in the same form."""
    assert {pair["kind"] for pair in preference_rows(rows[:400], seed=1, augment=0.0, with_kind=True)} == {"wrong"}
