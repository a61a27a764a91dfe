"""What the command-line tests share: invoking grpo-run in-process, and a fingerprint of a folder that
shows whether a failed command changed any output."""

import hashlib
from pathlib import Path

from click.testing import CliRunner

from grpo_core.cli import cli


def folder_hash(folder: Path) -> str:
    digest = hashlib.sha256()
    for path in sorted(Path(folder).rglob("*")):
        digest.update(str(path.relative_to(folder)).encode())
        if path.is_file():
            digest.update(path.read_bytes())
    return digest.hexdigest()


def invoke(*args):
    result = CliRunner().invoke(cli, [str(a) for a in args])
    assert result.exception is None or isinstance(result.exception, SystemExit), repr(result.exception)
    assert "Traceback" not in result.output
    return result.exit_code, result.output


def train_run(run, **options):
    """``train`` in the folder ``claim_folder`` claims for ``run``, released after: what grpo-run does for one run."""
    from grpo_core.training.train import claim_folder, train

    claim = claim_folder(run, options.get("log", print))
    try:
        return train(run, claim, **options)
    finally:
        claim.release()


def invoke_json(*args):
    """``invoke`` for a command given --json: its exit status and the JSON document on standard output alone (a
    warning on standard error, such as a plugin that failed to load, is not part of it)."""
    import json

    result = CliRunner().invoke(cli, [str(a) for a in args])
    assert result.exception is None or isinstance(result.exception, SystemExit), repr(result.exception)
    assert "Traceback" not in result.output
    return result.exit_code, (json.loads(result.stdout) if result.exit_code in (0, 1) else result.output)
