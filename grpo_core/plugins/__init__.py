"""The plugin manager: entry-point group ``grpo``, hook specs, and the registry they fill."""

from __future__ import annotations

import contextlib
import difflib
import os
import re
import sys
from dataclasses import dataclass, field

import pluggy

from grpo_core.plugins import by_path, entry_points, hookspecs, openenv_client
from grpo_core.errors import PluginError, UsageError
from grpo_core.settings.params import did_you_mean

ENTRY_POINT_GROUP = "grpo"
BUILTIN_DISTRIBUTION = "grpo-core"
BUILTIN_MODULES = ("grpo_core.builtin",)
KINDS = ("rewards", "datasets", "environments", "profiles", "models")


@dataclass
class PluginInfo:
    """One loaded (or failed) plugin module and the distribution it came from."""

    name: str
    distribution: str
    version: str
    module: object | None = None
    error: str | None = None
    warnings: list[str] = field(default_factory=list)  # e.g. a hook no spec declares (a misspelt name)
    registers: dict[str, list[str]] = field(default_factory=lambda: {kind: [] for kind in (*KINDS, "commands")})


def canonical(name: str) -> str:
    return re.sub(r"[-_.]+", "-", name).lower()


def _env_set(variable: str) -> set[str] | None:
    value = os.environ.get(variable)
    if value is None:
        return None
    return {canonical(part) for part in value.split(",") if part.strip()}


def _strict() -> bool:
    return os.environ.get("GRPO_STRICT_PLUGINS", "").strip().lower() in {"1", "true", "yes", "on"}


def load_plugins() -> tuple[pluggy.PluginManager, list[PluginInfo]]:
    """A fresh plugin manager with the installed plugins, then grpo-core's built-ins, registered.

    ``GRPO_LOAD_PLUGINS=a,b`` loads only those distributions (empty: none),
    ``GRPO_DISABLE_PLUGINS=a`` blocks some, ``GRPO_STRICT_PLUGINS=1`` makes a failing plugin an error.
    """
    pm = pluggy.PluginManager(ENTRY_POINT_GROUP)
    pm.add_hookspecs(hookspecs)
    only, disabled = _env_set("GRPO_LOAD_PLUGINS"), _env_set("GRPO_DISABLE_PLUGINS") or set()
    infos: list[PluginInfo] = []
    seen: set[tuple[str, str]] = set()
    for ep in entry_points.entry_points(ENTRY_POINT_GROUP):
        dist_name, dist_version = ep.distribution, ep.version
        key = (canonical(dist_name), ep.name)
        if key in seen or (only is not None and key[0] not in only) or key[0] in disabled:
            continue
        seen.add(key)
        info = PluginInfo(ep.name, dist_name, dist_version)
        try:
            with contextlib.redirect_stdout(sys.stderr):  # stdout belongs to --json and --dry-run
                info.module = ep.load()
            pm.register(info.module, name=f"{dist_name}:{ep.name}")
        except Exception as error:
            info.module = None
            info.error = f"{type(error).__name__}: {error}"
            _report_failure(info)
        infos.append(info)
    import importlib

    version = entry_points.version(BUILTIN_DISTRIBUTION)
    for module_name in BUILTIN_MODULES:
        module = importlib.import_module(module_name)
        pm.register(module, name=module_name)
        infos.append(PluginInfo(module_name, BUILTIN_DISTRIBUTION, version, module))
    return pm, infos


def _report_failure(info: PluginInfo) -> None:
    message = f"plugin '{info.name}' from {info.distribution} {info.version} failed to load: {info.error}"
    if _strict():
        raise PluginError(message + " (GRPO_STRICT_PLUGINS is set)")
    print(f"grpo-run: warning: {message}; skipping it", file=sys.stderr)


def check_hooks(pm: pluggy.PluginManager, infos: list[PluginInfo]) -> None:
    """pluggy's ``check_pending``: a plugin's hook implementation that no spec declares (``register_reward`` for
    ``register_rewards``) is never called. Each becomes one warning on its plugin, naming the distribution, the hook
    and the spec it probably meant; under ``GRPO_STRICT_PLUGINS=1`` the first is a UsageError."""
    try:
        pm.check_pending()
        return
    except pluggy.PluginValidationError:
        pass
    specs = [name for name, caller in vars(pm.hook).items() if isinstance(caller, pluggy.HookCaller) and caller.spec]
    by_module = {id(info.module): info for info in infos if info.module is not None}
    for name, caller in sorted(vars(pm.hook).items()):
        if not isinstance(caller, pluggy.HookCaller) or caller.spec is not None:
            continue
        for impl in caller.get_hookimpls():
            info = by_module.get(id(impl.plugin))
            if impl.optionalhook or info is None:
                continue
            close = difflib.get_close_matches(name, specs, n=1, cutoff=0.6)
            meant = f"; did you mean '{close[0]}'?" if close else f"; the hooks are {', '.join(sorted(specs))}"
            message = (f"plugin '{info.name}' from {info.distribution} implements the hook '{name}', which no grpo "
                       f"hook spec declares, so it is never called{meant}")
            if _strict():
                raise UsageError(message + " (GRPO_STRICT_PLUGINS is set)")
            info.warnings.append(message)
            print(f"grpo-run: warning: {message}", file=sys.stderr)


