"""GRPOConfig fields, read with TRL's own field types (as ``trl grpo`` reads them through ``HfArgumentParser``).

Importing TRL takes seconds, so each field's type, choices and default are kept in a table cached per installed
TRL and transformers version: settings are checked without TRL, and a typo is reported at once.
"""

from __future__ import annotations

import dataclasses
import json
import os
import typing

from grpo_core.cache import cache_dir
from grpo_core.errors import UsageError
from grpo_core.settings.bounds import validate_bound
from grpo_core.settings.params import did_you_mean

TABLE_FORMAT = 1
_BOOL_WORDS = {"yes": True, "true": True, "t": True, "y": True, "1": True,
               "no": False, "false": False, "f": False, "n": False, "0": False}  # transformers' string_to_bool
_TABLE: dict | None = None
_ACTIONS: dict | None = None


def grpo_actions() -> dict:
    """Each GRPOConfig field's argparse action, as ``trl grpo`` builds them (type, choices, nargs); imports TRL."""
    global _ACTIONS
    if _ACTIONS is None:
        from transformers import HfArgumentParser
        from trl import GRPOConfig

        # The declared types, read before HfArgumentParser narrows some fields' ``type`` in place.
        hints = typing.get_type_hints(GRPOConfig)
        fields = {f.name: f for f in dataclasses.fields(GRPOConfig) if f.init}
        parser = HfArgumentParser(GRPOConfig)
        _ACTIONS = {name: (parser._option_string_actions[f"--{name}"], fields[name], hints.get(name))
                    for name in fields}
    return _ACTIONS


def field_table() -> dict:
    """``{field: {kind, nargs, choices, default, hint}}`` for every GRPOConfig field, from the cache when it is
    there for the installed TRL and transformers (else built from TRL, once, and cached)."""
    global _TABLE
    if _TABLE is None:
        versions = _versions()
        path = _cache_path(versions)
        try:
            saved = json.loads(path.read_text())
            _TABLE = saved["fields"] if saved.get("versions") == versions else None
        except (OSError, ValueError, KeyError, TypeError):
            _TABLE = None
        if _TABLE is None:
            _TABLE = _build_table()
            _save(path, {"versions": versions, "fields": _TABLE})
    return _TABLE


def grpo_defaults() -> dict:
    """Each GRPOConfig field's default (an enum as its word)."""
    return {name: entry["default"] for name, entry in field_table().items()}


def validate_grpo_config(grpo: dict, num_processes: int = 1) -> None:
    """Every value within its bound (a profile's too), and TRL's rules on the group and batch sizes, checked before
    anything is loaded (GRPOConfig raises them later)."""
    defaults = grpo_defaults()
    for name, given in grpo.items():
        problem = validate_bound(name, given)
        if problem:
            raise UsageError(f"GRPOConfig: {problem}")

    def value(name):
        return grpo[name] if name in grpo else defaults[name]

    generations, per_device = value("num_generations"), value("per_device_train_batch_size")
    if value("steps_per_generation") and value("generation_batch_size"):
        raise UsageError("steps_per_generation and generation_batch_size both set the generation batch; set only one")
    steps = value("steps_per_generation") or value("gradient_accumulation_steps")
    batch = value("generation_batch_size") or per_device * num_processes * steps
    if isinstance(generations, int) and isinstance(batch, int) and batch % generations:
        divisors = [n for n in range(2, batch + 1) if batch % n == 0][:4]
        raise UsageError(
            f"num_generations={generations} does not divide the generation batch of {batch} completions "
            f"(per_device_train_batch_size={per_device} x {num_processes} process(es) x {steps} step(s) per "
            f"generation), and TRL needs whole groups; use num_generations={' or '.join(map(str, divisors))}, or a "
            f"per_device_train_batch_size that is a multiple of {generations}"
        )


def _versions() -> dict:
    from importlib.metadata import version

    return {"trl": version("trl"), "transformers": version("transformers"), "format": TABLE_FORMAT}


def _cache_path(versions: dict):
    return cache_dir() / "grpo-fields" / f"trl-{versions['trl']}-transformers-{versions['transformers']}.json"


