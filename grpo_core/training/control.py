"""A control run: the same run, seed and steps, with each step's rewards cut loose from the completions they score.

A gain alone does not show the reward taught it: a reward that pays at random can raise a model too. ``--control
shuffled`` trains the run, then the same run again in ``OUTPUT_DIR-control`` with each generation batch's rows of
scores permuted among its completions (``random``: each reward's scores drawn from a normal distribution with the
batch's mean and spread), and the comparison after training shows base, trained and control with the gain over the
control and its standard error over the held-out prompts.
"""

from __future__ import annotations

import dataclasses
import math
from pathlib import Path

from grpo_core.errors import UsageError
from grpo_core.rundir.folder import checkpoints

KINDS = {
    "shuffled": "each step's rows of reward scores permuted among the step's completions",
    "random": "each reward's scores drawn at random with the step's mean and spread",
}


def validate_control(settings) -> None:
    """``control`` names a kind; ``control_of`` (set in a control run's own settings) comes with a kind."""
    if settings.control is not None and settings.control not in KINDS:
        raise UsageError(f"--control '{settings.control}' is not a kind of control; use one of: {', '.join(KINDS)}")
    if settings.control_of is not None and settings.control is None:
        raise UsageError(f"control_of: '{settings.control_of}' needs control: shuffled or random beside it (the kind "
                         "of control this run is)")


# Held-out prompts a run with a control compares on when it names no number: the default run's comparison.
COMPARE_WITH_CONTROL = 200


def with_comparison(settings):
    """A run with a control compares (the control exists for that): ``(settings, line)`` with ``compare`` set to
    :data:`COMPARE_WITH_CONTROL` when the run names no comparison, and the line that says so (else None)."""
    if settings.control not in KINDS or is_control(settings) or settings.compare:
        return settings, None
    line = (f"--control: the comparison after training scores base, trained and control on {COMPARE_WITH_CONTROL} "
            "held-out prompts (--compare N for another number)")
    return dataclasses.replace(settings, compare=COMPARE_WITH_CONTROL), line


def is_control(settings) -> bool:
    """This run is a control (its rewards are replaced), not a run with a control after it."""
    return settings.control_of is not None


def control_folder(output_dir) -> Path:
    """Where a run's control trains: beside the run, its folder's name with ``-control``."""
    folder = Path(output_dir)
    return folder.with_name(f"{folder.name}-control")


def control_settings(settings, output_dir: Path, resume: bool):
    """The control of the run ``settings`` describe: the same settings in its own folder, marked as a control,
    with no comparison of its own. With ``resume``, a control that has started resumes; one that has not starts."""
    folder = control_folder(output_dir)
    resumes = resume and bool(checkpoints(folder))
    grpo = {**settings.grpo, "output_dir": str(folder)}
    return dataclasses.replace(settings, grpo=grpo, control_of=str(output_dir), compare=0, resume=resumes,
                               overwrite=settings.overwrite or (resume and not resumes))


def table_change(kind: str, seed: int):
    """The change of a training batch's (completions x rewards) table that makes TRL see the control's scores in place
    of the rewards' own (first of ``build.reward_table_changes``); every process draws the same permutation or numbers
    (the same seed, one draw per batch)."""
    import torch

    generator = torch.Generator().manual_seed(int(seed))

    def shuffled(table, *batch):
        return table[torch.randperm(table.shape[0], generator=generator).to(table.device)]

    def random(table, *batch):
        drawn = table.clone()
        for column in range(table.shape[1]):
            values = table[:, column]
            finite = torch.isfinite(values)
            count = int(finite.sum())
            if count == 0:
                continue
            mean = values[finite].mean()
            spread = values[finite].std(unbiased=False) if count > 1 else torch.zeros(())
            noise = torch.randn(count, generator=generator).to(table.device, table.dtype)
            drawn[finite.nonzero(as_tuple=True)[0], column] = mean + spread * noise
        return drawn

    return shuffled if kind == "shuffled" else random


def gain_lines(results: list[dict], names: list[str], where: str, held_out: bool = True) -> list[str]:
    """One line per reward: base, trained and control means on the same prompts, the trained run's gain over the
    control and its standard error (paired, over the prompts both scored). ``results`` are base, trained, control
    as ``sample.score_models`` gives them; ``where`` says on what, e.g. ``200 questions``."""
    base, trained, control = results
    lines = []
    for name in names:
        means = [r["means"].get(name) for r in results]
        pairs = [(a[name], b[name]) for a, b in zip(trained["samples"], control["samples"])
                 if _finite(a.get(name)) and _finite(b.get(name))]
        cells = "   ".join(f"{label} {'-' if m is None else format(m, '.3f')}"
                           for label, m in zip(("base", "trained", "control"), means))
        gain = "gain over control -"
        if pairs:
            differences = [a - b for a, b in pairs]
            mean = sum(differences) / len(differences)
            spread = (sum((d - mean) ** 2 for d in differences) / (len(differences) - 1)) if len(differences) > 1 else 0.0
            gain = f"gain over control {mean:+.3f} (+/- {math.sqrt(spread / len(differences)):.3f})"
        lines.append(f"{'held-out ' if held_out else ''}{name}, {where}:  {cells}   {gain}")
    return lines


def _finite(value) -> bool:
    return isinstance(value, (int, float)) and math.isfinite(value)
