"""The ``remote:NAME`` reward's spec: reward NAME as a ``grpo-run serve`` server declares it (the scoring itself is
``grpo_core.rewards.remote``)."""

from __future__ import annotations

from dataclasses import dataclass

from grpo_core.errors import UsageError
from grpo_core.rewards.remote import PARAMS, RemoteScorer, fetch_entry
from grpo_core.settings.syntax import REMOTE_PREFIX
from grpo_core.specs import RewardSpec


@dataclass(frozen=True)
class RemoteRewardSpec(RewardSpec):
    """A ``remote:NAME`` reward; made anew by each lookup, so ``resolve`` fills it in from its own server."""

    def resolve(self, params: dict | None = None) -> dict:
        resolved = super().resolve(params)
        entry = fetch_entry(resolved, self.func.served, self.name)
        # the served reward's own declarations (one spec per lookup, so no other run sees them)
        object.__setattr__(self, "description", f"{entry.get('description', '')} (served at {resolved['url']})")
        object.__setattr__(self, "bounds", tuple(entry["bounds"]))
        object.__setattr__(self, "columns", tuple(entry.get("columns", ())))
        object.__setattr__(self, "optional_columns", tuple(entry.get("optional_columns", ())))
        return resolved


def remote_spec(name: str) -> RemoteRewardSpec:
    """The reward ``remote:NAME``: NAME scored by a grpo-run serve server (``url`` parameter)."""
    served = name[len(REMOTE_PREFIX):].strip()
    if not served:
        raise UsageError(f"reward '{name}' names no served reward; write --reward remote:NAME, e.g. remote:math")
    return RemoteRewardSpec(name=name, description=f"reward '{served}' scored by a grpo-run serve server",
                            func=RemoteScorer(served), params=PARAMS, batched=True, distribution="grpo-core")
