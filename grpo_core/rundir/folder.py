"""An output folder belongs to one run: ownership, the lock, atomic writes, and what --resume may continue."""

from __future__ import annotations

import json
import os
import shutil
import socket
import struct
import zipfile
from pathlib import Path
from typing import Self

from grpo_core.errors import UsageError
from grpo_core.rundir.names import (CHECKPOINT_PREFIX, FINAL_DIR, LOCK_FILE, METRICS_FILE, MODEL_CARD,
                                    MODEL_CARD_MARKER, OWNED_FILES, OWNED_FOLDERS, RUN_CONFIG, TRAINER_STATE)

# GRPOConfig fields that change what a run learns; a resumed run must keep them.
MEANING_FIELDS = (
    "learning_rate", "beta", "num_generations", "per_device_train_batch_size", "gradient_accumulation_steps",
    "max_completion_length", "max_prompt_length", "temperature", "top_p", "top_k", "loss_type", "epsilon",
    "epsilon_high", "scale_rewards", "lr_scheduler_type", "warmup_ratio", "warmup_steps", "weight_decay", "seed",
    "num_iterations", "steps_per_generation", "generation_batch_size", "mask_truncated_completions",
)


def owned_outputs(folder: Path) -> list[str]:
    """Names of the run outputs in ``folder`` (checkpoints first by step), empty for a folder without any."""
    folder = Path(folder)
    if not folder.is_dir():
        return []
    names = [p.name for p in checkpoints(folder)]
    names += [name for name in OWNED_FILES if (folder / name).is_file()]
    if _is_model_card(folder / MODEL_CARD):
        names.append(MODEL_CARD)
    names += [name for name in OWNED_FOLDERS if (folder / name).is_dir()]
    return names


def unfinished_outputs(folder: Path) -> list[str]:
    """What a run that finished no step left in ``folder`` (its ``run_config.yaml``, a ``metrics.jsonl`` without a
    step): nothing the user made, so the next run takes the folder. Empty when the folder holds none of it, or holds
    anything a finished step writes (a checkpoint, a logged step, completions, a model)."""
    found = owned_outputs(folder)
    if not found or any(name not in (RUN_CONFIG, METRICS_FILE) for name in found):
        return []
    if METRICS_FILE in found and _logged_a_step(Path(folder) / METRICS_FILE):
        return []
    return found


def _logged_a_step(path: Path) -> bool:
    """Whether ``metrics.jsonl`` holds a finished step's record (a line that is not a record counts as one)."""
    for line in path.read_text(errors="replace").splitlines():
        if not line.strip():
            continue
        try:
            record = json.loads(line)
        except ValueError:
            return True
        if not isinstance(record, dict) or "step" in record or record.get("after_step"):
            return True
    return False


def _is_model_card(path: Path) -> bool:
    """The model card TRL writes into the output folder (a README.md of the user's own is not the run's)."""
    try:
        return path.is_file() and MODEL_CARD_MARKER in path.read_text(errors="replace")[:2000]
    except OSError:
        return False


def checkpoints(folder: Path) -> list[Path]:
    """``checkpoint-N`` folders in ``folder``, by step."""
    found = [p for p in Path(folder).glob(f"{CHECKPOINT_PREFIX}*") if p.is_dir() and checkpoint_step(p) is not None]
    return sorted(found, key=checkpoint_step)


def checkpoint_step(checkpoint: Path) -> int | None:
    """The step N of a ``checkpoint-N`` folder, by its name (None for another name)."""
    name = Path(checkpoint).name
    step = name[len(CHECKPOINT_PREFIX):]
    return int(step) if name.startswith(CHECKPOINT_PREFIX) and step.isdigit() else None


def validate_is_folder(folder: str | Path) -> None:
    """The output folder must be a folder, or not exist yet and not be inside a file."""
    folder = Path(folder)
    if folder.exists() and not folder.is_dir():
        raise UsageError(f"output folder '{folder}' is a file; pass a folder path with --output-dir")
    parent = next((p for p in folder.absolute().parents if p.exists()), None)
    if parent is not None and not parent.is_dir():
        raise UsageError(f"output folder '{folder}' is inside '{parent}', which is a file; pass another --output-dir")


def validate_flags(resume: bool, overwrite: bool) -> None:
    """--resume and --overwrite together say two things; a run (or a staged run) takes one."""
    if resume and overwrite:
        raise UsageError("--resume and --overwrite contradict each other; continue the run with --resume, "
                         "or start over with --overwrite")


