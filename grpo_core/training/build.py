"""Building a run's trainer: TRL's GRPOConfig and GRPOTrainer, the model a stage starts from, the reward table's
changes and grpo-core's callbacks."""

from __future__ import annotations

import os
import sys
from pathlib import Path

from grpo_core.plugins.loading import model_path
from grpo_core.rundir.record import base_model_words
from grpo_core.training import control, health, shared_prompts, tools, trl_contract
from grpo_core.training.callbacks import Alarms, HealthCallback, ModelCardCallback, ToolStatsCallback, run_callbacks
from grpo_core.training.resolve import ResolvedRun
from grpo_core.training.schedules import adaptive_observer, weights_callback


def build_trainer(run: ResolvedRun, progress: bool = True):
    """TRL's GRPOTrainer for a resolved run (loads the model), with grpo-core's callbacks."""
    from transformers.trainer_callback import PrinterCallback
    from transformers.trainer_callback import ProgressCallback as TqdmCallback
    from trl import GRPOConfig, GRPOTrainer

    grpo = dict(run.grpo)
    if progress:
        grpo.setdefault("disable_tqdm", True)
        quiet_libraries()
    args = GRPOConfig(**grpo)
    peft_config = None
    if run.profile.lora:
        from peft import LoraConfig

        peft_config = LoraConfig(**run.profile.lora)
    model, tokenizer, peft_config = starting_model(model_path(run.model), run.lora_adapter, args, peft_config)
    environments = {}
    if run.environments:  # episodes: the model calls the environments' tools, in a chat template that renders them
        tokenizer = tokenizer or _tokenizer(model_path(run.model))
        if run.chat_template is not None:
            tokenizer.chat_template = run.chat_template
        tool_stats = tools.ToolStats()
        environments["environment_factory"] = tools.environment_factory(run.environments, run.settings.tool_timeout,
                                                                        tool_stats)
        os.environ.setdefault("TRL_EXPERIMENTAL_SILENCE", "1")  # environment_factory is experimental in TRL
    # TRL loads the model once, from args.model_init_kwargs, and its tokenizer (setting a missing pad token).
    trainer = GRPOTrainer(
        model=model,
        reward_funcs=run.rewards,
        args=args,
        train_dataset=run.dataset,
        processing_class=tokenizer,
        peft_config=peft_config,
        **environments,
    )
    warn = lambda message: log_stderr(f"warning: {message}")  # noqa: E731
    if run.settings.share_prompts:
        shared_prompts.share_prompts(trainer, warn, note=log_stderr)
    alarms = Alarms(warn, run.settings.stop_on, note=log_stderr)
    signals, probe, observe_health = health.watch(trainer, run, args)
    trl_contract.change_rewards(trainer, reward_table_changes(run, args, observe_health))
    # callbacks that add to the logs: a dataset's own (a curriculum's level), the weights' schedule, the health signals
    loggers = []
    if run.dataset_spec is not None and run.dataset_spec.callbacks is not None:
        loggers += run.dataset_spec.callbacks(run.dataset, run.dataset_params)
    if run.schedules:  # weights that change: set on TRL's reward_weights, logged as weights/<reward>
        loggers.append(weights_callback(trainer, run.rewards, run.schedules))
    loggers.append(HealthCallback(signals, alarms, probe))
    if run.environments:  # each tool's calls, seconds and timeouts, logged as tools/<tool>/*
        loggers.append(ToolStatsCallback(tool_stats))
    quiet = progress and args.disable_tqdm
    if quiet:  # our one-line progress bar replaces the library's
        trainer.remove_callback(PrinterCallback)
        trainer.remove_callback(TqdmCallback)
    for callback in run_callbacks(trainer, Path(args.output_dir), args.max_steps, warn, loggers, progress=quiet,
                                  alarms=alarms, tops=reward_tops(run.rewards)):
        trainer.add_callback(callback)
    trainer.add_callback(ModelCardCallback(base_model_words(run.model)))
    return trainer


def reward_tops(rewards) -> dict:
    """Each reward's name and the most it pays: its declared upper bound, None for a reward that declares none."""
    bounds = {r.__name__: getattr(getattr(r, "spec", None), "bounds", None) for r in rewards}
    return {name: (float(b[1]) if b is not None and b[1] is not None else None) for name, b in bounds.items()}


def reward_table_changes(run: ResolvedRun, args, observe_health) -> list:
    """What each training batch's (completions x rewards) table passes through before TRL weighs it, in this order,
    each seeing what the one before returned:

    1. a control run's replacement of the scores (``control.table_change``), so everything after it sees the scores
       the policy is trained on;
    2. the adaptive weights' observer (``schedules.adaptive_observer``), which counts successes in those scores;
    3. the health signals' observer (``health.watch``).
    """
    changes = []
    if control.is_control(run.settings):  # a control run: TRL trains on scores cut loose from the completions
        changes.append(control.table_change(run.settings.control, args.seed))
    observe_weights = adaptive_observer(run.rewards, run.schedules)
    if observe_weights is not None:
        changes.append(observe_weights)
    changes.append(observe_health)
    return changes


def starting_model(model: str, lora_adapter: str | None, args, peft_config):
    """``(model, tokenizer, peft_config)`` for GRPOTrainer: the model name as it is (TRL loads it, and wraps it in
    ``peft_config``), or, continuing the LoRA adapter a stage before ended with, the base model with that adapter
    loaded trainable, and its tokenizer."""
    if lora_adapter is None:
        return model, None, peft_config
    from peft import PeftModel
    from transformers import AutoTokenizer

    base = trl_contract.load_base_model(model, args.model_init_kwargs)
    return (PeftModel.from_pretrained(base, lora_adapter, is_trainable=True), AutoTokenizer.from_pretrained(lora_adapter),
            None)


def _tokenizer(path: str):
    from transformers import AutoTokenizer

    return AutoTokenizer.from_pretrained(path)


def quiet_libraries() -> None:
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
    return trl_contract.UNSCORED_ROWS_LOG not in str(record.msg)


def log_stderr(message: str) -> None:
    print(message, file=sys.stderr)
