"""The training path: resolve plugins by name, build TRL's GRPOConfig, run TRL's GRPOTrainer."""

from __future__ import annotations

import json
import os
import sys
from dataclasses import dataclass
from pathlib import Path

from grpo_core.config import RunSettings, check_grpo_fields
from grpo_core.data import check_columns
from grpo_core.errors import UsageError
from grpo_core.plugins import get_registry
from grpo_core.rewards import load_rewards

DEFAULT_OUTPUT_DIR = "runs/grpo"


@dataclass
class ResolvedRun:
    """A run with every name resolved and the dataset loaded; the model is not loaded yet."""

    settings: RunSettings
    rewards: list
    dataset: object
    dataset_params: dict
    model: str  # the name given: an alias, folder or hub id (resolved when the model is loaded)
    profile: object
    profile_reason: str
    grpo: dict  # final GRPOConfig keyword arguments


def resolve(settings: RunSettings, log=print) -> ResolvedRun:
    """Check and resolve everything that can be checked before a model is loaded."""
    registry = get_registry()
    if not settings.rewards:
        raise UsageError("no reward selected; add --reward NAME (installed: "
                         f"{', '.join(sorted(registry.items['rewards'])) or 'none'})")
    rewards = load_rewards(settings.rewards, args=settings.reward_args, weights=settings.weights)
    profile, reason = pick_profile(settings.profile)
    if settings.dataset is None:
        raise UsageError("no dataset selected; add --dataset NAME (installed: "
                         f"{', '.join(sorted(registry.items['datasets']))})")
    dataset_spec = registry.dataset(settings.dataset)
    dataset_params = dataset_spec.resolve(settings.dataset_args)
    if settings.model is None:
        raise UsageError("no model selected; add --model NAME_OR_PATH")
    check_model_name(settings.model)
    grpo = dict(profile.grpo_config)
    grpo.update(check_grpo_fields(settings.grpo, "GRPOConfig"))
    grpo.setdefault("output_dir", DEFAULT_OUTPUT_DIR)
    grpo["reward_weights"] = [float(r.weight) for r in rewards]
    if not grpo.get("use_cpu") and not _has_accelerator():
        grpo.update(use_cpu=True, bf16=False, fp16=False)  # TRL defaults to bf16, which fails on a CPU
    dataset = dataset_spec.load(**dataset_params)
    check_columns(dataset, rewards, settings.dataset)
    log(f"profile: {profile.name} ({reason})")
    return ResolvedRun(settings, rewards, dataset, dataset_params, settings.model, profile, reason, grpo)


def pick_profile(name: str):
    registry = get_registry()
    profile = registry.profile(name)
    reason = "selected"
    if profile.pick is not None:
        picked, reason = profile.pick()
        profile = registry.profile(picked)
    return profile, reason


def check_model_name(name: str) -> None:
    """A model is an installed alias, a local folder, or a hub id (``org/name``)."""
    models = get_registry().items["models"]
    if name in models or os.path.isdir(name) or ("/" in name and not os.path.exists(name)):
        return
    from grpo_core.params import did_you_mean

    raise UsageError(
        f"unknown model '{name}'{did_you_mean(name, models)}: not an installed alias "
        f"({', '.join(sorted(models))}), a local folder, or a hub id like org/name"
    )


def resolve_model(name: str) -> str:
    alias = get_registry().model(name)
    return alias.resolve() if alias is not None else name


def _has_accelerator() -> bool:
    import torch

    return torch.cuda.is_available() or (hasattr(torch.backends, "mps") and torch.backends.mps.is_available())


