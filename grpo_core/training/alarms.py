"""A run's warnings and what ends it early: :class:`Alarms` says each once and records the one ``--stop-on`` names;
:class:`MonitorCallback` watches TRL's logs for a run that stopped learning or went wrong; :class:`StopCallback`
ends the run after that step.

Every completion of every group scoring the same for ``patience`` logged steps is one of two runs. At nothing (or
anywhere below the top) the run has no learning signal: the ``reward-std`` warning says what the episodes did and
what to change, and ``--stop-on reward-std`` stops it with a checkpoint (exit status 3). At the top of every reward
the run has learnt all its rewards pay for: a note says so, and under ``--stop-on reward-std`` (or ``any``) training
ends there as a finished run, with its final model and held-out comparison (exit status 0)."""

from __future__ import annotations

import math

from transformers import TrainerCallback
from transformers.trainer_callback import ExportableState

from grpo_core.training.trl_contract import stored_attributes

# TRL logs each reward's mean as a float32 average: a batch paid exactly the top logs it within float32's rounding.
TOP_RELATIVE = 1e-6


class Alarms:
    """The run's warnings, each said once; one that ``--stop-on`` names (or ``any``) stops the run after the step's
    checkpoint (:class:`StopCallback`). ``finish`` is a note, not a warning: a run with nothing left to learn, which
    the same ``--stop-on`` ends as a finished run."""

    def __init__(self, warn, stop_on=(), note=None) -> None:
        self.warn = warn
        self.note = note or warn
        self.stop_on = set(stop_on) - {"none"}  # --stop-on none: a config's stops turned off
        self.warned: set[str] = set()
        self.stopped_by: str | None = None
        self.finished_by: str | None = None

    def fire(self, key: str, message: str) -> None:
        if key in self.warned:
            return
        self.warned.add(key)
        self.warn(message)
        if self.stopped_by is None and self.stops(key):
            self.stopped_by = key

    def stops(self, key: str) -> bool:
        """Whether --stop-on names ``key`` (or ``any``)."""
        return key in self.stop_on or "any" in self.stop_on

    def finish(self, key: str, message: str, stop_key: str) -> None:
        """Say ``message`` once; under ``--stop-on stop_key`` (or ``any``) end training as a finished run."""
        if key in self.warned:
            return
        self.warned.add(key)
        self.note(message)
        if self.finished_by is None and self.stopped_by is None and self.stops(stop_key):
            self.finished_by = key


