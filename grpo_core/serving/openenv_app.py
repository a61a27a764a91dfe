"""``grpo-run serve --env NAME``: a grpo-core environment served with OpenEnv's protocol, by openenv's own server
(``create_fastapi_app``): ``/reset``, ``/step``, ``/state``, ``/schema``, ``/metadata``, ``/health`` and episodes over
the WebSocket ``/ws``, which openenv's ``GenericEnvClient`` uses.

Each WebSocket session holds its own instance of the environment's class, as TRL gives each episode its own (the
classes keep an episode's state on the instance); openenv's plain HTTP ``/reset`` and ``/step`` make a fresh one per
request, so an episode of several calls needs the WebSocket. An action is one tool call, ``{"tool": NAME,
"arguments": {...}}``; the action schema lists the tools as TRL shows them to the model (``tools``: each one's name,
description and parameters, from its type hints and docstring). openenv (the extra ``grpo-core[openenv]``) is
imported here only, when an environment is served.
"""

from __future__ import annotations

import asyncio
import functools
import hmac
import inspect
import json
import re
import uuid
from typing import Any

from grpo_core.errors import UsageError
from grpo_core.plugins.loading import Environment
from grpo_core.plugins.openenv_client import EXTRA

MOUNT_PREFIX = "/envs/"
UNAUTHORIZED = "this server needs its token: send the header 'Authorization: Bearer TOKEN'"


def require_openenv() -> None:
    try:
        import openenv.core.env_server  # noqa: F401  (~5 s: it imports gradio)
    except ImportError as error:
        raise UsageError(f"grpo-run serve --env needs OpenEnv ({error}); install it with {EXTRA}") from None


def mount_path(name: str) -> str:
    """Where an environment served beside others answers (a client's base_url is then http://HOST:PORT/envs/NAME)."""
    return MOUNT_PREFIX + re.sub(r"[^A-Za-z0-9._-]+", "-", name)


def tool_schemas(environment: Environment) -> list[dict]:
    """Each tool as TRL describes it to the model: name, description, and parameters as JSON schema."""
    from transformers.utils.chat_template_utils import get_json_schema

    instance = environment.make()
    return [get_json_schema(getattr(instance, name))["function"] for name in environment.spec.tool_names()]


def _camel(name: str) -> str:
    return "".join(part.capitalize() for part in "".join(c if c.isalnum() else " " for c in name).split()) or "Env"


def action_class(environment: Environment, schemas: list[dict]) -> type:
    """The Action of ``environment``: one call of one of its tools. The tool name and arguments are checked by the
    step, not by validation, so that a call the model gets wrong is answered with a text it can read (as TRL answers
    it in training) rather than refused."""
    from openenv.core.env_server import Action
    from pydantic import ConfigDict, Field

    names = [schema["name"] for schema in schemas]
    listing = "; ".join(f"{s['name']}({', '.join(s.get('parameters', {}).get('properties', {}))}): "
                        f"{s.get('description', '').rstrip('.')}" for s in schemas)

    class ToolCall(Action):
        __doc__ = f"One call of a tool of environment '{environment.name}': {listing or 'it has no tools'}."
        model_config = ConfigDict(title=f"{_camel(environment.name)}Action", json_schema_extra={"tools": schemas})
        tool: str = Field(description=f"The tool to call, one of: {', '.join(names) or '(none)'}; each one's "
                                      "parameters are listed under 'tools'.", json_schema_extra={"enum": names})
        arguments: dict[str, Any] = Field(default_factory=dict,
                                          description="The tool's arguments by name, as its 'parameters' in 'tools'.")

    return ToolCall


@functools.cache
def _openenv_classes() -> tuple[type, type]:
    """The openenv Environment that wraps a grpo-core environment, and its Observation (made once openenv is in)."""
    from openenv.core.env_server import Environment as OpenEnvEnvironment
    from openenv.core.env_server import Observation, State
    from openenv.core.env_server.types import EnvironmentMetadata
    from pydantic import Field

    class ToolObservation(Observation):
        """What the environment answered: the text reset returned, or a tool's output (an ``error: ...`` text when
        the call could not be made); ``reward`` is what the call changed the episode's get_reward() by, so that
        the step rewards of an episode add up to its reward (OpenEnv's convention), which ``metadata`` also holds
        (``episode_reward``)."""

        text: str = Field(default="", description="reset's text, or the tool's output")

    class Served(OpenEnvEnvironment):
        # one instance of the wrapped class per session, so sessions share no episode state
        SUPPORTS_CONCURRENT_SESSIONS = True
        environment: Environment  # set by each served environment's subclass

        def __init__(self) -> None:
            super().__init__()
            self.instance = self.environment.make()
            self.tools = {name: getattr(self.instance, name) for name in self.environment.spec.tool_names()}
            self._state = State(episode_id=None, step_count=0)
            self._paid = 0.0  # the episode's get_reward() after the last step

        def reset(self, seed: int | None = None, episode_id: str | None = None, **row: Any) -> ToolObservation:
            """Start an episode from a dataset row's columns; ``seed`` is openenv's and is not passed on."""
            self._state = State(episode_id=episode_id or str(uuid.uuid4()), step_count=0)
            self._paid = 0.0
            try:
                shown = self.instance.reset(**row)
            except Exception as error:
                # no episode started: done, so a client does not go on calling tools in it
                return ToolObservation(text=f"error: reset(**row) of environment '{self.environment.name}' raised "
                                            f"{type(error).__name__}: {error}", done=True)
            return ToolObservation(text="" if shown is None else str(shown))

        def step(self, action: Any, timeout_s: float | None = None, **kwargs: Any) -> ToolObservation:
            self._state.step_count += 1
            text = self._call(action.tool, action.arguments)
            reward, note = self._reward()
            if reward is None:
                return ToolObservation(text=text, reward=None, metadata=note)
            change, self._paid = reward - self._paid, reward
            return ToolObservation(text=text, reward=change, metadata={"episode_reward": reward})

        def _call(self, name: str, arguments: dict) -> str:
            tool = self.tools.get(name)
            if tool is None:
                return (f"error: environment '{self.environment.name}' has no tool '{name}'; its tools: "
                        f"{', '.join(self.tools) or '(none)'}")
            signature = inspect.signature(tool)
            try:
                signature.bind(**arguments)
            except TypeError as error:
                return f"error: {name}({', '.join(signature.parameters)}): {error}"
            try:
                result = tool(**arguments)
                if inspect.isawaitable(result):  # TRL takes async tools too; this runs in a session's own thread
                    result = asyncio.run(_awaited(result))
            except Exception as error:
                return f"error: {name} raised {type(error).__name__}: {error}"
            return result if isinstance(result, str) else json.dumps(result, default=str)

        def _reward(self) -> tuple[float | None, dict]:
            score = getattr(self.instance, "get_reward", None)
            if score is None:
                return None, {}
            try:
                value = score()
                return (None if value is None else float(value)), {}
            except Exception as error:
                return None, {"reward_error": f"get_reward() raised {type(error).__name__}: {error}"}

        @property
        def state(self) -> State:
            return self._state

        def get_metadata(self) -> EnvironmentMetadata:
            return EnvironmentMetadata(name=self.environment.name, description=self.environment.spec.description)

    return Served, ToolObservation


