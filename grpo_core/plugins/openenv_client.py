"""Environments an OpenEnv server serves, selected by URL (``--env http://HOST:PORT``): the server becomes a plain TRL
environment class, so training, ``grpo-run check --env`` and every other caller use it as any other environment.

What the class does, read from the server once (``/health``, ``/schema``, and MCP's ``tools/list``):

- the tools: the server's MCP tools when it has any (each called through a ``call_tool`` step); otherwise one tool,
  named after the action class (``SubmitAction`` -> ``submit``), whose arguments are the action schema's fields with
  their types and descriptions;
- ``reset(**row)`` opens one WebSocket session for the episode (openenv's client), passes the row's columns (and the
  ``--env-arg`` reset options) to the server's reset, and shows the model its observation;
- ``get_reward()`` is the sum of the episode's step rewards (a reset that pays counts too; an episode with no step
  earns 0), within the bounds the observation schema declares for ``reward`` (``ge``/``le``), else [0, 1];
- a step after ``done`` is answered with an error text and never sent; an action the server refuses is answered with
  the server's error text; a server that cannot be reached raises ``OpenEnvUnreachable`` naming the URL (a
  RewardError: training stops there and saves the steps finished so far).

openenv is the optional extra ``grpo-core[openenv]``, imported only when a URL is selected.
"""

from __future__ import annotations

import atexit
import inspect
import json
import re
import sys
import time
import weakref
from dataclasses import dataclass
from typing import Any

from grpo_core.errors import RewardError, UsageError
from grpo_core.specs import EnvironmentSpec

URL_SCHEMES = ("http://", "https://")
EXTRA = 'pip install "grpo-core[openenv]"'
CONNECT_S = 10.0  # reaching the server: /schema, a WebSocket session
MESSAGE_S = 300.0  # one reset or step; the per-call limit of training and check is the one that fires first
CAPACITY_WAIT_S = 10.0  # a session refused at capacity is asked again for this long (sessions closing elsewhere)
DEFAULT_BOUNDS = (0.0, 1.0)
_TYPES = {"string": str, "integer": int, "number": float, "boolean": bool, "array": list, "object": dict}
_ACTION_FIELDS_SKIPPED = ("metadata",)  # every openenv Action has it; it is not the model's to fill


def is_url(name: str) -> bool:
    return isinstance(name, str) and name.lower().startswith(URL_SCHEMES)


class OpenEnvUnreachable(RewardError):
    """The server stopped answering (or refuses sessions) in the middle of a run."""


@dataclass(frozen=True)
class OpenEnvSpec(EnvironmentSpec):
    """An environment served by an OpenEnv server at ``url``; its parameters are reset options, any names."""

    url: str = ""

    def resolve(self, params: dict | None = None) -> dict:
        """``--env-arg URL.KEY=VALUE``: reset options passed with every row; a value that reads as JSON (3, true,
        [1, 2]) is that value, else the text."""
        options = {}
        for key, value in (params or {}).items():
            if not str(key).isidentifier():
                raise UsageError(f"environment '{self.url}': --env-arg key {key!r} is not a name a reset option can "
                                 "have; write --env-arg URL.KEY=VALUE")
            options[key] = _json_value(value)
        return options


def _json_value(value):
    if not isinstance(value, str):
        return value
    try:
        return json.loads(value)
    except ValueError:
        return value


_specs: dict[str, OpenEnvSpec] = {}


def openenv_spec(url: str) -> OpenEnvSpec:
    """The environment the OpenEnv server at ``url`` serves (read once per process); a UsageError when openenv is
    not installed or no OpenEnv server answers there."""
    base = url.rstrip("/")
    if base not in _specs:
        require_openenv(base)
        schema = _get_json(base, "/schema")
        if not isinstance(schema, dict) or not isinstance(schema.get("action"), dict):
            raise UsageError(f"environment '{base}': its /schema has no action schema, so it is not an OpenEnv server "
                             "(openenv's create_app serves one); check the URL")
        tools = _mcp_tools(base) or _listed_tools(schema["action"]) or [_action_tool(schema["action"])]
        metadata = _get_json(base, "/metadata", required=False) or {}
        name = _name(metadata.get("name"), base)
        description = str(metadata.get("description") or f"the OpenEnv environment served at {base}")
        _specs[base] = OpenEnvSpec(name=name, description=f"{description} (OpenEnv server at {base})",
                                   factory=environment_class(base, name, tools),
                                   bounds=declared_bounds(schema.get("observation"), base),
                                   distribution="openenv", url=base)
    return _specs[base]


