"""A plugin hook that no spec declares (a misspelt ``register_reward``) is never called: grpo-run says so, naming the
distribution, the hook and the spec it probably meant, and GRPO_STRICT_PLUGINS=1 makes it a one-line usage error."""

import os
import subprocess
import sys
from pathlib import Path

import pytest

from grpo_core import RewardSpec, hookimpl
from grpo_core.errors import UsageError
from grpo_core.plugins import registered

from cli_helpers import folder_hash
from conftest import FIXTURES

GRPO_RUN = str(Path(sys.executable).with_name("grpo-run"))


@pytest.fixture(scope="module")
def misspelt_site(tmp_path_factory):
    """The fixture distribution grpo-fixture-misspelt, installed with pip into a folder of its own."""
    target = tmp_path_factory.mktemp("misspelt-site")
    subprocess.run([sys.executable, "-m", "pip", "install", "--quiet", "--no-deps", "--no-build-isolation",
                    "--target", str(target), str(FIXTURES / "grpo-fixture-misspelt")], check=True, capture_output=True)
    return target


def grpo_run(site, *args, strict=False, cwd=None):
    env = {**os.environ, "PYTHONPATH": str(site), "GRPO_STRICT_PLUGINS": "1" if strict else ""}
    return subprocess.run([GRPO_RUN, *map(str, args)], capture_output=True, text=True, env=env, cwd=cwd, timeout=120)


def test_a_misspelt_hook_is_a_warning_naming_the_hook_it_meant(misspelt_site):
    result = grpo_run(misspelt_site, "plugins")
    assert result.returncode == 0, result.stderr
    warnings = [line for line in result.stderr.splitlines() if "register_reward'" in line]
    assert warnings and all("grpo-fixture-misspelt" in line and "did you mean 'register_rewards'?" in line
                            for line in warnings), result.stderr
    assert "misspelt" in result.stdout and "Traceback" not in result.stderr


def test_strict_plugins_makes_a_misspelt_hook_exit_2_with_one_line(misspelt_site, tmp_path):
    out = tmp_path / "out"
    out.mkdir()
    (out / "keep.txt").write_text("a file of the user's")
    before = folder_hash(out)
    for args in (["plugins"], ["--reward", "whisper", "--dataset", "arithmetic", "--set", f"output_dir={out}"]):
        result = grpo_run(misspelt_site, *args, strict=True, cwd=tmp_path)
        assert result.returncode == 2, result.stderr
        errors = [line for line in result.stderr.splitlines() if line.startswith("Error:")]
        assert len(errors) == 1 and "'register_reward'" in errors[0] and "register_rewards" in errors[0], result.stderr
        assert "grpo-fixture-misspelt" in errors[0] and "GRPO_STRICT_PLUGINS" in errors[0]
        assert "Traceback" not in result.stderr
    assert folder_hash(out) == before


def test_the_unknown_reward_error_comes_after_the_hint(misspelt_site, tmp_path):
    result = grpo_run(misspelt_site, "--reward", "whisper", "--dataset", "arithmetic", "--dry-run", cwd=tmp_path)
    assert result.returncode == 2
    lines = result.stderr.splitlines()
    hint = next(i for i, line in enumerate(lines) if "register_reward'" in line)
    error = next(i for i, line in enumerate(lines) if line.startswith("Error: unknown reward 'whisper'"))
    assert hint < error


class Misspelt:
    @hookimpl
    def register_dataset(self, register):  # register_datasets
        raise AssertionError("never called")

    @hookimpl
    def register_rewards(self, register):
        register(RewardSpec(name="spelt-right", description="x", func=lambda completion: 1.0))


def test_a_correct_hook_beside_a_misspelt_one_still_registers(capsys, monkeypatch):
    with registered(Misspelt(), distribution="dist-x") as registry:
        assert "spelt-right" in registry.items["rewards"]
        (info,) = [i for i in registry.plugins if i.distribution == "dist-x"]
        assert info.warnings == ["plugin 'Misspelt' from dist-x implements the hook 'register_dataset', which no grpo "
                                 "hook spec declares, so it is never called; did you mean 'register_datasets'?"]
    assert "grpo-run: warning: plugin 'Misspelt' from dist-x" in capsys.readouterr().err
    monkeypatch.setenv("GRPO_STRICT_PLUGINS", "1")
    with pytest.raises(UsageError, match="register_dataset'.*GRPO_STRICT_PLUGINS"):
        with registered(Misspelt(), distribution="dist-x"):
            pass


def test_a_plugin_with_only_known_hooks_gets_no_warning(capsys):
    class Fine:
        @hookimpl
        def register_rewards(self, register):
            pass

    with registered(Fine(), distribution="dist-fine") as registry:
        assert not [i for i in registry.plugins if i.warnings]
    assert "warning" not in capsys.readouterr().err
