"""The ``retry`` environment: any installed reward as a ``submit(answer)`` tool that says right or wrong, with a
number of tries and less pay for each wrong try before the right one. ``gold_episode`` gives the calls of a right
episode on a row, asking the wrapped reward for a completion it pays in full.

A submitted answer is scored by the wrapped reward exactly as TRL scores a completion (``Reward.score`` with the
row's prompt and the columns the reward reads), first as written, then, when that is not right and the answer has
no answer tag, inside the reward's tag (``<answer>42</answer>``), for rewards that read only the tag. The tool
never raises and never shows the reward's score, the row's columns or the reason for a verdict.
"""

from __future__ import annotations

import math
import unicodedata

from grpo_core import Reward, UsageError, load_rewards

MAX_CHARS = 1000  # an answer written longer is refused before scoring: one answer, not an essay or a megabyte
MIN_QUESTION_CHARS = 8  # a question at least this long, copied into an answer, refuses it
MAX_TRIES = 20
# Characters no answer is written with (controls, NUL, lone surrogates, bidi overrides, zero-width): an answer holding
# one is refused, so text built to break a reward never reaches it and a mangled one is never read as an answer.
_HIDDEN = {"Cc", "Cs", "Cf", "Co", "Cn"}
_WORDS = ("no", "one", "two", "three", "four", "five", "six", "seven", "eight", "nine", "ten", "eleven", "twelve",
          "thirteen", "fourteen", "fifteen", "sixteen", "seventeen", "eighteen", "nineteen", "twenty")
# The verdicts hold no digit: a tool output that holds the row's answer and changes with it is what the checks'
# "no leak" looks for, and "2 tries left" on a row whose answer is 2 would be one.
RIGHT = "right: your answer is accepted"
ALREADY_RIGHT = "right already: an earlier answer was accepted; this one was not checked"
NO_TRIES = "error: no tries left; this answer was not checked"
DEFAULT_SECONDS = 2.0  # the wrapped reward's time limit for one answer, when it has one and is given none
NOT_CHECKED = "error: this answer could not be checked; it used no try"


def wrapped_reward(reward: str = "math", reward_args: str | None = None, seconds: float | None = None) -> Reward:
    """The installed reward ``reward`` with its parameters (``reward_args``: ``KEY=VALUE,KEY=VALUE``) bound, as
    ``grpo_core.load_rewards`` gives it to TRL; a UsageError naming the bad value when it cannot be. A reward with a
    ``timeout`` parameter that ``reward_args`` leaves unset judges within ``seconds`` (when that is shorter), so one
    submit answers within it (math's own is 5 s, the environment checks' limit on a call)."""
    params = parse_reward_args(reward_args)
    if seconds is not None and "timeout" not in params:
        try:
            (declared,) = [p for p in load_rewards([reward])[0].spec.params if p.name == "timeout"] or [None]
        except UsageError as error:
            raise UsageError(f"retry cannot wrap reward {reward!r}: {error}") from None
        if declared is not None and (declared.default is None or declared.default > seconds):
            params["timeout"] = seconds
    try:
        (bound,) = load_rewards([reward], {reward: params} if params else None)
    except UsageError as error:
        raise UsageError(f"retry cannot wrap reward {reward!r}: {error}") from None  # names the value and the choices
    if bound.spec.group_relative:
        raise UsageError(f"retry cannot wrap reward {reward!r}: it scores a completion against the others of its "
                         "group, and retry scores one answer at a time; choose a reward that judges one answer")
    return bound


def parse_reward_args(text: str | None) -> dict:
    """``"extract=answer-tag,allow_expressions=false"`` -> ``{"extract": "answer-tag", "allow_expressions": "false"}``
    (the wrapped reward parses each value as its parameter's type); empty or None gives no parameters."""
    params = {}
    for item in (text or "").split(","):
        if not item.strip():
            continue
        key, sep, value = item.partition("=")
        if not sep or not key.strip():
            raise UsageError(f"retry reward_args must be KEY=VALUE pairs joined by commas, e.g. "
                             f"allow_expressions=false,rel_tol=1e-3; got {item.strip()!r} in {text!r}")
        params[key.strip()] = value.strip()
    return params