def validate_output_dir(folder: str | Path, resume: bool, overwrite: bool) -> Path | None:
    """Refuse an output folder that holds another run's outputs unless --resume or --overwrite says what to do;
    with --resume, the last checkpoint (not yet checked to be whole: see :func:`validate_resumable`)."""
    folder = Path(folder)
    validate_is_folder(folder)
    validate_flags(resume, overwrite)
    found = owned_outputs(folder)
    if resume:
        last = checkpoints(folder)[-1:]
        if not last and (folder / FINAL_DIR).is_dir():
            raise UsageError(f"--resume: the run in '{folder}' finished and its checkpoints were removed "
                             "(keep_checkpoints: false); start a new run with --overwrite or another --output-dir")
        if not last and unfinished_outputs(folder):
            raise UsageError(f"--resume: the run in '{folder}' finished no step, so there is nothing to resume; run "
                             "the same command without --resume, which takes the folder")
        if not last:
            raise UsageError(f"--resume: no checkpoint in '{folder}'; start without --resume")
        return last[0]
    if found and not overwrite and not unfinished_outputs(folder):
        shown = ", ".join(found[:4]) + (f" and {len(found) - 4} more" if len(found) > 4 else "")
        raise UsageError(
            f"output folder '{folder}' holds another run's outputs ({shown}); continue that run with --resume, "
            "replace its outputs with --overwrite, or pick another --output-dir"
        )
    return None


def remove_owned(folder: Path) -> list[str]:
    """--overwrite: remove only what a run writes (checkpoints, metrics, final model...); return what was removed."""
    removed = owned_outputs(folder)
    for name in removed:
        path = Path(folder) / name
        if path.is_dir():
            shutil.rmtree(path)
        else:
            path.unlink()
    return removed


def remove_checkpoints(folder: Path) -> str:
    """A finished run's checkpoints removed (keep_checkpoints: false); what was removed, in words."""
    removed = checkpoints(folder)
    for path in removed:
        shutil.rmtree(path)
    names = ", ".join(p.name for p in removed) or "none"
    return f"checkpoints removed now that final/ is saved ({names}; keep_checkpoints: true keeps them)"


# --- the lock ---------------------------------------------------------------------------------


class RunLock:
    """An exclusive lock on an output folder: ``.grpo-run.lock`` holding the pid and host of the run.

    Taken with ``flock``, which the kernel releases when the process dies, so a lock left by a
    killed run (its pid gone) is taken over without a race; the pid in the file names the holder.
    """

    def __init__(self, folder: Path) -> None:
        self.path = Path(folder) / LOCK_FILE
        self.fd: int | None = None

    def acquire(self) -> Self:
        try:
            import fcntl
        except ImportError:  # no flock (Windows): the folder check still refuses a second run's outputs
            return self
        self.path.parent.mkdir(parents=True, exist_ok=True)
        while True:
            fd = os.open(self.path, os.O_RDWR | os.O_CREAT, 0o644)
            try:
                fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
            except OSError:
                holder = _read_holder(fd)
                os.close(fd)
                raise UsageError(
                    f"output folder '{self.path.parent}' is in use by another run ({holder}); wait for it to "
                    "finish, or pick another --output-dir"
                ) from None
            try:
                same = os.fstat(fd).st_ino == os.stat(self.path).st_ino
            except FileNotFoundError:
                same = False
            if same:  # else the holder removed the file between our open and flock: try again
                break
            os.close(fd)
        os.ftruncate(fd, 0)
        os.write(fd, json.dumps({"pid": os.getpid(), "host": socket.gethostname()}).encode())
        os.fsync(fd)
        self.fd = fd
        return self

    def release(self) -> None:
        if self.fd is None:
            return
        try:
            self.path.unlink()
        except FileNotFoundError:
            pass
        os.close(self.fd)
        self.fd = None

    def __enter__(self) -> Self:
        return self.acquire()

    def __exit__(self, *exc) -> None:
        self.release()


def lock_holder(folder: Path) -> str | None:
    """Who holds ``folder``'s lock (``pid N on HOST``) when a live run holds it; None when none does (or no flock)."""
    try:
        import fcntl
    except ImportError:
        return None
    try:
        fd = os.open(Path(folder) / LOCK_FILE, os.O_RDONLY)
    except OSError:
        return None
    try:
        fcntl.flock(fd, fcntl.LOCK_SH | fcntl.LOCK_NB)
    except OSError:
        return _read_holder(fd)
    else:
        fcntl.flock(fd, fcntl.LOCK_UN)
        return None
    finally:
        os.close(fd)


def _read_holder(fd: int) -> str:
    try:
        holder = json.loads(os.pread(fd, 4096, 0).decode() or "{}")
        return f"pid {holder['pid']} on {holder.get('host', 'this machine')}"
    except (OSError, ValueError, KeyError, TypeError):
        return "a process that holds its lock file"


# --- atomic writes ----------------------------------------------------------------------------


def write_atomic(path: Path, text: str) -> None:
    """Write ``text`` to a sibling temporary file, then rename it over ``path``: readers see old or new, never half."""
    path = Path(path)
    partial = path.with_name(f".{path.name}.{os.getpid()}.tmp")
    with open(partial, "w") as handle:
        handle.write(text)
        handle.flush()
        os.fsync(handle.fileno())
    os.replace(partial, path)


# --- what --resume may continue ---------------------------------------------------------------


