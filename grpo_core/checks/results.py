"""What the checks found: one PropertyResult per property and reward, and the CheckReport that holds them."""

from __future__ import annotations

import json
from dataclasses import dataclass, field

from grpo_core.checks.display import clip_repr, json_safe

PASS, FAIL, SKIP = "pass", "fail", "skip"
WARN = "warn"  # a finding that does not stop a run (a dataset row the reward cannot use)


@dataclass
class PropertyResult:
    """The outcome of one property on one reward: ``status`` is pass, fail or skip."""

    reward: str
    property: str
    status: str
    message: str = ""
    counterexample: dict | None = None
    examples: int = 0
    seconds: float = 0.0
    note: str = field(default="", compare=False)  # said in "not checked": how it was checked only in part, and why

    def to_dict(self) -> dict:
        return {
            "reward": self.reward,
            "property": self.property,
            "status": self.status,
            "message": self.message,
            "counterexample": json_safe(self.counterexample),
            "examples": self.examples,
            "seconds": round(self.seconds, 3),
        }


@dataclass
class CheckReport:
    """Every property's result for every reward checked; ``ok`` when none failed."""

    results: list[PropertyResult] = field(default_factory=list)
    seed: int | None = None
    seconds: float = 0.0
    params: dict[str, dict] = field(default_factory=dict)

    @property
    def ok(self) -> bool:
        return not self.failures

    @property
    def failures(self) -> list[PropertyResult]:
        return [r for r in self.results if r.status == FAIL]

    @property
    def rewards(self) -> list[str]:
        return list(dict.fromkeys(r.reward for r in self.results))

    def result(self, reward: str, prop: str) -> PropertyResult | None:
        """The result of property ``prop`` (e.g. ``bounds``, ``direction: ...``) for ``reward``."""
        for r in self.results:
            if r.reward == reward and r.property == prop:
                return r
        return None

    def failed(self, reward: str) -> list[str]:
        """Names of the properties ``reward`` failed."""
        return [r.property for r in self.results if r.reward == reward and r.status == FAIL]

    def to_dict(self) -> dict:
        return {
            "ok": self.ok,
            "seed": self.seed,
            "seconds": round(self.seconds, 3),
            "params": json_safe(self.params),
            "results": [r.to_dict() for r in self.results],
            "not_checked": self.unchecked(),
            "warnings": self.warnings(),
        }

    def unchecked(self) -> list[str]:
        """Each property not checked, or checked only in part, in words: why, and how to have it checked."""
        return [f"{r.reward} / {r.property}: {not_checked(r)}" for r in self.results if not_checked(r)]

    def warnings(self) -> list[str]:
        """One line per problem found in dataset rows, such as
        ``reward 'math': gold answer cannot be read in 12 of 200 rows (6.0%), e.g. 'forty two', 'seven'``."""
        lines = []
        for r in self.results:
            if r.status == WARN:
                problems = (r.counterexample or {}).get("problems") or []
                lines += [f"reward '{r.reward}': {problem_line(p)}" for p in problems] or [f"reward '{r.reward}': {r.message}"]
        return lines

    def to_json(self, indent: int | None = 2) -> str:
        return json.dumps(self.to_dict(), indent=indent)


def problem_line(problem: dict) -> str:
    """``gold answer cannot be read in 12 of 200 rows (6.0%), e.g. 'forty two', 'seven'``"""
    share = 100.0 * problem["rows"] / max(1, problem["of"])
    examples = ", ".join(clip_repr(e, 40) for e in problem["examples"])
    return f"{problem['problem']} in {problem['rows']} of {problem['of']} rows ({share:.1f}%)" + (
        f", e.g. {examples}" if examples else "")


def not_checked(result: PropertyResult) -> str:
    """Why ``result``'s property was not checked, or only in part, and how to have it checked; "" if it was."""
    if result.note:
        return result.note
    message = result.message
    if result.status == SKIP:
        for prefix in ("not run: ", "not run in full: ", "interrupted: "):
            message = message.removeprefix(prefix)
        return f"not checked, {message}" if message else "not checked"
    if result.status == PASS and "time budget was spent" in message:
        return f"checked only in part: {message}"
    return ""