def _save(path, data: dict) -> None:
    try:
        path.parent.mkdir(parents=True, exist_ok=True)
        temporary = path.with_suffix(f".{os.getpid()}.tmp")
        temporary.write_text(json.dumps(data))
        os.replace(temporary, path)
    except OSError:
        pass  # a read-only cache only costs the next run the TRL import


def _build_table() -> dict:
    from transformers.hf_argparser import string_to_bool

    table = {}
    for name, (action, field_, hint) in grpo_actions().items():
        convert = action.type or str
        if action.choices is not None:
            kind = "choice"
        elif convert is string_to_bool:
            kind = "bool"
        else:
            kind = {int: "int", float: "float", str: "str", dict: "dict"}.get(convert, "other")
        default = field_.default
        if default is dataclasses.MISSING:
            default = field_.default_factory() if field_.default_factory is not dataclasses.MISSING else None
        table[name] = {"kind": kind, "nargs": action.nargs if action.nargs in ("+", "*") else None,
                       "choices": [_plain(c) for c in action.choices] if action.choices is not None else None,
                       "default": _plain(default), "hint": str(hint)}
    return table


def _plain(value):
    """``value`` as JSON holds it: an enum as its value, anything else JSON cannot hold as its text."""
    value = getattr(value, "value", value)
    try:
        json.dumps(value)
        return value
    except (TypeError, ValueError):
        return str(value)


def parse_field(name: str, value, entry: dict, source: str):
    kind, nargs, hint = entry["kind"], entry["nargs"], entry["hint"]
    wanted = "one of " + ", ".join(map(str, entry["choices"])) if kind == "choice" else kind
    if value is None:
        return None
    if isinstance(value, (list, dict)):
        if nargs and isinstance(value, list):
            return [parse_field(name, item, entry, source) for item in value]
        if _admits(hint, type(value)):
            return value
        raise UsageError(f"{source}: '{name}' expects {wanted}, got {shown_value(value)}")
    if isinstance(value, bool) and kind == "choice":
        value = "yes" if value else "no"  # YAML 1.1 reads `save_strategy: no` as False; such fields take the word
    if kind == "int" and isinstance(value, (bool, float)) or kind == "float" and isinstance(value, bool):
        raise UsageError(f"{source}: '{name}' expects {wanted}, got {shown_value(value)}")
    if isinstance(value, str) and value.strip()[:1] in ("[", "{") and (_admits(hint, dict) or _admits(hint, list)):
        import yaml

        return yaml.safe_load(value)  # --set gradient_checkpointing_kwargs={use_reentrant: false}
    if isinstance(value, str) and nargs:
        return [parse_field(name, item.strip(), {**entry, "nargs": None}, source) for item in value.split(",")]
    try:
        return _convert(name, value, entry)
    except (TypeError, ValueError, KeyError, Exception):
        close = did_you_mean(str(value), map(str, entry["choices"])) if kind == "choice" else ""
        raise UsageError(f"{source}: '{name}' expects {wanted}, got {value!r}{close}") from None


def _convert(name: str, value, entry: dict):
    kind = entry["kind"]
    if kind == "int":
        return int(value)
    if kind == "float":
        return float(value)
    if kind == "str":
        return str(value)
    if kind == "bool":
        return value if isinstance(value, bool) else _BOOL_WORDS[str(value).lower()]
    if kind == "dict":
        raise ValueError(value)  # a mapping is written {key: value}, read above
    if kind == "choice":
        return {str(choice): choice for choice in entry["choices"]}[value if isinstance(value, str) else str(value)]
    action = grpo_actions()[name][0]  # a type only TRL knows (dict, DebugOption, ...): TRL's own converter
    parsed = action.type(value)
    return getattr(parsed, "value", parsed)


def _admits(hint: str, kind: type) -> bool:
    return kind.__name__ in hint or kind.__name__.capitalize() in hint


def shown_value(value) -> str:
    kind = {list: "a list", dict: "a mapping", bool: "a true/false value"}.get(type(value), type(value).__name__)
    text = repr(value)
    return f"{kind} {text if len(text) <= 40 else text[:37] + '...'}"