class Registry:
    """Every reward, dataset, profile and model registered, by name, with its distribution."""

    def __init__(self, pm: pluggy.PluginManager, infos: list[PluginInfo]) -> None:
        check_hooks(pm, infos)
        self.pm = pm
        self.plugins = infos
        self.items: dict[str, dict[str, object]] = {kind: {} for kind in KINDS}
        # kind -> name -> every distribution registering it, for names registered more than once
        self.duplicates: dict[str, dict[str, list[str]]] = {kind: {} for kind in KINDS}
        self._by_module = {id(info.module): info for info in infos if info.module is not None}
        for kind in KINDS:
            hook = getattr(pm.hook, f"register_{kind}")
            for impl in hook.get_hookimpls():  # registration order
                info = self._by_module.get(id(impl.plugin))
                if info is None:
                    continue
                self._call(impl, kind, info)

    def _call(self, impl, kind: str, info: PluginInfo) -> None:
        table = self.items[kind]

        def register(spec) -> None:
            existing = table.get(spec.name)
            info.registers[kind].append(spec.name)
            if existing is not None:  # an error only where the name is used (see get)
                owners = self.duplicates[kind].setdefault(spec.name, [existing.distribution])
                owners.append(info.distribution)
                return
            table[spec.name] = _with_distribution(spec, info.distribution)

        try:
            with contextlib.redirect_stdout(sys.stderr):
                impl.function(register=register)
        except Exception as error:
            info.error = f"register_{kind} raised {type(error).__name__}: {error}"
            _report_failure(info)

    def get(self, kind: str, name: str):
        table = self.items[kind]
        owners = self.duplicates[kind].get(name)
        if owners:
            raise UsageError(
                f"{kind[:-1]} '{name}' is registered by both {' and '.join(owners)}; uninstall one, or block one "
                f"with GRPO_DISABLE_PLUGINS={owners[-1]}"
            )
        if name not in table:
            singular = kind[:-1]
            installed = ", ".join(sorted(table)) or "(none)"
            raise UsageError(f"unknown {singular} '{name}'{did_you_mean(name, table)}; installed: {installed}")
        return table[name]

    def reward(self, name: str):
        """The reward ``name`` selects: registered, or from a path (``file.py:function``, ``module:function``)."""
        return by_path.resolve_reward_name(name, self)

    def dataset(self, name: str):
        return by_path.resolve_dataset_name(name, self)

    def environment(self, name: str):
        """The environment ``name`` selects: registered, a class from a path (``file.py:Class``, ``module:Class``), or
        the one an OpenEnv server serves at an http(s) URL."""
        if openenv_client.is_url(name):
            return openenv_client.openenv_spec(name)
        return by_path.resolve_environment_name(name, self)

    def profile(self, name: str):
        return self.get("profiles", name)

    def model(self, name: str):
        if name in self.duplicates["models"]:
            return self.get("models", name)
        return self.items["models"].get(name)

    def add_commands(self, cli) -> None:
        """Let plugins add click commands to ``cli`` (recorded per distribution)."""
        for impl in self.pm.hook.register_commands.get_hookimpls():
            info = self._by_module.get(id(impl.plugin))
            before = set(cli.commands)
            try:
                with contextlib.redirect_stdout(sys.stderr):
                    impl.function(cli=cli)
            except Exception as error:
                if info is not None:
                    info.error = f"register_commands raised {type(error).__name__}: {error}"
                    _report_failure(info)
                continue
            if info is not None:
                info.registers["commands"].extend(sorted(set(cli.commands) - before))


def _with_distribution(spec, distribution: str):
    import dataclasses

    return dataclasses.replace(spec, distribution=distribution)


_registry: Registry | None = None


def get_registry(refresh: bool = False) -> Registry:
    """The registry for this process (loaded on first use; ``refresh`` reloads the plugins)."""
    global _registry
    if _registry is None or refresh:
        _registry = Registry(*load_plugins())
    return _registry


def use_registry(registry: Registry | None) -> None:
    """Install ``registry`` as this process's registry (None: load again on next use). For tests."""
    global _registry
    _registry = registry


class registered:
    """Context manager: register plugin objects (modules or classes with hookimpls) for a while.

        with registered(MyPlugin(), distribution="my-dist"):
            grpo_core.load_rewards(["mine"])
    """

    def __init__(self, *plugins, distribution: str = "test-plugin") -> None:
        self.plugins = plugins
        self.distribution = distribution

    def __enter__(self) -> Registry:
        global _registry
        self._saved = _registry
        pm, infos = load_plugins()
        for index, plugin in enumerate(self.plugins):
            pm.register(plugin, name=f"{self.distribution}:{index}")
            infos.insert(0, PluginInfo(getattr(plugin, "__name__", type(plugin).__name__), self.distribution, "0", plugin))
        _registry = Registry(pm, infos)
        return _registry

    def __exit__(self, *exc) -> None:
        global _registry
        _registry = self._saved


def reload_plugins() -> None:
    """Forget the loaded plugins, so the next lookup finds what is installed now (after ``pip install``, in tests)."""
    use_registry(None)


def get_spec(kind: str, name: str):
    """The spec registered as ``name``: ``kind`` is ``"reward"``, ``"dataset"``, ``"environment"``, ``"profile"`` or
    ``"model"``.

    Its ``distribution`` says which package registered it. An unknown name is a UsageError that
    lists the installed ones.
    """
    kinds = {"reward": "rewards", "dataset": "datasets", "environment": "environments", "profile": "profiles",
             "model": "models"}
    if kind not in kinds:
        raise UsageError(f"unknown kind '{kind}'; use one of: {', '.join(kinds)}")
    return get_registry().get(kinds[kind], name)