def validate_resumable(checkpoint: Path, asked: dict, max_steps: int | None, defaults: dict | None = None) -> Path:
    """``checkpoint`` (the last of its folder) after checking it is whole and from the run ``asked`` for.

    ``asked`` is the run config the command line resolves to (as ``run_config.yaml`` stores it);
    ``defaults`` holds the GRPOConfig defaults a side that leaves a field out gets.
    """
    import yaml

    folder = Path(checkpoint).parent
    saved_path = folder / RUN_CONFIG
    if not saved_path.is_file():
        raise UsageError(f"--resume: '{folder}' has checkpoints but no {RUN_CONFIG}, so it cannot be checked to be "
                         "this run; start over with --overwrite or pick another --output-dir")
    try:
        saved = yaml.safe_load(saved_path.read_text())
    except (yaml.YAMLError, UnicodeDecodeError):
        saved = None
    if not isinstance(saved, dict):
        raise UsageError(f"--resume: '{saved_path}' is damaged (not a YAML mapping); restore it, or start over "
                         "with --overwrite")
    differ = run_differences(saved, asked, defaults)
    if differ:
        raise UsageError(
            f"--resume: the run in '{folder}' differs from this one in {'; '.join(differ)}; resume it with its own "
            f"settings (grpo-run --config {saved_path} --resume), or start a new run with --overwrite or another "
            "--output-dir"
        )
    step = validate_checkpoint(checkpoint)
    if max_steps is not None and max_steps > 0 and step >= max_steps:
        raise UsageError(f"--resume: {checkpoint.name} is already at step {step} of max_steps={max_steps}; "
                         "raise --max-steps to train further")
    validate_metrics(folder / METRICS_FILE)
    return checkpoint


def run_differences(saved: dict, asked: dict, defaults: dict | None = None) -> list[str]:
    """``field ('saved' there, 'asked' here)`` for each setting that changes what the run is."""
    keys = ("model", "dataset", "dataset_args", "rewards", "reward_args", "control_of", *MEANING_FIELDS)
    defaults = defaults or {}
    differ = []
    for key in keys:
        there, here = saved.get(key, defaults.get(key)), asked.get(key, defaults.get(key))
        if _normal(there) != _normal(here):
            differ.append(f"{key} ({_short(there)} there, {_short(here)} here)")
    return differ


def _normal(value):
    if isinstance(value, dict):
        return {str(k): _normal(v) for k, v in value.items() if v is not None}
    if isinstance(value, (list, tuple)):
        return [_normal(v) for v in value]
    if isinstance(value, bool) or value is None:
        return value
    if isinstance(value, (int, float)):
        return float(value)
    try:
        return float(value)
    except (TypeError, ValueError):
        return str(value)


def _short(value) -> str:
    text = repr(value)
    return text if len(text) <= 60 else text[:57] + "..."


def validate_checkpoint(checkpoint: Path) -> int:
    """The step of ``checkpoint`` after checking its files are whole; a UsageError naming the damaged file."""
    def damaged(name: str, why: str) -> UsageError:
        earlier = [p.name for p in checkpoints(checkpoint.parent) if p != checkpoint]
        fallback = f"delete that folder to resume from {earlier[-1]}" if earlier else "delete that folder"
        return UsageError(f"--resume: {checkpoint / name} is damaged ({why}); {fallback}, or start over with --overwrite")

    state_path = checkpoint / TRAINER_STATE
    if not state_path.is_file():
        raise damaged(TRAINER_STATE, "missing")
    try:
        state = json.loads(state_path.read_text())
        step = int(state["global_step"])
    except (ValueError, KeyError, TypeError, UnicodeDecodeError):
        raise damaged(TRAINER_STATE, "not a JSON trainer state") from None
    weights = [p for p in checkpoint.iterdir() if p.suffix in (".safetensors", ".bin")]
    if not weights:
        raise damaged("model.safetensors", "no model weights in the checkpoint")
    for file in checkpoint.iterdir():
        why = None
        if file.suffix == ".safetensors":
            why = _safetensors_problem(file)
        elif file.suffix in (".pt", ".pth", ".bin"):
            why = None if zipfile.is_zipfile(file) else "truncated or not a torch file"
        elif file.suffix == ".json":
            try:
                json.loads(file.read_text())
            except (ValueError, UnicodeDecodeError):
                why = "not valid JSON"
        if why:
            raise damaged(file.name, why)
    return step


def _safetensors_problem(path: Path) -> str | None:
    size = path.stat().st_size
    try:
        with open(path, "rb") as handle:
            (length,) = struct.unpack("<Q", handle.read(8))
            if length > size:
                return "truncated"
            header = json.loads(handle.read(length))
    except (struct.error, ValueError, UnicodeDecodeError):
        return "truncated or not a safetensors file"
    end = max((v["data_offsets"][1] for k, v in header.items() if k != "__metadata__"), default=0)
    return "truncated" if 8 + length + end > size else None


def validate_metrics(path: Path) -> None:
    """A UsageError naming the first line of ``metrics.jsonl`` that is not a JSON record."""
    if not path.is_file():
        return
    for number, line in enumerate(path.read_text(errors="replace").splitlines(), start=1):
        if not line.strip():
            continue
        try:
            record = json.loads(line)
        except ValueError:
            record = None
        if not isinstance(record, dict):
            raise UsageError(
                f"--resume: {path} line {number} is damaged (not a JSON record); remove that line to resume, "
                "or start over with --overwrite"
            )
