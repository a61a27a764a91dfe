"""Signature and return-value contracts: what a reward is called with and what it must give back.

TRL calls a reward as reward(prompts=..., completions=..., completion_ids=..., **columns) and needs one float (or
None) per completion. See math_answer.py for what META holds. The buggy ones are wrong on purpose.
"""

from __future__ import annotations

import re


def _answer(text: str) -> str | None:
    i = text.find("<answer>")
    j = text.find("</answer>", i + 8) if i >= 0 else -1
    if i < 0 or j < 0 or text.count("<answer>") != 1:
        return None
    return text[i + 8:j]


def _right(text: str, gold) -> bool:
    body = _answer(text)
    if body is None or not re.fullmatch(r"\s*[-+]?\d{1,30}(\.\d{1,30})?\s*", body):
        return False
    return re.fullmatch(r"-?\d{1,30}", str(gold).strip()) is not None and float(body) == float(gold)


def _text(completion) -> str:
    """The text of a completion in either shape TRL gives: a string, or a list of chat messages."""
    if isinstance(completion, str):
        return completion
    if isinstance(completion, list):
        return "".join(str(m.get("content") or "") for m in completion if isinstance(m, dict))
    return str(completion)


# ---------------------------------------------------------------- buggy


def chat_only_indexing(completions, answer, **kwargs) -> list[float]:
    """open-r1's spelling, completion[0]['content']: it assumes chat messages and raises on plain text."""
    contents = [completion[0]["content"] for completion in completions]
    return [1.0 if _right(c, a) else 0.0 for c, a in zip(contents, answer)]


def chat_handling_wrong(completions, answer, **kwargs) -> list[float]:
    """Handles strings, and treats a chat completion as one dict: a list of messages raises TypeError."""
    texts = [c if isinstance(c, str) else c["content"] for c in completions]
    return [1.0 if _right(t, a) else 0.0 for t, a in zip(texts, answer)]


def returns_batch_mean(completions, answer, **kwargs) -> float:
    """Returns the batch's mean accuracy, one float, instead of one score per completion."""
    completions = [_text(c) for c in completions]
    right = [1.0 if _right(c, a) else 0.0 for c, a in zip(completions, answer)]
    return sum(right) / max(1, len(right))


def returns_filtered_list(completions, answer, **kwargs) -> list[float]:
    """Skips completions with no answer tag, so the list is shorter than the batch."""
    completions = [_text(c) for c in completions]
    return [1.0 if _right(c, a) else 0.0 for c, a in zip(completions, answer) if _answer(c) is not None]


def returns_strings(completions, answer, **kwargs) -> list[str]:
    """Returns the scores as strings ('1.0')."""
    completions = [_text(c) for c in completions]
    return ["1.0" if _right(c, a) else "0.0" for c, a in zip(completions, answer)]


def returns_nan_unparseable(completions, answer, **kwargs) -> list[float]:
    """float('nan') for a completion with no answer tag, 'to mark it'."""
    completions = [_text(c) for c in completions]
    return [float("nan") if _answer(c) is None else 1.0 if _right(c, a) else 0.0 for c, a in zip(completions, answer)]


def returns_verl_dicts(completions, answer, **kwargs) -> list[dict]:
    """verl's compute_score dicts ({'score': ..., 'acc': ...}) returned to TRL."""
    completions = [_text(c) for c in completions]
    return [{"score": 1.0 if _right(c, a) else 0.0, "acc": _right(c, a)} for c, a in zip(completions, answer)]