def require_openenv(url: str) -> None:
    try:
        import openenv  # noqa: F401
    except ImportError:
        raise UsageError(f"--env {url} is an OpenEnv server, and talking to one needs openenv: {EXTRA}") from None


def _get_json(base: str, path: str, required: bool = True, body: dict | None = None):
    import urllib.error  # imported only with a URL selected: urllib.request imports the email package
    import urllib.request

    request = urllib.request.Request(base + path, data=None if body is None else json.dumps(body).encode(),
                                     headers={"Content-Type": "application/json"})
    try:
        with urllib.request.urlopen(request, timeout=CONNECT_S) as response:
            return json.loads(response.read())
    except (urllib.error.URLError, OSError, ValueError) as error:
        if not required:
            return None
        reason = getattr(error, "reason", None) or error
        raise UsageError(f"environment '{base}': no OpenEnv server answers {path} there ({reason}); start the server, "
                         "or check the URL") from None


def _mcp_tools(base: str) -> list[dict]:
    """The server's MCP tools (name, description, input schema), or [] when it has none."""
    answer = _get_json(base, "/mcp", required=False, body={"jsonrpc": "2.0", "method": "tools/list", "id": 1})
    found = ((answer or {}).get("result") or {}).get("tools") if isinstance(answer, dict) else None
    tools = []
    for tool in found or []:
        schema = tool.get("inputSchema") or tool.get("input_schema") or {}
        tools.append({"name": tool["name"], "description": tool.get("description") or tool["name"],
                      "schema": schema, "kind": "mcp"})
    return tools


def _listed_tools(schema: dict) -> list[dict]:
    """The tools an action schema lists (``tools``: name, description, parameters), each called as ``{"tool": NAME,
    "arguments": {...}}``: what ``grpo-run serve --env`` serves."""
    fields = schema.get("properties") or {}
    if not isinstance(schema.get("tools"), list) or not {"tool", "arguments"} <= set(fields):
        return []
    return [{"name": tool["name"], "description": tool.get("description") or tool["name"],
             "schema": tool.get("parameters") or {}, "kind": "listed"}
            for tool in schema["tools"] if isinstance(tool, dict) and str(tool.get("name", "")).isidentifier()]


def _action_tool(schema: dict) -> dict:
    """The one tool of a server whose actions are one class: its fields are the arguments."""
    title = re.sub(r"Action$", "", str(schema.get("title") or "")) or "act"
    name = re.sub(r"(?<!^)(?=[A-Z])", "_", title).lower()
    name = name if name.isidentifier() and name not in ("reset", "get_reward") else "act"
    fields = {k: v for k, v in (schema.get("properties") or {}).items() if k not in _ACTION_FIELDS_SKIPPED}
    required = [k for k in schema.get("required") or () if k in fields]
    return {"name": name, "description": schema.get("description") or f"Take one {title} action.",
            "schema": {"properties": fields, "required": required}, "kind": "fields"}


def _name(given, base: str) -> str:
    name = re.sub(r"[^a-z0-9_-]+", "-", re.sub(r"(?<!^)(?=[A-Z])", "-", str(given or "")).lower()).strip("-")
    return name or "openenv-" + re.sub(r"[^a-z0-9]+", "-", base.split("://", 1)[1].lower()).strip("-")


def declared_bounds(observation: dict | None, base: str) -> tuple[float, float]:
    """The episode's bounds as the observation schema declares them: the reward field's ``episode_bounds`` (what
    ``grpo-run serve --env`` declares), else its ``minimum`` and ``maximum``; [0, 1] when it declares none."""
    reward = ((observation or {}).get("properties") or {}).get("reward") or {}
    if isinstance(reward.get("episode_bounds"), list) and len(reward["episode_bounds"]) == 2:
        reward = {"minimum": reward["episode_bounds"][0], "maximum": reward["episode_bounds"][1]}
    options = [reward] + list(reward.get("anyOf") or [])
    low = next((o["minimum"] for o in options if isinstance(o.get("minimum"), (int, float))), None)
    high = next((o["maximum"] for o in options if isinstance(o.get("maximum"), (int, float))), None)
    if low is None or high is None:
        return DEFAULT_BOUNDS
    if not low < high:
        raise UsageError(f"environment '{base}': its observation schema declares reward bounds [{low}, {high}], "
                         "which hold no range; fix the server's Observation")
    return float(low), float(high)


