"""grpo-core's own cache folder: built and converted models, TRL's field table, accelerate configs."""

from __future__ import annotations

import os
from pathlib import Path


def cache_dir() -> Path:
    """Where grpo-core keeps what it builds once (``GRPO_CACHE_DIR`` overrides)."""
    root = os.environ.get("GRPO_CACHE_DIR") or os.path.join(
        os.environ.get("XDG_CACHE_HOME") or os.path.expanduser("~/.cache"), "grpo-core"
    )
    return Path(root)