async def _awaited(awaitable):
    return await awaitable


def environment_app(environment: Environment, *, sessions: int, max_bytes: int, token: str | None):
    """The ASGI app serving ``environment`` with OpenEnv's protocol, at most ``sessions`` episodes at once, behind
    the token and body cap every route of grpo-run serve has."""
    from openenv.core.env_server import State, create_fastapi_app

    from pydantic import Field, create_model

    served, observation = _openenv_classes()
    wrapped = type(f"{_camel(environment.name)}Environment", (served,), {"environment": environment})
    # the episode's bounds, which a client reads from /schema (a step's reward is a change, so it has none)
    lo, hi = (float(b) for b in environment.spec.bounds)
    described = create_model(f"{_camel(environment.name)}Observation", __base__=observation, reward=(
        float | None, Field(default=None, description=f"what this step changed the episode's reward by; an "
                            f"episode's reward is in [{lo:g}, {hi:g}]", json_schema_extra={"episode_bounds": [lo, hi]})))
    app = create_fastapi_app(wrapped, action_class(environment, tool_schemas(environment)), described,
                             max_concurrent_envs=sessions, env_name=environment.name, state_cls=State,
                             mode="simulation")
    return Guarded(app, token=token, max_bytes=max_bytes)


class Guarded:
    """An ASGI app behind grpo-run serve's rules, which openenv's app does not enforce itself: the bearer token on
    every request but ``/health`` (a WebSocket's in its handshake's ``Authorization`` header), and the body cap (a
    WebSocket message's is uvicorn's ``ws_max_size``)."""

    def __init__(self, app, *, token: str | None, max_bytes: int) -> None:
        self.app, self.max_bytes = app, max_bytes
        self.expected = f"Bearer {token}".encode() if token else None

    async def __call__(self, scope, receive, send) -> None:
        if scope["type"] not in ("http", "websocket"):
            return await self.app(scope, receive, send)
        path = scope["path"].removeprefix(scope.get("root_path", "")) or "/"
        given = dict(scope.get("headers") or ()).get(b"authorization", b"")
        if self.expected is not None and path != "/health" and not hmac.compare_digest(given, self.expected):
            return await _refuse(scope, receive, send, 401, UNAUTHORIZED)
        if scope["type"] == "websocket":
            return await self.app(scope, receive, send)
        body = await self._body(scope, receive, send)
        if body is None:
            return None
        sent = False

        async def replay():
            nonlocal sent
            if sent:
                return await receive()
            sent = True
            return {"type": "http.request", "body": body, "more_body": False}

        return await self.app(scope, replay, send)

    async def _body(self, scope, receive, send) -> bytes | None:
        """The whole body, counted as it arrives (one without a length is capped too); None when refused."""
        too_big = (f"the body is over this server's limit of {self.max_bytes} bytes; send less or start the server "
                   "with a larger --max-request-mb")
        length = dict(scope.get("headers") or ()).get(b"content-length", b"0")
        if not length.isdigit() or int(length) > self.max_bytes:
            await _refuse(scope, receive, send, 413, too_big)
            return None
        body = bytearray()
        while True:
            message = await receive()
            if message["type"] == "http.disconnect":
                return None
            body += message.get("body", b"")
            if len(body) > self.max_bytes:
                await _refuse(scope, receive, send, 413, too_big)
                return None
            if not message.get("more_body"):
                return bytes(body)


async def _refuse(scope, receive, send, status: int, message: str) -> None:
    body = json.dumps({"error": message}).encode()
    headers = [(b"content-type", b"application/json"), (b"content-length", str(len(body)).encode())]
    if scope["type"] == "http":
        await send({"type": "http.response.start", "status": status, "headers": headers})
        await send({"type": "http.response.body", "body": body})
    elif "websocket.http.response" in scope.get("extensions", {}):  # an HTTP answer to the handshake, with why
        await send({"type": "websocket.http.response.start", "status": status, "headers": headers})
        await send({"type": "websocket.http.response.body", "body": body})
    else:
        await receive()  # the handshake's websocket.connect
        await send({"type": "websocket.close", "code": 1008})