class Retry:
    """A reward as a tool: ``submit(answer)`` says right or wrong, ``tries`` times; a right answer pays
    ``decay`` to the power of the wrong tries before it."""

    def __init__(self, reward: str = "math", tries: int = 3, decay: float = 0.5, reward_args: str | None = None,
                 seconds: float = DEFAULT_SECONDS):
        if isinstance(tries, bool) or not isinstance(tries, int) or not 1 <= tries <= MAX_TRIES:
            raise UsageError(f"retry tries must be a whole number from 1 to {MAX_TRIES}; got {tries!r}")
        if isinstance(decay, bool) or not isinstance(decay, (int, float)) or not 0.0 <= decay <= 1.0:
            raise UsageError(f"retry decay must be a number from 0 to 1 (the pay kept for each wrong try); got "
                             f"{decay!r}")
        self.tries, self.decay = tries, float(decay)
        if isinstance(seconds, bool) or not isinstance(seconds, (int, float)) or not 0.1 <= seconds <= 60:
            raise UsageError(f"retry seconds must be a number from 0.1 to 60 (the longest one answer may take to "
                             f"judge); got {seconds!r}")
        self._reward = wrapped_reward(reward, reward_args, float(seconds))
        self._tag = str(self._reward.params.get("tag") or "answer")
        self._start({})

    def _start(self, row: dict) -> None:
        """Forget the episode before: the row's hidden columns, the tries used, the verdict."""
        self._prompt = row.get("prompt")
        self._columns = {source: row[source] for source in self._reward.columns.values() if source in row}
        self._wrong = 0  # wrong answers judged so far
        self._right = False
        self._judged = False  # the reward gave some answer a score (so the row is one it can score)
        self._row_unscored: bool | None = None  # found out only when no answer was judged

    def reset(self, **row) -> str:
        """Start an episode: the columns the wrapped reward reads are kept for it, never shown to the model."""
        missing = [source for name, source in self._reward.columns.items()
                   if source not in row and name not in self._reward.optional]
        if missing:
            raise UsageError(f"retry wraps reward '{self._reward.__name__}', which reads the column '{missing[0]}'; "
                             f"the row has {', '.join(sorted(row)) or 'no columns'}: choose a dataset with it")
        self._start(row)
        tries = f"{self.tries} tries" if self.tries > 1 else "one try"
        pay = ", and a right answer pays less for each wrong try before it" if self.decay < 1 and self.tries > 1 else ""
        return f"\n\nCheck your final answer with the submit tool: you have {tries}{pay}."

    def submit(self, answer: str) -> str:
        """Submit your final answer to be checked. You have a few tries; a right answer on an earlier try pays more.

        Args:
            answer: your final answer only, e.g. 42 or 3/4

        Returns:
            Whether the answer is right, and how many tries are left.
        """
        if self._right:
            return ALREADY_RIGHT
        if self._wrong >= self.tries:
            return NO_TRIES
        text, refused = self._answer_text(answer)
        if refused:
            return refused
        verdict = self._judge(text)
        if verdict is None:
            return NOT_CHECKED
        self._judged = True
        if verdict:
            self._right = True
            return RIGHT
        self._wrong += 1
        left = self.tries - self._wrong
        if not left:
            return "wrong: no tries left"
        return f"wrong: {_WORDS[left] if left < len(_WORDS) else left} {'try' if left == 1 else 'tries'} left"

    def get_reward(self) -> float | None:
        """``decay`` to the power of the wrong tries before the first right answer; 0.0 without a right answer (also
        for an episode that submits nothing); None (unscored) when the wrapped reward cannot score the row."""
        if self._right:
            return self.decay ** self._wrong
        if self._judged:
            return 0.0
        if self._row_unscored is None:  # no answer was judged: ask the reward whether it can judge this row at all
            self._row_unscored = self._score("") is None
        return None if self._row_unscored else 0.0

    def _answer_text(self, answer) -> tuple[str, str]:
        """(the answer as text, "") or ("", the message refusing it); a refused answer uses no try."""
        if isinstance(answer, bool) or not isinstance(answer, (str, int, float)):
            return "", f"error: the answer must be text, such as a number or a formula; got {_kind(answer)}"
        if isinstance(answer, int) and answer.bit_length() > 3 * MAX_CHARS:  # str() of it is slow, or raises
            return "", f"error: the answer is longer than {MAX_CHARS} characters; submit only your final answer"
        if isinstance(answer, float) and not math.isfinite(answer):
            return "", f"error: the answer must be a finite number or text; got {answer!r}"
        text = str(answer)
        if len(text) > MAX_CHARS:
            return "", f"error: the answer is longer than {MAX_CHARS} characters; submit only your final answer"
        if not text.strip():
            return "", "error: the answer is empty; submit your final answer"
        if any(unicodedata.category(c) in _HIDDEN for c in text if c not in "\t\n\r"):
            return "", ("error: the answer holds control, invisible or broken characters; submit your final answer "
                        "as plain text")
        question = " ".join(question_text(self._prompt).split())
        if len(question) >= MIN_QUESTION_CHARS and question in " ".join(text.split()):
            return "", "error: that holds the question itself, not an answer; submit only your final answer"
        return text, ""

    def _judge(self, text: str) -> bool | None:
        """True when the reward pays ``text`` its high bound (as written, or inside the reward's tag), False when it
        scores it lower, None when it gives no score."""
        high = float(self._reward.spec.bounds[1])
        scores = [self._score(text)]
        if scores[0] is not None and scores[0] != high and f"<{self._tag}>" not in text:  # None: not judged in time
            scores.append(self._score(f"<{self._tag}>{text}</{self._tag}>"))
        if any(score == high for score in scores):
            return True
        return False if any(score is not None for score in scores) else None

    def _score(self, completion: str) -> float | None:
        """The wrapped reward's score of ``completion`` on this row, as TRL calls it; None when it gives none (an
        unreadable gold answer, a timeout, an error)."""
        columns = {source: [value] for source, value in self._columns.items()}
        try:
            (score,) = self._reward.score(prompts=[self._prompt], completions=[completion], **columns)
        except Exception:  # a reward failing on this answer leaves it unchecked; the tool never raises
            return None
        return score


