import json

import pytest

from grpo_core import RewardSpec, hookimpl
from grpo_core.errors import PluginError, UsageError
from grpo_core.plugins import get_registry, load_plugins, registered


def names(kind):
    return set(get_registry(refresh=True).items[kind])


def test_builtins_register_through_the_hooks():
    registry = get_registry()
    assert {"cpu", "auto"} <= set(registry.items["profiles"])
    assert "local" in registry.items["datasets"]
    assert "tiny-random" in registry.items["models"]
    builtin = [info for info in registry.plugins if info.distribution == "grpo-core"]
    assert builtin and "local" in builtin[0].registers["datasets"]


def test_installed_distribution_is_discovered(installed_fixture_plugins, capsys):
    registry = get_registry(refresh=True)
    assert registry.reward("shout").distribution == "grpo-fixture-plugin"
    info = next(i for i in registry.plugins if i.distribution == "grpo-fixture-plugin")
    assert info.version == "1.2.3"
    assert info.registers["rewards"] == ["shout"]
    assert info.registers["datasets"] == ["fixture-rows"]


def _from_importlib(group):
    from importlib import metadata

    return [(ep.name, ep.value, ep.dist.name, ep.dist.version) for ep in metadata.entry_points(group=group)]


def _read_here(group):
    from grpo_core.plugins import entry_points

    return [(ep.name, ep.value, ep.distribution, ep.version) for ep in entry_points.entry_points(group)]


def test_entry_points_are_read_as_importlib_metadata_reads_them(installed_fixture_plugins):
    from grpo_core.plugins import ENTRY_POINT_GROUP, entry_points

    assert entry_points._dist_info_folders() is not None  # read from the folders, not through importlib.metadata
    for group in (ENTRY_POINT_GROUP, "console_scripts", "pytest11"):
        assert _read_here(group) == _from_importlib(group), group
    found = {distribution for _, _, distribution, _ in _read_here(ENTRY_POINT_GROUP)}
    assert {"grpo-fixture-plugin", "grpo-fixture-broken"} <= found
    assert entry_points.version("grpo_fixture.plugin") == "1.2.3"  # any spelling of the name
    assert entry_points.version("grpo-core-no-such-distribution") == ""


def test_a_first_copy_hides_later_ones_and_egg_info_counts(tmp_path, monkeypatch):
    from grpo_core.plugins import entry_points

    for folder, version in (("first", "2.0"), ("second", "1.0")):
        info = tmp_path / folder / f"Grpo_Copy-{version}.dist-info"
        info.mkdir(parents=True)
        (info / "METADATA").write_text(f"Metadata-Version: 2.1\nName: grpo.copy\nVersion: {version}\n\nName: body\n")
        (info / "entry_points.txt").write_text(f"# made here\n[console_scripts]\nx = y:z\n[grpo]\ncopy = grpo_copy_{folder}\n")
    egg = tmp_path / "first" / "grpo_egg.egg-info"
    egg.mkdir()
    (egg / "PKG-INFO").write_text("Metadata-Version: 1.0\nName: grpo-egg\nVersion: 0.3\n")
    (egg / "entry_points.txt").write_text("[grpo]\negg = grpo_egg.plugin:module [extra]\n")
    monkeypatch.syspath_prepend(str(tmp_path / "second"))
    monkeypatch.syspath_prepend(str(tmp_path / "first"))
    assert _read_here("grpo") == _from_importlib("grpo")
    assert ("copy", "grpo_copy_first", "grpo.copy", "2.0") in _read_here("grpo")
    assert entry_points.version("grpo-copy") == "2.0"


def test_a_zip_on_the_path_is_read_by_importlib_metadata(tmp_path, monkeypatch):
    import zipfile

    from grpo_core.plugins import entry_points

    archive = tmp_path / "plugins.zip"
    with zipfile.ZipFile(archive, "w") as zipped:
        zipped.writestr("grpo_zipped-0.1.dist-info/METADATA", "Metadata-Version: 2.1\nName: grpo-zipped\nVersion: 0.1\n")
        zipped.writestr("grpo_zipped-0.1.dist-info/entry_points.txt", "[grpo]\nzipped = grpo_zipped\n")
    monkeypatch.syspath_prepend(str(archive))
    assert entry_points._dist_info_folders() is None
    assert ("zipped", "grpo_zipped", "grpo-zipped", "0.1") in _read_here("grpo")
    assert _read_here("grpo") == _from_importlib("grpo")
    assert entry_points.version("grpo-zipped") == "0.1"


def test_an_entry_point_loads_the_object_it_names():
    from grpo_core.plugins.entry_points import EntryPoint

    assert EntryPoint("x", "grpo_core.plugins", "d", "1").load().__name__ == "grpo_core.plugins"
    assert EntryPoint("x", "grpo_core.plugins:entry_points.EntryPoint [extra]", "d", "1").load() is EntryPoint


