"""Training a resolved run in the folder its caller claimed: the trainer built, trained, and its outputs saved; the
outcome says how the run ended."""

from __future__ import annotations

import enum
from dataclasses import dataclass
from pathlib import Path

from grpo_core import offline
from grpo_core.errors import RewardError, UsageError
from grpo_core.plugins.loading import validate_model_available
from grpo_core.rundir import outputs
from grpo_core.rundir.claim import Claim, claim_outputs, follow_outputs, replace_outputs
from grpo_core.rundir.folder import checkpoint_step, remove_checkpoints
from grpo_core.rundir.names import FINAL_DIR, MERGED_DIR, METRICS_FILE, PLOT_FILE, RUN_CONFIG, shown
from grpo_core.rundir.record import write_run_config
from grpo_core.training import collector, launch
from grpo_core.training.card import write_model_card
from grpo_core.training.resolve import ResolvedRun, load_data
from grpo_core.training.tools import pick_template


class Outcome(enum.Enum):
    """How a training run ended, with the exit status grpo-run gives it."""

    FINISHED = 0
    INTERRUPTED = 130  # Ctrl-C: a checkpoint saved, no final model
    STOPPED = 3  # a warning that --stop-on names: a checkpoint saved, no final model

    @property
    def exit_status(self) -> int:
        return self.value


@dataclass
class Trained:
    """A run's trainer and how it ended; ``stopped_by`` names the --stop-on warning that stopped it."""

    trainer: object
    outcome: Outcome
    stopped_by: str | None = None


def claim_folder(run: ResolvedRun, log=print) -> Claim:
    """How this process holds ``run``'s output folder, decided here for every run that is not staged (a staged run's
    stages are claimed with ``rundir.claim.validate_staged``): the process that starts the run locks and checks it
    (``claim_outputs``); a launcher on a machine after the first claims nothing (machine 0's does); a process
    accelerate launched takes the checkpoint the launching process checked, which holds the lock."""
    if launch.is_launched():
        checkpoint = launch.handed_checkpoint()
        if run.settings.resume and checkpoint is None:
            raise UsageError("--resume in a process accelerate launched needs the checkpoint the launching grpo-run "
                             "checked; start the run with grpo-run, not accelerate launch")
        return Claim(Path(run.grpo["output_dir"]), checkpoint if run.settings.resume else None)
    return claim_outputs(run, log) if run.place.main_machine else follow_outputs(run)


def train(run: ResolvedRun, claim: Claim, log=print, progress: bool = True, summary: bool = True) -> Trained:
    """Train in the folder ``claim`` holds (from :func:`claim_folder`, which the caller releases), resuming from the
    checkpoint it found; save the final model in ``output_dir/final``, write the plot and summary.

    Earlier outputs are kept unless the run resumes them or ``overwrite`` replaces them. ``summary=False`` leaves
    the printed training summary to the caller (which shows the held-out comparison first).
    """
    output_dir = Path(run.grpo["output_dir"])
    if not launch.is_launched():
        replace_outputs(run, log)
    output_dir.mkdir(parents=True, exist_ok=True)
    if claim.checkpoint is not None:
        log(f"resuming from {claim.checkpoint}")
    if claim.checkpoint is not None and launch.is_global_main():
        outputs.truncate_metrics(output_dir / METRICS_FILE, checkpoint_step(claim.checkpoint))
    return _train(run, log, progress, output_dir, claim.checkpoint, summary)


def _train(run: ResolvedRun, log, progress: bool, output_dir: Path, checkpoint, summary: bool) -> Trained:
    # transformers' TrainerCallback and TRL: grpo-run --help and typos must not load them
    from grpo_core.training.build import build_trainer
    from grpo_core.training.callbacks import interrupted, save_after_failure, stopped_by

    if run.dataset is None:
        load_data(run)
    if validate_model_available(run.model):
        offline.go_offline()  # the model is local; the dataset was read offline or is in memory now
    pick_template(run)  # a stage, or a process accelerate launched, chooses it here
    if launch.is_global_main():  # the run folder's shared outputs are rank 0's, on whichever machine's disk
        write_run_config(run, output_dir / RUN_CONFIG)
    trainer = build_trainer(run, progress=progress)
    resume = f"Resume with: grpo-run --config {output_dir / RUN_CONFIG} --resume"
    try:
        with collector.training():
            trainer.train(resume_from_checkpoint=str(checkpoint) if checkpoint else None)
    except RewardError as error:  # e.g. a judge server gone: keep what the finished steps learnt
        raise RewardError(f"{error}; {save_after_failure(trainer, output_dir, resume)}") from None
    outcome = (Outcome.INTERRUPTED if interrupted(trainer) else Outcome.STOPPED if stopped_by(trainer)
               else Outcome.FINISHED)
    trained = Trained(trainer, outcome, stopped_by(trainer))
    if not trainer.is_world_process_zero():
        return trained
    names = [r.__name__ for r in run.rewards]
    records = outputs.read_metrics(output_dir / METRICS_FILE)
    plot = outputs.plot_rewards(records, names, output_dir / PLOT_FILE)
    if outcome is Outcome.INTERRUPTED:
        log(f"interrupted at step {trainer.state.global_step}; checkpoint saved in {output_dir}. {resume}")
        return trained
    if outcome is Outcome.STOPPED:
        log(f"stopped at step {trainer.state.global_step} by --stop-on {trained.stopped_by} (the warning above); "
            f"checkpoint saved in {output_dir}. {resume}")
        return trained
    final = output_dir / FINAL_DIR
    trainer.save_model(str(final))
    trainer.processing_class.save_pretrained(str(final))
    if not run.settings.keep_checkpoints:  # they hold the optimizer state to resume; a finished run needs it no more
        log(remove_checkpoints(output_dir))
    if run.settings.merge_lora:
        log(merge_lora(trainer, output_dir / MERGED_DIR))
    write_model_card(output_dir)  # the comparison, when the run has one, adds itself to the card after
    if summary:
        log(outputs.run_summary(records, run.rewards, run.schedules))
    log(f"final model saved to {shown(final)}" + (f"; reward curve in {shown(plot)}" if plot else ""))
    return trained


def merge_lora(trainer, target: Path) -> str:
    """Fold the LoRA adapters into the base weights and save a plain model (loadable without peft)."""
    model = trainer.accelerator.unwrap_model(trainer.model)
    if not hasattr(model, "merge_and_unload"):
        return "--merge-lora: this run trained the full model (no LoRA), so final/ is already a plain model"
    model.merge_and_unload().save_pretrained(str(target))
    trainer.processing_class.save_pretrained(str(target))
    return f"merged model saved to {target}"
