"""Who may write into an output folder, decided in one place for a run and for a staged run: the lock, the --resume
and --overwrite rules, and the checkpoint a resumed run continues from, found once here and handed on in a Claim."""

from __future__ import annotations

import shutil
from dataclasses import dataclass
from pathlib import Path

from grpo_core.errors import UsageError
from grpo_core.rundir.folder import (MEANING_FIELDS, RunLock, checkpoints, lock_holder, owned_outputs, remove_owned,
                                     unfinished_outputs, validate_flags, validate_output_dir, validate_resumable)
from grpo_core.rundir.names import STAGED_ROOT_FILES, STATE_FILE
from grpo_core.rundir.record import run_config
from grpo_core.rundir.stage_outputs import read_state, write_state
from grpo_core.settings.grpo_fields import grpo_defaults


@dataclass
class Claim:
    """An output folder checked for one run: the checkpoint it resumes from (None: it starts fresh) and, while it is
    held, its lock (a process that accelerate launched holds none: the launching process holds it)."""

    folder: Path
    checkpoint: Path | None = None
    lock: RunLock | None = None

    def hold(self) -> Claim:
        """Take the folder's lock (if not held yet); the claim."""
        if self.lock is None:
            self.lock = RunLock(self.folder).acquire()
        return self

    def release(self) -> None:
        if self.lock is not None:
            self.lock.release()
            self.lock = None


def validate_outputs(run, locked: bool = False) -> Claim:
    """The output folder of ``run`` (a ``trainer.ResolvedRun``) is free for it, or (--resume) holds this same run
    whole; the claim, with the checkpoint to resume from, not yet locked (``locked``: this process holds the lock)."""
    folder = Path(run.grpo["output_dir"])
    holder = None if locked or not unfinished_outputs(folder) else lock_holder(folder)
    if holder is not None:  # a live run that has not finished its first step yet
        raise UsageError(f"output folder '{folder}' is in use by another run ({holder}); wait for it to finish, or "
                         "pick another --output-dir")
    checkpoint = validate_output_dir(folder, run.settings.resume, run.settings.overwrite)
    if checkpoint is None:
        return Claim(folder)
    fields = grpo_defaults()
    defaults = {name: fields[name] for name in MEANING_FIELDS if name in fields}
    return Claim(folder, validate_resumable(checkpoint, run_config(run), run.grpo.get("max_steps"), defaults))


def claim_outputs(run, log=print) -> Claim:
    """Lock the output folder for ``run`` and check it (before the dataset or model is loaded); the held claim."""
    claim = Claim(Path(run.grpo["output_dir"])).hold()
    try:
        claim.checkpoint = validate_outputs(run, locked=True).checkpoint
    except BaseException:
        claim.release()
        raise
    return claim


def follow_outputs(run) -> Claim:
    """The launcher on a machine of rank above 0: machine 0's launcher locks and checks the output folder, so this one
    claims nothing (on its own disk there is nothing to claim); with --resume it hands on the last checkpoint it sees,
    the same one machine 0 found when the folder is on a disk they share."""
    folder = Path(run.grpo["output_dir"])
    validate_flags(run.settings.resume, run.settings.overwrite)
    if not run.settings.resume:
        return Claim(folder)
    last = checkpoints(folder)[-1:]
    if not last:
        raise UsageError(f"--resume on machine rank {run.place.rank}: no checkpoint in '{folder}'; every machine "
                         "reads the checkpoint, so put the output folder on a disk all the machines share")
    return Claim(folder, last[0])


def replace_outputs(run, log=print) -> None:
    """Once every check has passed: with --overwrite, remove what the earlier run wrote (and nothing else); without
    it, remove what a run that finished no step left (``folder.unfinished_outputs``), and say so."""
    if run.settings.resume:
        return
    folder = Path(run.grpo["output_dir"])
    if run.settings.overwrite:
        removed = remove_owned(folder)
        if removed:
            log(f"--overwrite: replaced the earlier run's {', '.join(removed)} in {folder}")
        return
    left = unfinished_outputs(folder)
    if left:
        remove_owned(folder)
        log(f"output folder '{folder}' held only what a run that finished no step left ({', '.join(left)}); this run "
            "takes it")


# --- a staged run: its root holds one folder per stage -----------------------------------------


def validate_staged(root: Path, stages: list[str], selected: list[str], resume: bool,
                    overwrite: bool) -> dict[str, tuple[bool, bool]]:
    """The selected stages to train, in order, each with the (resume, overwrite) its own folder gets, after checking
    ``root`` holds what --resume / --overwrite expect. A resumed stage with no checkpoint yet starts over."""
    validate_flags(resume, overwrite)
    finished = read_state(root) if not overwrite else {}
    foreign = foreign_outputs(root, stages)
    if foreign and not overwrite:
        raise UsageError(f"output folder '{root}' holds another run's outputs ({', '.join(foreign[:4])}); replace "
                         "them with --overwrite, or pick another --output-dir")
    used = [name for name in selected if owned_outputs(root / name) and not unfinished_outputs(root / name)]
    if not resume and used and not overwrite:
        raise UsageError(f"output folder '{root}' holds outputs of stage(s) {', '.join(used)}; continue with "
                         "--resume, replace them with --overwrite, or pick another --output-dir")
    if resume and not used:
        raise UsageError(f"--resume: no stage has started in '{root}'; start without --resume")
    todo = {}
    for name in selected:
        if resume and name in finished:
            continue
        resumes = resume and bool(checkpoints(root / name))
        todo[name] = (resumes, overwrite or (resume and not resumes))
    return todo


def foreign_outputs(root: Path, stages: list[str]) -> list[str]:
    """What another (one-stage) run wrote into ``root``; a staged run's own are its metrics and plot there."""
    found = owned_outputs(root)
    if (root / STATE_FILE).is_file() or any(owned_outputs(root / name) for name in stages):
        return [name for name in found if name not in STAGED_ROOT_FILES]
    return found


def replace_staged(root: Path, todo: list[str], stages: list[str]) -> list[str]:
    """--overwrite of a staged run: remove the outputs of the stages about to train, what another run left in
    ``root``, and those stages from the finished ones; what was removed."""
    removed = [f"{name}/{found}" for name in todo for found in remove_owned(root / name)]
    for name in foreign_outputs(root, stages):
        path = root / name
        if path.is_dir():
            shutil.rmtree(path)
        else:
            path.unlink()
        removed.append(name)
    finished = read_state(root)
    if any(name in finished for name in todo):
        write_state(root, {name: steps for name, steps in finished.items() if name not in todo})
        removed.append(STATE_FILE)
    return removed
