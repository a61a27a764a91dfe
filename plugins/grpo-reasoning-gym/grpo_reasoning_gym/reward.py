"""The ``reasoning-gym`` reward: is the answer in the completion right for the row's task?

Where a task's answer is a number (``NUMBER_TASKS``), the answer is compared with grpo-core's
exact number comparison (``grpo_core.parse_number`` and ``same_number``; two plain integers as ints,
which compares them the same): ``2,744`` equals ``2744`` and ``-70`` does not equal ``70``, which
several task checkers get wrong. Tasks whose checker pays answers that do not do the task are judged by
the plugin's own rules (see ``rules``): a few by comparing the whole answer with the gold answer
(``OWN_JUDGES``), others by their checker once the whole answer has the task's form (``ANSWER_FORMS``).
Every other task is judged by its own checker (``score_answer``).
Strict scoring (the default) gives 1.0 only to a right answer and 0.0 otherwise; graded scoring
passes the checker's partial credit through.

A batch is scored in the training process where that is safe: number comparisons (grpo-core's
reader is linear in the text, and only answers of up to ``MAX_NUMBER_CHARS`` characters are read)
the plugin's own rules (linear in the answer), and checkers reviewed to be linear in the answer
(``IN_PROCESS_CHECKERS``, and every task that keeps
reasoning-gym's default exact-match checker). Every other checker runs in worker processes under the
per-item ``timeout`` (see ``judging``), since some of them hang on hostile text (sympy reads
``9**9**9**9`` by computing it). Decoded entries, gold numbers and verdicts are shared within a batch,
where a GRPO group repeats one entry and often one answer.
"""

from __future__ import annotations

import re
from functools import lru_cache

from grpo_core import Number, Unscored, answer_tag, completion_text, parse_number, same_number

from grpo_reasoning_gym.entries import dump_entry, load_entry
from grpo_reasoning_gym.rules import ANSWER_FORMS, OWN_JUDGES, checker, unit_split, unit_words

# Tasks whose gold answer is one exact number, where any equal number is right. Left out on purpose:
# power_function and decimal_arithmetic (rounded answers; their checkers compare at the asked precision),
# dice and fraction_simplification (the answer must be a reduced fraction), base_conversion (digits in a base),
# prime_factorization and polynomial_equations (several numbers).
NUMBER_TASKS = frozenset({
    "aiw", "basic_arithmetic", "binary_alternation", "chain_sum", "circuit_logic", "coin_flip", "count_bits",
    "count_primes", "decimal_chain_sum", "gcd", "gsm_symbolic", "largest_island", "lcm", "leg_counting",
    "letter_counting", "maze", "number_format", "number_sequence", "products", "rectangle_count",
    "rotten_oranges", "self_reference", "simple_equations", "simple_geometry",
})

EXTRACT_MODES = ("answer-tag", "whole")
MAX_ANSWER = 100_000  # characters; a longer answer is not an answer, and some checkers are slow on it
MAX_NUMBER_CHARS = 100  # characters; a longer answer to a number task is not read as a number
TIMEOUT_S = 10.0  # per item, for checkers run in worker processes

# Custom checkers read to be linear (or n log n) in the answer's length, with no eval, sympy or nested regex.
IN_PROCESS_CHECKERS = frozenset({"number_sorting", "word_sorting"})


@lru_cache(maxsize=32)
def _tags(tag: str) -> tuple[str, str]:
    return f"<{tag}>", f"</{tag}>"


def _tag_span(text: str, tag: str) -> str | None:
    """``answer_tag(text, tag)``, with a fast path for the common ``<tag>...</tag>`` ending the text."""
    opening, closing = _tags(tag)
    close = text.rfind(closing)
    # Every other spelling of a tag starts with "<": with none after this closing tag, and none between it
    # and the last plain opening tag before it, these two are the pair answer_tag would find.
    if close != -1 and text.find("</", close + len(closing)) == -1:
        start = text.rfind(opening, 0, close)
        if start != -1 and text.find("<", start + len(opening), close) == -1:
            return text[start + len(opening) : close]
    return answer_tag(text, tag)