def question_text(prompt) -> str:
    """The question a prompt asks: its last user message (a conversation) or the prompt itself (a text)."""
    if isinstance(prompt, str):
        return prompt
    if isinstance(prompt, list):
        for message in reversed(prompt):
            if isinstance(message, dict) and message.get("role", "user") == "user":
                content = message.get("content")
                if isinstance(content, list):  # [{"type": "text", "text": ...}, ...]
                    return " ".join(str(part.get("text") or "") for part in content if isinstance(part, dict))
                return "" if content is None else str(content)
    return ""


def _kind(value) -> str:
    if value is None or isinstance(value, bool):
        return repr(value)
    return f"a {type(value).__name__}"


def gold_episode(row: dict, params: dict) -> list[tuple[str, dict]]:
    """The calls of a right episode on ``row``: submit the completion the wrapped reward declares it pays in full
    for that row (its ``RewardChecks.gold_example``), else the row's ``answer``."""
    reward = wrapped_reward(params.get("reward") or "math", params.get("reward_args"))
    columns = {name: row.get(source) for name, source in reward.columns.items()}
    example = reward.spec.checks.gold_example
    answer = example(columns, dict(reward.params)) if example is not None else None
    if answer is None:
        answer = row.get("answer")
    return [("submit", {"answer": "" if answer is None else str(answer)})]