def build_trainer(run: ResolvedRun, progress: bool = True):
    """TRL's GRPOTrainer for a resolved run (loads the model), with grpo-core's callbacks."""
    import torch
    from transformers import AutoModelForCausalLM, AutoTokenizer
    from transformers.trainer_callback import PrinterCallback, ProgressCallback as TqdmCallback
    from trl import GRPOConfig, GRPOTrainer

    from grpo_core import outputs

    grpo = dict(run.grpo)
    if progress:
        grpo.setdefault("disable_tqdm", True)
        _quiet_libraries()
    args = GRPOConfig(**grpo)
    model_kwargs = dict(run.profile.model_kwargs)
    if isinstance(model_kwargs.get("dtype"), str) and model_kwargs["dtype"] != "auto":
        model_kwargs["dtype"] = getattr(torch, model_kwargs["dtype"])
    model_path = resolve_model(run.model)
    tokenizer = AutoTokenizer.from_pretrained(model_path)
    if tokenizer.pad_token is None:
        tokenizer.pad_token = tokenizer.eos_token
    model = AutoModelForCausalLM.from_pretrained(model_path, **model_kwargs)
    peft_config = None
    if run.profile.lora:
        from peft import LoraConfig

        peft_config = LoraConfig(**run.profile.lora)
    output_dir = Path(args.output_dir)
    trainer = GRPOTrainer(
        model=model,
        reward_funcs=run.rewards,
        args=args,
        train_dataset=run.dataset,
        processing_class=tokenizer,
        peft_config=peft_config,
    )
    trainer.add_callback(outputs.MetricsCallback(output_dir / outputs.METRICS_FILE))
    every = max(1, (args.max_steps if args.max_steps > 0 else 100) // 10)
    trainer.add_callback(outputs.CompletionsCallback(trainer, output_dir / outputs.COMPLETIONS_FILE, every))
    trainer.add_callback(outputs.MonitorCallback(warn=lambda message: log_stderr(f"warning: {message}")))
    trainer.add_callback(outputs.InterruptCallback())
    if progress and args.disable_tqdm:
        trainer.remove_callback(PrinterCallback)
        trainer.remove_callback(TqdmCallback)
        trainer.add_callback(outputs.ProgressCallback())
    return trainer


def _quiet_libraries() -> None:
    """Our progress bar replaces the libraries' bars and deprecation chatter."""
    import warnings

    from transformers.utils import logging as hf_logging

    warnings.filterwarnings("ignore", category=FutureWarning, module=r"transformers\..*")
    hf_logging.set_verbosity_error()
    hf_logging.disable_progress_bar()


def train(run: ResolvedRun, log=print, progress: bool = True, summary: bool = True):
    """Train, save the final model in ``output_dir/final``, write the plot and summary; return the trainer.

    ``summary=False`` leaves the printed training summary to the caller (which shows the held-out comparison first).
    """
    from transformers.trainer_utils import get_last_checkpoint

    from grpo_core import outputs

    output_dir = Path(run.grpo["output_dir"])
    output_dir.mkdir(parents=True, exist_ok=True)
    checkpoint = None
    if run.settings.resume:
        checkpoint = get_last_checkpoint(str(output_dir)) if output_dir.is_dir() else None
        if checkpoint is None:
            raise UsageError(f"--resume: no checkpoint in '{output_dir}'; start without --resume")
        log(f"resuming from {checkpoint}")
        outputs.truncate_metrics(output_dir / outputs.METRICS_FILE, int(Path(checkpoint).name.split("-")[-1]))
    else:
        for name in (outputs.METRICS_FILE, outputs.COMPLETIONS_FILE):
            (output_dir / name).unlink(missing_ok=True)
    write_run_config(run, output_dir / "run_config.yaml")
    trainer = build_trainer(run, progress=progress)
    interrupt = next(c for c in trainer.callback_handler.callbacks if isinstance(c, outputs.InterruptCallback))
    trainer.train(resume_from_checkpoint=checkpoint)
    if not trainer.is_world_process_zero():
        return trainer
    names = [r.__name__ for r in run.rewards]
    records = outputs.read_metrics(output_dir / outputs.METRICS_FILE)
    plot = outputs.plot_rewards(records, names, output_dir / outputs.PLOT_FILE)
    if interrupt.interrupted:
        log(f"interrupted at step {trainer.state.global_step}; checkpoint saved in {output_dir}. "
            f"Resume with: grpo-run --config {output_dir / 'run_config.yaml'} --resume")
        return trainer
    final = output_dir / "final"
    trainer.save_model(str(final))
    trainer.processing_class.save_pretrained(str(final))
    if run.settings.merge_lora:
        log(merge_lora(trainer, output_dir / "merged"))
    if summary:
        log(outputs.format_summary(outputs.summarize(records, names)))
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


def write_run_config(run: ResolvedRun, path: Path) -> None:
    """Everything resolved, as a config file: ``grpo-run --config run_config.yaml`` reproduces the run."""
    import yaml

    settings = run.settings
    config = {
        "rewards": [f"{r.__name__}={r.weight:g}" for r in run.rewards],
        "reward_args": {r.__name__: r.params for r in run.rewards if r.params},
        "dataset": settings.dataset,
        "dataset_args": {k: v for k, v in run.dataset_params.items() if v is not None},
        "model": settings.model,
        "profile": run.profile.name,
        **({"compare": settings.compare} if settings.compare else {}),
        **({"merge_lora": True} if settings.merge_lora else {}),
        **{k: v for k, v in run.grpo.items() if k != "reward_weights"},
    }
    path.write_text(yaml.safe_dump(config, sort_keys=False))


def describe(run: ResolvedRun, launch_command: list[str] | None = None) -> str:
    """The resolved run as JSON (for --dry-run)."""
    return json.dumps(
        {
            "model": _describe_model(run.model),
            "dataset": {"name": run.settings.dataset, **run.dataset_params, "rows": len(run.dataset)},
            "rewards": [
                {"name": r.__name__, "weight": r.weight, "params": r.params, "columns": r.columns} for r in run.rewards
            ],
            "profile": {"name": run.profile.name, "reason": run.profile_reason},
            "grpo_config": run.grpo,
            "model_kwargs": run.profile.model_kwargs,
            "lora": run.profile.lora,
            "launch": launch_command,
        },
        indent=2,
        default=str,
    )


def _describe_model(name: str) -> dict:
    alias = get_registry().model(name)
    if alias is None:
        return {"name": name}
    return {"name": name, "alias": True, "offline": bool(alias.available())}


def log_stderr(message: str) -> None:
    print(message, file=sys.stderr)