def extract_answer(completion, tag: str = "answer", extract: str = "answer-tag") -> str | None:
    """The answer a completion gives: inside the last ``<tag>`` pair, or the whole text with ``extract=whole``."""
    text = completion if isinstance(completion, str) else completion_text(completion)
    span = _tag_span(text, tag) if extract == "answer-tag" else text
    if span is None:
        return None
    span = span.strip()
    return span if span and len(span) <= MAX_ANSWER else None


@lru_cache(maxsize=None)
def judged_in_process(task: str) -> bool | None:
    """Whether the task's checker runs in the training process (None: reasoning-gym has no such task)."""
    from reasoning_gym.dataset import ProceduralDataset
    from reasoning_gym.factory import DATASETS

    from grpo_reasoning_gym.tasks import NOT_TASKS

    if task not in DATASETS or task in NOT_TASKS:
        return None
    return task in IN_PROCESS_CHECKERS or task in OWN_JUDGES or \
        DATASETS[task][0].score_answer is ProceduralDataset.score_answer


def judged_by(task: str) -> str:
    """How a task is judged: ``number``, ``exact`` (the plugin's own rule), ``form+checker`` or ``checker``."""
    if task in NUMBER_TASKS:
        return "number"
    if task in OWN_JUDGES:
        return "exact"
    return "form+checker" if task in ANSWER_FORMS else "checker"


def plain_integer(text: str) -> int | None:
    """The value of ``text`` if it is ASCII digits with an optional leading ``-``, at most MAX_NUMBER_CHARS long.

    Such a text reads the same through ``parse_number`` (``007`` is 7, ``-0`` is 0), so comparing two of them
    as ints is the exact number comparison without its cost. ``isascii`` keeps out the digits ``int()`` reads
    and ``parse_number`` keeps as written (``٣`` is not 3), and ``isdigit`` the spaces and ``_`` it skips.
    """
    if len(text) <= MAX_NUMBER_CHARS and text.isascii():
        if text.isdigit() or text[:1] == "-" and text[1:].isdigit():
            return int(text)
    return None


def uses_numbers(task: str, answer) -> bool:
    """Whether this row is judged by exact number comparison (a number task whose gold answer is a number)."""
    return task in NUMBER_TASKS and parse_number(str(answer)) is not None


class _Row:
    """What a batch needs to know once per row: its gold number, where its checker runs, its decoded entry.

    A row judged by its gold number (``numeric``) needs its entry only where graded scoring asks the checker;
    one judged by the plugin's own rule (``judge``) never does.
    A gold answer that is a plain integer is kept as ``gold_int``, and read by ``parse_number`` only for an
    answer that is not one, which most rows never see.
    """

    __slots__ = ("task", "entry", "_record", "gold_text", "numeric", "gold_int", "_gold_number", "in_process",
                 "judge", "form", "_units", "verdicts")

    def __init__(self, task, entry, answer):
        if not isinstance(task, str) or not isinstance(entry, (str, dict)):
            raise ValueError("not a reasoning-gym row")
        self.in_process = judged_in_process(task)
        if self.in_process is None:
            raise ValueError(f"reasoning-gym has no task {task!r}")
        self.task = task
        self.entry = entry
        self._record = None
        self.gold_text = str(answer).strip()
        self.gold_int = plain_integer(self.gold_text) if task in NUMBER_TASKS else None
        number = parse_number(self.gold_text) if task in NUMBER_TASKS and self.gold_int is None else None
        self._gold_number = number if number is not None and number.key[0] != "unreadable" else None
        self.numeric = self.gold_int is not None or self._gold_number is not None
        self.judge = OWN_JUDGES.get(task)
        self.form = ANSWER_FORMS.get(task)
        self._units = None
        if not self.numeric and self.judge is None:
            self.record()  # the checker needs the entry: an unreadable one makes the row unscorable
        self.verdicts: dict[str, float] = {}  # prediction -> score, as a GRPO group repeats answers

    @property
    def gold_number(self) -> Number:
        """The gold answer read as a Number (a numeric row's only)."""
        if self._gold_number is None:
            self._gold_number = parse_number(self.gold_text)
        return self._gold_number

    def record(self) -> dict:
        """The decoded entry (decoded once, and only when a checker needs it)."""
        if self._record is None:
            record = load_entry(self.entry) if isinstance(self.entry, str) else self.entry
            if not isinstance(record, dict):
                raise ValueError("the entry is not a reasoning-gym entry")
            self._record = record
        return self._record

    def units(self) -> frozenset:
        """The unit words a number answer may end with (none where the entry cannot be read)."""
        if self._units is None:
            try:
                self._units = unit_words(str(self.record().get("question", "")))
            except ValueError:
                self._units = frozenset()
        return self._units

    def entry_text(self) -> str:
        return self.entry if isinstance(self.entry, str) else dump_entry(self.entry)