def test_broken_plugin_is_reported_and_skipped(installed_fixture_plugins, capsys):
    registry = get_registry(refresh=True)
    broken = next(i for i in registry.plugins if i.distribution == "grpo-fixture-broken")
    assert "ModuleNotFoundError" in broken.error and "grpo_core_no_such_dependency" in broken.error
    err = capsys.readouterr().err
    assert "plugin 'broken' from grpo-fixture-broken 0.0.1 failed to load" in err
    assert "shout" in registry.items["rewards"]  # the others keep working


def test_strict_plugins_turns_a_broken_plugin_into_an_error(installed_fixture_plugins, monkeypatch):
    monkeypatch.setenv("GRPO_STRICT_PLUGINS", "1")
    with pytest.raises(PluginError, match="grpo-fixture-broken.*GRPO_STRICT_PLUGINS"):
        load_plugins()


def test_load_plugins_env_selects_distributions(installed_fixture_plugins, monkeypatch):
    monkeypatch.setenv("GRPO_LOAD_PLUGINS", "grpo_fixture_plugin")
    rewards = names("rewards")
    assert rewards == {"shout"}  # only that distribution, plus the built-ins (which have no rewards)
    monkeypatch.setenv("GRPO_LOAD_PLUGINS", "")
    assert names("rewards") == set()
    assert "local" in names("datasets")  # built-ins always load


def test_disable_plugins_env_blocks_a_distribution(installed_fixture_plugins, monkeypatch):
    assert "shout" in names("rewards")
    monkeypatch.setenv("GRPO_DISABLE_PLUGINS", "grpo-fixture-plugin,grpo-fixture-broken")
    rewards = names("rewards")
    assert "shout" not in rewards
    assert all(i.distribution != "grpo-fixture-broken" for i in get_registry().plugins)


class EchoPlugin:
    @hookimpl
    def register_rewards(self, register):
        register(RewardSpec("echo-len", "Length of the completion, capped", lambda c: min(len(c), 10) / 10))


def test_in_test_registration_is_undone_after():
    with registered(EchoPlugin(), distribution="my-dist") as registry:
        assert registry.reward("echo-len").distribution == "my-dist"
    assert "echo-len" not in get_registry().items["rewards"]


def test_duplicate_names_are_an_error_only_where_used_naming_both_distributions():
    class Twin:
        @hookimpl
        def register_rewards(self, register):
            register(RewardSpec("echo-len", "Same name again", lambda c: 0.0))

    with registered(Twin(), EchoPlugin(), distribution="first-dist") as registry:
        assert registry.duplicates["rewards"] == {"echo-len": ["first-dist", "first-dist"]}
        with pytest.raises(UsageError, match="reward 'echo-len' is registered by both first-dist and first-dist"):
            registry.reward("echo-len")
        registry.reward("length")  # every other name keeps working


def test_duplicate_across_distributions_names_both(installed_fixture_plugins):
    from click.testing import CliRunner

    from grpo_core.cli import cli

    class Clash:
        @hookimpl
        def register_rewards(self, register):
            register(RewardSpec("shout", "Clashes with the fixture plugin", lambda c: 0.0))

    with registered(Clash(), distribution="clash-dist") as registry:
        with pytest.raises(UsageError) as error:
            registry.reward("shout")
        listing = CliRunner().invoke(cli, ["plugins", "--json"])
        helped = CliRunner().invoke(cli, ["--help"])
        used = CliRunner().invoke(cli, ["--reward", "shout", "--dataset", "local", "--model", "tiny-random", "--dry-run"])
    message = str(error.value)
    assert "grpo-fixture-plugin" in message and "clash-dist" in message and "GRPO_DISABLE_PLUGINS" in message
    assert listing.exit_code == 0 and helped.exit_code == 0, listing.output + helped.output
    rows = {row["distribution"]: row for row in json.loads(listing.stdout)}
    assert rows["clash-dist"]["clashes"] == ["reward 'shout'"]
    assert used.exit_code == 2 and "reward 'shout' is registered by both" in used.output and "Traceback" not in used.output


def test_unknown_name_lists_installed_and_a_close_match():
    with registered(EchoPlugin()):
        with pytest.raises(UsageError, match=r"unknown reward 'echo-ln' \(did you mean 'echo-len'\?\); installed: .*echo-len"):
            get_registry().reward("echo-ln")


def test_plugin_commands_are_added(installed_fixture_plugins):
    from click.testing import CliRunner

    from grpo_core.cli import GrpoGroup, cli

    GrpoGroup._attached = False
    get_registry(refresh=True)
    try:
        result = CliRunner().invoke(cli, ["fixture-hello"])
        assert result.exit_code == 0, result.output
        assert "hello from grpo-fixture-plugin" in result.output
    finally:
        cli.commands.pop("fixture-hello", None)
        GrpoGroup._attached = False