def dedupe_answers_misaligned(completions, answer, **kwargs) -> list[float]:
    """Assumes the batch is whole groups of equal size in order (num_generations), deduplicates the gold column
    and indexes it by group: with any other batch the golds go to the wrong completions."""
    completions = [_text(c) for c in completions]
    golds = list(dict.fromkeys(answer))
    per_group = max(1, len(completions) // max(1, len(golds)))
    return [1.0 if _right(c, golds[min(i // per_group, len(golds) - 1)]) else 0.0 for i, c in enumerate(completions)]


# ---------------------------------------------------------------- sound


def returns_python_bools(completions, answer, **kwargs) -> list[bool]:
    """True/False per completion (TRL turns the list into a float tensor)."""
    completions = [_text(c) for c in completions]
    return [_right(c, a) for c, a in zip(completions, answer)]


def returns_numpy_bools(completions, answer, **kwargs):
    """A numpy array of bools."""
    completions = [_text(c) for c in completions]
    import numpy as np

    return np.array([_right(c, a) for c, a in zip(completions, answer)], dtype=bool)


def returns_torch_scalars(completions, answer, **kwargs):
    """A list of 0-d torch tensors."""
    completions = [_text(c) for c in completions]
    import torch

    return [torch.tensor(1.0 if _right(c, a) else 0.0) for c, a in zip(completions, answer)]


def returns_ints(completions, answer, **kwargs) -> list[int]:
    """1 or 0 as ints."""
    completions = [_text(c) for c in completions]
    return [1 if _right(c, a) else 0 for c, a in zip(completions, answer)]


def answer_from_kwargs(completions, **kwargs) -> list[float]:
    """Reads the gold column through **kwargs, as TRL passes every dataset column: kwargs['answer']."""
    completions = [_text(c) for c in completions]
    return [1.0 if _right(c, a) else 0.0 for c, a in zip(completions, kwargs["answer"])]


def prompts_first_order(prompts, completions, answer, **kwargs) -> list[float]:
    """TRL's other common spelling: prompts first (TRL passes everything by keyword)."""
    completions = [_text(c) for c in completions]
    return [1.0 if _right(c, a) else 0.0 for c, a in zip(completions, answer)]


def chat_or_text_safe(completions, answer, **kwargs) -> list[float]:
    """Takes the text of either completion shape before scoring."""
    return [1.0 if _right(_text(c), a) else 0.0 for c, a in zip(completions, answer)]


_ARITH = "arithmetic"
META = {
    "chat_only_indexing": dict(
        category="signature/contract",
        bug="completion[0]['content'] on a standard (text) dataset, where TRL passes strings: TypeError on every call",
        source="open-r1 rewards.py spelling used on a non-conversational dataset", expected_property="output",
        also=["shapes", "hostile"], dataset="signed", verifier=True),
    "chat_handling_wrong": dict(
        category="signature/contract",
        bug="a chat completion (list of message dicts, as TRL passes on a conversational dataset) raises TypeError",
        source="TRL conversational datasets give list[dict] completions", expected_property="shapes",
        also=["output", "hostile"], dataset=_ARITH, verifier=True),
    "returns_batch_mean": dict(
        category="signature/contract", bug="returns one float for the whole batch", source="TRL reward contract",
        expected_property="output", also=[], dataset=_ARITH, verifier=True),
    "returns_filtered_list": dict(
        category="signature/contract", bug="returns fewer scores than completions (drops unparseable ones)",
        source="list comprehension with an if", expected_property="output", also=[], dataset=_ARITH, verifier=True),
    "returns_strings": dict(
        category="signature/contract", bug="returns '1.0' strings", source="TRL reward contract",
        expected_property="output", also=[], dataset=_ARITH, verifier=True),
    "returns_nan_unparseable": dict(
        category="signature/contract", bug="returns NaN for a completion without an answer tag",
        source="NaN as a marker (TRL nanmean hides it)", expected_property="bounds", also=["output", "hostile"],
        dataset=_ARITH, verifier=True),
    "returns_verl_dicts": dict(
        category="signature/contract", bug="returns verl's {'score', 'acc'} dicts instead of floats",
        source="verl compute_score return value reused in TRL", expected_property="output", also=[], dataset=_ARITH,
        verifier=True),
    "dedupe_answers_misaligned": dict(
        category="signature/contract",
        bug="assumes whole num_generations groups in order: golds misaligned in other batches",
        source="group-structure assumptions in TRL rewards", expected_property="batch-independent",
        also=["state", "pays-gold"], dataset=_ARITH, verifier=True),
    "returns_python_bools": dict(category="signature/contract", bug=None, source="TRL accepts bools (torch.tensor)",
                                 dataset=_ARITH, verifier=True),
    "returns_numpy_bools": dict(category="signature/contract", bug=None, source="numpy bool array", dataset=_ARITH,
                                verifier=True),
    "returns_torch_scalars": dict(category="signature/contract", bug=None, source="0-d torch tensors",
                                  dataset=_ARITH, verifier=True),
    "returns_ints": dict(category="signature/contract", bug=None, source="ints", dataset=_ARITH, verifier=True),
    "answer_from_kwargs": dict(category="signature/contract", bug=None,
                               source="TRL docs: columns arrive in **kwargs (kwargs['answer'])", dataset=_ARITH,
                               verifier=True),
    "prompts_first_order": dict(category="signature/contract", bug=None,
                                source="TRL docs: reward(prompts, completions, **kwargs)", dataset=_ARITH,
                                verifier=True),
    "chat_or_text_safe": dict(category="signature/contract", bug=None, source="both completion shapes handled",
                              dataset=_ARITH, verifier=True),
}