def _stated_number(row: _Row, prediction: str):
    """The one number an answer states (a unit word the question uses may follow it), else None."""
    if len(prediction) > MAX_NUMBER_CHARS:
        return None
    value = parse_number(prediction, units=False)
    if value is None and (split := unit_split(prediction)) is not None and split[1] in row.units():
        value = parse_number(split[0], units=False)
    return value


def _number_verdict(row: _Row, prediction: str) -> bool:
    if prediction == row.gold_text:
        return True
    value = _stated_number(row, prediction)
    return value is not None and same_number(row.gold_number, value)


_NOTHING = object()


def reasoning_gym_rewards(completions, answer, task, entry, *, strict=True, tag="answer", extract="answer-tag",
                          timeout=TIMEOUT_S) -> list:
    """Score a batch: per completion 1.0 for a right answer, else 0.0 (``strict``); graded: the checker's score.

    ``answer``, ``task`` and ``entry`` hold one value per completion. A row that cannot be judged (an
    unknown task, an unreadable entry) is ``Unscored("unscorable")``; an answer whose checker does not
    finish within ``timeout`` seconds scores 0.0 as ``Unscored("timeout", score=0.0)``. Never raises.
    """
    completions = list(completions)
    scores: list = [0.0] * len(completions)
    tagged = extract == "answer-tag"
    opening, closing = _tags(tag)
    len_opening, len_closing = len(opening), len(closing)
    rows: dict = {}
    waiting: dict[tuple, list[int]] = {}  # (row key, prediction) -> indices, for the worker processes
    # The previous item's task, entry and answer, and what its row gives: a GRPO group's rows come one after
    # another, so these change once per group and the loop below keeps them in locals.
    last_name = last_text = last_gold = _NOTHING  # so that the first item finds its row, whatever its values
    key = row = verdicts = gold_int = numeric = judge = form = record = score_answer = None
    unscorable = False
    for index, (completion, gold, name, text) in enumerate(zip(completions, answer, task, entry)):
        try:
            if text != last_text or name != last_name or gold != last_gold:
                new_key = (name, text if isinstance(text, str) else id(text), gold)
                new_row = rows.get(new_key)
                if new_row is None:
                    try:
                        new_row = rows[new_key] = _Row(name, text, gold)
                    except ValueError as error:
                        new_row = rows[new_key] = Unscored("unscorable", str(error)[:200])
                # Set together once the row is found: where finding it raises (an unhashable answer), the last
                # values still describe key and row.
                key, row, last_name, last_text, last_gold = new_key, new_row, name, text, gold
                unscorable = isinstance(row, Unscored)
                if not unscorable:
                    verdicts, gold_int, numeric = row.verdicts, row.gold_int, row.numeric
                    judge, form = row.judge, row.form
                    record = score_answer = None  # looked up on the row's first answer that needs them
            if unscorable:
                scores[index] = row
                continue
            if tagged and type(completion) is str:  # extract_answer's fast path, inline: it runs for every item
                close = completion.rfind(closing)
                if close != -1 and completion.find("</", close + len_closing) == -1:
                    start = completion.rfind(opening, 0, close) + len_opening
                    if start >= len_opening and completion.find("<", start, close) == -1:
                        prediction = completion[start:close].strip()
                        if not prediction or len(prediction) > MAX_ANSWER:
                            continue
                    else:
                        prediction = extract_answer(completion, tag, extract)
                else:
                    prediction = extract_answer(completion, tag, extract)
            else:
                prediction = extract_answer(completion, tag, extract)
            if prediction is None:
                continue
            # Where both are plain integers, comparing them is exact and cheaper than looking up and keeping a
            # verdict. Graded scoring goes on to ask the checker about a wrong one.
            if gold_int is not None and (value := plain_integer(prediction)) is not None:
                if value == gold_int:
                    scores[index] = 1.0
                    continue
                if strict:
                    continue
            verdict = verdicts.get(prediction)
            if verdict is not None:
                scores[index] = verdict
                continue
            if numeric:
                if _number_verdict(row, prediction):
                    scores[index] = verdicts[prediction] = 1.0
                    continue
                # Graded: only an answer that states one number earns the checker's partial credit (some checkers
                # read the last number of a spray).
                if strict or _stated_number(row, prediction) is None:
                    verdicts[prediction] = 0.0
                    continue
            if judge is not None:
                scores[index] = verdicts[prediction] = judge(prediction, row.gold_text, strict)
                continue
            if form is not None and form.fullmatch(prediction) is None:  # text the checker would skip over
                verdicts[prediction] = 0.0
                continue
            if record is None:
                try:
                    record = row.record()
                except ValueError as error:
                    scores[index] = Unscored("unscorable", str(error)[:200])
                    continue
            if row.in_process:
                if score_answer is None:
                    score_answer = checker(row.task)
                try:  # checker_score, inline: it runs for every answer a checker judges
                    score = float(score_answer(prediction, record))
                except Exception:
                    score = 0.0
                if strict:
                    score = 1.0 if score >= 1.0 else 0.0  # what the clamped score gives, nan included
                elif not 0.0 < score <= 1.0:
                    score = 0.0 if score != score else min(1.0, max(0.0, score))
                scores[index] = verdicts[prediction] = score
            else:
                waiting.setdefault((key, prediction), []).append(index)
        except Exception as error:  # one bad item must not cost the batch
            scores[index] = Unscored("error", f"{type(error).__name__}: {error}")
    if waiting:
        from grpo_reasoning_gym.judging import judge_in_workers

        items = [(rows[key].task, rows[key].entry_text(), prediction) for key, prediction in waiting]
        for indices, result in zip(waiting.values(), judge_in_workers(items, timeout)):
            if not isinstance(result, Unscored):
                result = (1.0 if result >= 1.0 else 0.0) if strict else result
            for index in indices:
                scores[index] = result
    return scores


def reasoning_gym_reward(completion, answer, task, entry, *, strict=True, tag="answer", extract="answer-tag",
                         timeout=TIMEOUT_S):
    """One completion's score: 1.0 for a right answer, else 0.0 (``strict``); graded: the checker's score in [0, 1].

    Returns None when the row cannot be judged (an unknown task or an unreadable entry); an answer
    whose checker does not finish within ``timeout`` seconds scores 0.0.
    """
    (score,) = reasoning_gym_rewards([completion], [answer], [task], [entry], strict=strict, tag=tag,
                                     extract=extract, timeout=timeout)
    return score.score if isinstance(score, Unscored) else score


def validate_params(params: dict) -> None:
    """Raise ValueError, with a sentence naming the value, for a ``tag`` the reward cannot look for."""
    if not re.fullmatch(r"[A-Za-z][\w.-]*", params["tag"] or ""):
        raise ValueError(f"tag must be an XML tag name such as 'answer', got {params['tag']!r}")
