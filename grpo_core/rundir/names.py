"""Every file and folder name a run writes into its output folder, written once; the other rundir modules read them here."""

from __future__ import annotations

import os
from pathlib import Path

RUN_CONFIG = "run_config.yaml"  # the resolved run, absolute paths: grpo-run --config reproduces it
METRICS_FILE = "metrics.jsonl"  # one JSON record per logged step
COMPLETIONS_FILE = "completions.jsonl"  # sampled prompts, completions and scores
PLOT_FILE = "reward_curve.png"
MODEL_CARD = "README.md"  # TRL's model card: the run's only when TRL's marker is in it
MODEL_CARD_MARKER = "generated_from_trainer"
FINAL_DIR = "final"  # the trained model
MERGED_DIR = "merged"  # --merge-lora: the LoRA adapters folded into the base weights
CHECKPOINT_PREFIX = "checkpoint-"  # TRL's checkpoint-N folders (transformers' PREFIX_CHECKPOINT_DIR)
TRAINER_STATE = "trainer_state.json"  # in a checkpoint: its step
LOCK_FILE = ".grpo-run.lock"
STATE_FILE = "stages.json"  # a staged run: the stages that finished, and their step counts

# What a run writes into its output folder (and so what --overwrite may remove); nothing else is touched.
OWNED_FILES = (RUN_CONFIG, METRICS_FILE, COMPLETIONS_FILE, PLOT_FILE)
OWNED_FOLDERS = (FINAL_DIR, MERGED_DIR)
# What a staged run writes at its root besides its stages' folders (the merged metrics and plot).
STAGED_ROOT_FILES = (METRICS_FILE, PLOT_FILE)


def shown(path: str | Path) -> str:
    """``path`` as a message shows it: relative to the current folder when it lies inside it (``runs/demo/final``),
    else absolute."""
    path = Path(os.path.abspath(path))  # '..' resolved, symlinks not
    return str(path.relative_to(Path.cwd())) if path.is_relative_to(Path.cwd()) else str(path)