class MonitorCallback(TrainerCallback, ExportableState):
    """Plain-word warnings, with the fix, when a run stops learning or goes wrong. Each checkpoint keeps its
    counters, so a resumed run's ``unscored_steps`` goes on counting from the run's and a streak goes on.

    ``tops``: each reward's name and the most it pays (its upper bound; None when it has none), which tells a run
    whose every completion earns the top of every reward from one with no learning signal."""

    def __init__(self, warn=None, patience: int = 3, kl_limit: float = 10.0, clipped_limit: float = 0.5,
                 alarms: Alarms | None = None, tops: dict | None = None) -> None:
        self.alarms = alarms or Alarms(warn)
        self.patience = patience
        self.kl_limit = kl_limit
        self.clipped_limit = clipped_limit
        self.tops = dict(tops or {})
        self.flat = self.clipped = self.unscored = 0
        self.flat_calls: dict[str, int] = {}

    def state(self) -> dict:
        return {"args": {}, "attributes": {"flat": self.flat, "clipped": self.clipped, "unscored": self.unscored}}

    def on_train_begin(self, args, state, control, **kwargs):
        stored = stored_attributes(state, type(self).__name__)  # resuming: go on from the checkpoint's counts
        self.flat, self.clipped, self.unscored = (int(stored.get(key, 0)) for key in ("flat", "clipped", "unscored"))

    def on_log(self, args, state, control, logs=None, **kwargs):
        if not state.is_world_process_zero or not logs or "reward_std" not in logs:
            return
        means = [value for key, value in logs.items() if key.startswith("rewards/") and key.endswith("/mean")]
        if means and all(not isinstance(v, (int, float)) or not math.isfinite(v) for v in means):
            self.unscored += 1
            self._once(
                "unscored",
                f"no completion of step {state.global_step} could be scored: every reward returned None (for example "
                "a dataset whose gold answers are empty or unreadable), so the rewards taught nothing that step. "
                "Training goes on; such steps are counted in metrics.jsonl as unscored_steps. Check the dataset "
                "with `grpo-run check` and the answer column.",
            )
        logs["unscored_steps"] = self.unscored  # recorded by MetricsCallback, which runs after this one
        flat = logs.get("reward_std", 1.0) == 0.0
        self.flat, self.flat_calls = (self.flat + 1, self.flat_calls) if flat else (0, {})
        for key, value in logs.items():  # the tools an environment's episodes called while nothing was learnt
            if flat and key.startswith("tools/") and key.endswith("/calls") and key.count("/") == 2:
                self.flat_calls[key[6:-6]] = self.flat_calls.get(key[6:-6], 0) + int(value or 0)
        clipped = logs.get("completions/clipped_ratio", 0.0)
        self.clipped = self.clipped + 1 if clipped > self.clipped_limit else 0
        if self.flat >= self.patience:
            tops = self._at_the_top(logs)
            if tops:
                self.alarms.finish("saturated", self._learnt_all(state, tops), stop_key="reward-std")
            else:
                self._once("reward-std", self._nothing_to_learn(args, logs))
        kl = logs.get("kl")
        if kl is not None and math.isfinite(kl) and kl > self.kl_limit:
            self._once(
                "kl",
                f"KL to the reference model is {kl:.3g} at step {state.global_step} and exploding: lower the "
                f"learning rate (now {args.learning_rate:g}; try --set learning_rate={args.learning_rate / 4:g}).",
            )
        if self.clipped >= self.patience:
            self._once(
                "clipped",
                f"{clipped:.0%} of completions hit max_completion_length ({args.max_completion_length} tokens) for "
                f"{self.clipped} steps: they are cut before their answer. Raise it (--set max_completion_length="
                f"{2 * args.max_completion_length}) or reward shorter answers.",
            )

    def _at_the_top(self, logs: dict) -> dict | None:
        """{reward: its top} when this step's mean of every reward is that reward's top (so every completion earned
        it, none paying more); None when any is below it, or a reward's top is not known."""
        means = {key[len("rewards/"):-len("/mean")]: value for key, value in logs.items()
                 if key.startswith("rewards/") and key.endswith("/mean") and key.count("/") == 2}
        if not means:
            return None
        for name, mean in means.items():
            top = self.tops.get(name)
            if (top is None or not math.isfinite(top) or not isinstance(mean, (int, float))
                    or not math.isclose(mean, top, rel_tol=TOP_RELATIVE, abs_tol=TOP_RELATIVE)):
                return None
        return {name: self.tops[name] for name in means}

    def _learnt_all(self, state, tops: dict) -> str:
        paid = ", ".join(f"{name} {top:g}" for name, top in tops.items())
        said = (f"every completion of every group has earned the top of every reward for {self.flat} logged steps "
                f"({paid}): the policy does all its rewards pay for, so they have nothing left to teach it")
        if self.alarms.stops("reward-std"):
            return (f"{said}. Training ends at step {state.global_step} of {state.max_steps} as a finished run "
                    "(stop_on reward-std); --stop-on none trains every step.")
        return f"{said}. Training goes on to step {state.max_steps}; --stop-on reward-std would end it here."

    def _nothing_to_learn(self, args, logs: dict) -> str:
        """What a run with no learning signal saw, in plain words, and changes that are not its settings already."""
        group, reward = int(getattr(args, "num_generations", 0) or 0), logs.get("reward")
        seen = (f"every completion of every group has scored the same for {self.flat} logged steps (reward_std has "
                f"been 0 for {self.flat} steps" + (f", reward {reward:.3f}" if isinstance(reward, (int, float)) else "")
                + "): GRPO learns only from differences within a group, so these steps taught nothing")
        if self.flat_calls:  # by count, most called first
            calls = ", ".join(f"{t} {n}" for t, n in sorted(self.flat_calls.items(), key=lambda x: -x[1]))
            seen += f". Tool calls in those steps: {calls}; a tool never called there was never tried, and so never paid"
        larger, temperature = f"--set num_generations={2 * group or 8}", float(getattr(args, "temperature", 1.0) or 1.0)
        hotter = f", sample more widely (--set temperature={round(temperature + 0.3, 2):g})" if temperature < 1.5 else ""
        return (f"{seen}. Try a larger group ({larger}){hotter}, a reward that gives partial credit, or worked "
                "examples in the prompt that show the right move; check the reward with `grpo-run check`.")

    def _once(self, key: str, message: str) -> None:
        self.alarms.fire(key, message)


class StopCallback(TrainerCallback):
    """Ends the run after the step a warning named by --stop-on fired in, saving its checkpoint first, or, for a run
    with nothing left to learn (``Alarms.finish``), as a finished run; every process stops at the same step (the
    main process decides)."""

    def __init__(self, alarms: Alarms) -> None:
        self.alarms = alarms

    def on_log(self, args, state, control, logs=None, **kwargs):
        if not self.alarms.stop_on:
            return
        stop = [self.alarms.stopped_by, self.alarms.finished_by]
        if args.world_size > 1:
            from accelerate.utils import broadcast_object_list

            broadcast_object_list(stop, from_process=0)
        self.alarms.stopped_by, self.alarms.finished_by = stop
        if stop[0] is not None:
            control.should_save = True
            control.should_training_stop = True
        elif stop[1] is not None:  # the run's own end saves the final model
            control.should_training_stop = True


def stopped_by(trainer) -> str | None:
    """The warning named by --stop-on that ended ``trainer``'s run (after saving a checkpoint); None otherwise."""
    return next((c.alarms.stopped_by for c in trainer.callback_handler.callbacks if isinstance(c, StopCallback)),
                None)