class _Sessions:
    """The episodes of this process that hold a WebSocket session (counted per server for the capacity error),
    closed when the process exits: openenv's client closes a session on its own event loop thread, which is gone
    once the interpreter finalizes, so a close left to then would wait forever."""

    open: "weakref.WeakSet" = weakref.WeakSet()

    @classmethod
    def held(cls, url: str) -> int:
        return sum(1 for episode in list(cls.open) if episode.url == url)

    @classmethod
    def close_all(cls) -> None:
        for episode in list(cls.open):
            _close(episode)


atexit.register(_Sessions.close_all)


def _open_session(url: str, reset: dict):
    """``(client, reset's result)``: a connected openenv client on a session of its own, reset with ``reset``. The
    server takes or refuses the session at the first message: a refusal at capacity is asked again for a while."""
    from openenv import GenericEnvClient

    deadline = time.monotonic() + CAPACITY_WAIT_S
    while True:
        client = GenericEnvClient(base_url=url, connect_timeout_s=CONNECT_S, message_timeout_s=MESSAGE_S).sync()
        try:
            client.connect()
            return client, client.reset(**reset)
        except Exception as error:
            _quietly_close(client)
            at_capacity = "CAPACITY_REACHED" in str(error)
            if at_capacity and time.monotonic() < deadline:
                time.sleep(0.2)
                continue
            if at_capacity:
                raise OpenEnvUnreachable(
                    f"the OpenEnv server at {url} refused a session for {CAPACITY_WAIT_S:g} s: it is at capacity, "
                    f"with {_Sessions.held(url)} episode(s) of this run open; start it with max_concurrent_envs "
                    "at least the episodes a step plays at once (per_device_train_batch_size)") from None
            if _server_refused(error):
                raise RuntimeError(f"the OpenEnv server at {url} refused the reset: {error}") from None
            raise _unreachable(url, error) from None


def _unreachable(url: str, error: BaseException) -> OpenEnvUnreachable:
    return OpenEnvUnreachable(f"the OpenEnv server at {url} stopped answering ({type(error).__name__}: "
                              f"{str(error).splitlines()[0] if str(error) else 'no detail'})")


def _quietly_close(client) -> None:
    try:
        client.close()
    except Exception:
        pass


def _server_refused(error: BaseException) -> bool:
    """openenv's client raises RuntimeError('Server error: ...') for an error frame: the action was refused (bad
    arguments, the environment raised); anything else is the connection."""
    return isinstance(error, RuntimeError) and str(error).startswith("Server error")


def _shown(observation: dict, kind: str) -> str:
    """What the model reads of an observation: its one text field as it is, else its fields as JSON."""
    if kind == "mcp":
        error = observation.get("error")
        if error:
            return f"error: {error.get('message', error) if isinstance(error, dict) else error}"
        result = observation.get("result")
        content = result.get("content") if isinstance(result, dict) else None
        if isinstance(content, list):
            return "\n".join(str(part.get("text", part)) if isinstance(part, dict) else str(part) for part in content)
        data = result.get("data", result) if isinstance(result, dict) else result
        return data if isinstance(data, str) else json.dumps(data, default=str)
    fields = {k: v for k, v in observation.items() if k not in ("metadata", "done", "reward") and v not in (None, "")}
    if len(fields) == 1 and isinstance(next(iter(fields.values())), str):
        return next(iter(fields.values()))
    return json.dumps(fields, default=str)


