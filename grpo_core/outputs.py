"""What a run writes besides checkpoints: metrics as JSON lines."""

from __future__ import annotations

import json
from pathlib import Path

from transformers import TrainerCallback


class MetricsCallback(TrainerCallback):
    """Append every log (step, rewards, KL, errors) to ``metrics.jsonl`` on the main process."""

    def __init__(self, path: Path) -> None:
        self.path = Path(path)

    def on_log(self, args, state, control, logs=None, **kwargs):
        if not state.is_world_process_zero or not logs:
            return
        self.path.parent.mkdir(parents=True, exist_ok=True)
        record = {"step": state.global_step, **logs}
        with self.path.open("a") as handle:
            handle.write(json.dumps(record, default=float) + "\n")
