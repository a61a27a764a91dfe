"""Property-based checks of rewards, run through the same Reward callable TRL calls.

``run_checks`` drives hypothesis over every reward: generic properties (one float or None per
completion, finite and inside the declared bounds, deterministic, independent of the rest of the
batch, the same score in both completion shapes, no crash on hostile text, within a time budget),
the directions and gold completions each plugin declares, and the exploit audit (completions that
skip the task, dataset rows the reward cannot use). ``preflight`` is the quick version the training
command runs on the selected rewards and real dataset rows before loading a model.

Where each part lives: ``registry`` (what a property is, and the plan), ``catalogue`` (every property, one
record each, in report order), ``properties`` and ``audit`` (the function each record runs), ``subject`` (calling
the reward under test), ``inputs`` (what is drawn), ``search`` (hypothesis looking for a counterexample),
``executor`` (the deadline), ``run`` (the plan run under the time budget), ``results`` and ``report`` (what was
found, and as text), ``texts`` and ``degenerate`` (the strategies and degenerate completions plugin authors get
from ``grpo_core.testing``), ``command`` (``grpo-run check``).

Worker processes import this package, so hypothesis is only imported inside the functions that draw.
"""