def environment_class(url: str, name: str, tools: list[dict]) -> type:
    """The TRL environment class for the server at ``url``: a method per tool, with the signature and Google-style
    docstring TRL builds the tool's schema from."""
    namespace = {"__doc__": f"The OpenEnv environment at {url}; its tools: {', '.join(t['name'] for t in tools)}.",
                 "__init__": _init, "reset": _reset, "get_reward": _get_reward, "_step": _step, "_take": _take,
                 "_close": _close,
                 "__del__": _collected, "url": url, "bounds": None}
    for tool in tools:
        namespace[tool["name"]] = _tool_method(tool)
    cls = type(re.sub(r"\W", "_", name.title()).replace("_", "") or "OpenEnv", (), namespace)
    cls.__module__ = __name__
    return cls


def _init(self, **reset_options) -> None:
    self._options, self._client, self._done, self._rewards = dict(reset_options), None, False, []


def _reset(self, **row):
    """Start an episode: a session of its own on the server, reset with the row's columns."""
    _close(self)
    self._done, self._rewards = False, []
    self._client, result = _open_session(self.url, {**self._options, **_jsonable(row)})
    _Sessions.open.add(self)
    self._take(result)
    text = _shown(result.observation or {}, "fields")
    return text if text not in ("{}", "") else None


def _take(self, result) -> None:
    if isinstance(result.reward, (int, float)):
        self._rewards.append(result.reward)
    if result.done:
        self._done = True
        _close(self)


def _step(self, action: dict, kind: str) -> str:
    if self._done:
        return "error: the episode is over; give your answer"
    if self._client is None:
        raise RuntimeError("no episode: reset(**row) starts one")
    try:
        result = self._client.step(action)
    except Exception as error:
        if _server_refused(error):
            return f"error: {str(error).removeprefix('Server error: ')}"
        _close(self)
        self._done = True
        raise _unreachable(self.url, error) from None
    self._take(result)
    return _shown(result.observation or {}, kind)


def _get_reward(self) -> float:
    """The sum of the episode's step rewards (0 for an episode with no step); the episode's session ends here."""
    _close(self)
    return float(sum(self._rewards))


def _close(self) -> None:
    client = getattr(self, "_client", None)
    if client is not None:
        self._client = None
        _Sessions.open.discard(self)
        _quietly_close(client)


def _collected(self) -> None:
    if not sys.is_finalizing():  # at exit the sockets close with the process (close_all ran before)
        _close(self)


def _jsonable(row: dict) -> dict:
    """The row as JSON can carry it (a value it cannot, such as a date, as its text)."""
    return json.loads(json.dumps(row, default=str))


def _tool_method(tool: dict):
    schema = tool["schema"] or {}
    fields, required = schema.get("properties") or {}, set(schema.get("required") or ())
    names = [k for k in fields if str(k).isidentifier()]
    ordered = [k for k in names if k in required] + [k for k in names if k not in required]
    parameters = [inspect.Parameter("self", inspect.Parameter.POSITIONAL_OR_KEYWORD)]
    annotations = {}
    for key in ordered:
        kind = _TYPES.get(fields[key].get("type") if isinstance(fields[key], dict) else None, str)
        default = inspect.Parameter.empty if key in required else fields[key].get("default")
        parameters.append(inspect.Parameter(key, inspect.Parameter.POSITIONAL_OR_KEYWORD, default=default,
                                            annotation=kind))
        annotations[key] = kind
    annotations["return"] = str
    signature = inspect.Signature(parameters, return_annotation=str)
    tool_name, kind = tool["name"], tool["kind"]

    def method(self, *args, **kwargs):
        arguments = dict(zip(ordered, args)) | kwargs
        action = {"mcp": {"type": "call_tool", "tool_name": tool_name, "arguments": arguments},
                  "listed": {"tool": tool_name, "arguments": arguments}}.get(kind, arguments)
        return self._step(action, kind)

    args_doc = "".join(f"\n    {key}: {_describe(fields[key], key)}" for key in ordered)
    method.__name__ = method.__qualname__ = tool_name
    method.__signature__, method.__annotations__ = signature, annotations
    method.__doc__ = f"{_one_line(tool['description'])}\n" + (f"\nArgs:{args_doc}\n" if ordered else "") + \
        "\nReturns:\n    What the environment answers.\n"
    return method


def _describe(field: Any, key: str) -> str:
    text = field.get("description") or field.get("title") if isinstance(field, dict) else None
    return _one_line(text or f"the action's {key}")


def _one_line(text: str) -> str:
    return " ".join(str(text).split()) or "no description"
