"""``grpo-run serve``: checks what it is asked (rewards, environments, the address, the token) in one line each, then
runs the server. FastAPI and uvicorn (the ``serve`` extra) are imported only here, when the command runs, and openenv
(the ``openenv`` extra) only with ``--env``."""

from __future__ import annotations

import ipaddress
import os
import sys

import click

from grpo_core.errors import GrpoError, UsageError
from grpo_core.plugins import get_registry
from grpo_core.rewards.backend import configure_scoring
from grpo_core.plugins.loading import load_environments, load_rewards
from grpo_core.rewards.reward import Reward
from grpo_core.serving.openenv_app import environment_app, mount_path, require_openenv
from grpo_core.settings.declared import option
from grpo_core.settings.layers import flag_layer, parse_reward_options, parse_weight

DEFAULT_PORT = 8765
TOKEN_ENV = "GRPO_SERVE_TOKEN"


def is_loopback(host: str) -> bool:
    if host == "localhost":
        return True
    try:
        return ipaddress.ip_address(host).is_loopback
    except ValueError:
        return False


def served_rewards(rewards: tuple, reward_args: tuple) -> tuple[dict[str, Reward], dict[str, float]]:
    """The rewards to serve by name, and the weights given with them; with no ``rewards``, every installed reward
    that loads with its defaults (one that does not is skipped, and said)."""
    names, weights, params = parse_reward_options(rewards, reward_args)
    if names:
        return {reward.__name__: reward for reward in load_rewards(names, params, weights)}, weights
    installed = sorted(get_registry().items["rewards"])
    unknown = sorted(set(params) - set(installed))
    if unknown:
        raise UsageError(f"--reward-arg names reward '{unknown[0]}', which is not installed; installed: "
                         f"{', '.join(installed)}")
    served = {}
    for name in installed:
        try:
            served[name] = load_rewards([name], {name: params[name]} if name in params else None)[0]
        except GrpoError as error:
            click.echo(f"grpo-run serve: warning: not serving reward '{name}': {error}", err=True)
    return served, {}


def openrlhf_rewards(chosen: tuple, served: dict[str, Reward], weights: dict[str, float],
                     named: bool) -> list[tuple[Reward, float]]:
    """What ``/get_reward`` sums: ``--openrlhf-reward NAME[=WEIGHT]``, else every ``--reward`` given, else none."""
    if not chosen:
        return [(reward, weights.get(name, reward.weight)) for name, reward in served.items()] if named else []
    result = []
    for item in chosen:
        name, sep, weight = (part.strip() for part in item.partition("="))
        if name not in served:
            raise UsageError(f"--openrlhf-reward '{name}' is not served; served: {', '.join(served) or '(none)'} "
                             f"(add --reward {name})")
        result.append((served[name], parse_weight(weight, name) if sep else served[name].weight))
    return result


def served_environments(environments: tuple, env_args: tuple) -> list:
    """``--env NAME --env-arg NAME.KEY=VALUE``, loaded and checked as training loads them (none when not given)."""
    given = flag_layer(environments=environments, env_args=env_args)
    names, params = given.get("environments", []), given.get("env_args", {})
    return load_environments(names, params) if names or params else []


@click.command(context_settings={"help_option_names": ["-h", "--help"]})
@click.option("--host", default="127.0.0.1", show_default=True,
              help="Address to listen on; any but a loopback address needs a token (--token-env).")
@click.option("--port", type=click.IntRange(1, 65535), default=DEFAULT_PORT, show_default=True)
@option("rewards", help="A reward to serve, NAME or NAME=WEIGHT (the weight counts in /get_reward); repeat for "
        "several (default: every installed reward, or none beside --env).")
@option("reward_args", help="A served reward's parameter, fixed for the server's life, e.g. math.extract=boxed.")
@click.option("--openrlhf-reward", "openrlhf", multiple=True, metavar="NAME[=WEIGHT]",
              help="A reward that OpenRLHF's /get_reward sums, with its weight; repeat for several (default: every "
                   "--reward given).")
@option("environments", help="An environment to serve with OpenEnv's protocol (see `grpo-run environments`), NAME or "
        "FILE.py:CLASS; repeat for several. Without --reward, no rewards are served.")
@option("env_args", help="A served environment's parameter, fixed for the server's life, e.g. calculator.max_calls=4.")
@click.option("--env-sessions", type=click.IntRange(min=1), default=16, show_default=True, metavar="N",
              help="Episodes (OpenEnv sessions) each environment runs at once; one more is refused until one ends.")
@option("reward_workers")
@click.option("--max-request-mb", type=click.FloatRange(min=0, min_open=True), default=16.0, show_default=True,
              help="Largest request body (and WebSocket message); a larger one is refused (413) before it is "
                   "parsed.")
@click.option("--token-env", default=TOKEN_ENV, show_default=True, metavar="VARIABLE",
              help="Environment variable holding the bearer token every request but /health must carry.")
@click.option("--log-level", type=click.Choice(["critical", "error", "warning", "info", "debug"]), default="info",
              show_default=True)
@click.option("--access-log", is_flag=True, help="Log every request.")
def serve(host, port, rewards, reward_args, openrlhf, environments, env_args, env_sessions, reward_workers,
          max_request_mb, token_env, log_level, access_log):
    """Serve installed rewards over HTTP: POST /rewards/NAME, OpenRLHF's POST /get_reward, GET /rewards, GET /health.

    \b
    grpo-run serve --reward math --reward xml-format=0.5 --port 8765
    OpenRLHF: --remote_rm_url http://127.0.0.1:8765/get_reward --label_key answer
    grpo-run train --reward remote:math --reward-arg remote:math.url=http://HOST:8765

    With --env NAME, an environment is served with OpenEnv's protocol (openenv's GenericEnvClient, each episode a
    WebSocket session): at the root when it is served alone, else under /envs/NAME.

    \b
    grpo-run serve --env calculator --port 8000
    GenericEnvClient(base_url="http://127.0.0.1:8000")
    """
    token = os.environ.get(token_env) or None
    if token is None and not is_loopback(host):
        raise UsageError(f"refusing to serve on {host} without a token: set the environment variable {token_env} "
                         f"to a secret (clients send 'Authorization: Bearer SECRET'), or listen on 127.0.0.1")
    try:
        import uvicorn

        from grpo_core.serving.app import OPENRLHF_PATH, create_app
    except ImportError as error:
        raise UsageError(f"grpo-run serve needs FastAPI and uvicorn ({error}); install them with "
                         "pip install \"grpo-core[serve]\"") from None
    if environments:
        require_openenv()
        if reward_args and not rewards:
            raise UsageError("--reward-arg needs --reward NAME beside --env: with --env, only the rewards named with "
                             "--reward are served")
    served_envs = served_environments(environments, env_args)
    served, weights = served_rewards(rewards, reward_args) if rewards or not environments else ({}, {})
    summed = openrlhf_rewards(openrlhf, served, weights, bool(rewards))
    configure_scoring(reward_workers)
    max_bytes = int(max_request_mb * 1024 * 1024)
    # one environment alone is the whole server; else each is under /envs/NAME, beside the reward routes
    alone = len(served_envs) == 1 and not served
    paths = {env.name: "" if alone else mount_path(env.name) for env in served_envs}
    apps = {env.name: environment_app(env, sessions=env_sessions, max_bytes=max_bytes, token=token)
            for env in served_envs}
    if alone:
        app = apps[served_envs[0].name]
    else:
        app = create_app(served, summed, max_bytes=max_bytes, token=token, environments=paths)
        for name, env_app in apps.items():
            app.mount(paths[name], env_app)
    base = f"http://{host}:{port}"
    openrlhf_text = ", ".join(f"{reward.__name__}={weight:g}" for reward, weight in summed) or "off"
    lines = [f"{', '.join(served) or 'no rewards'} on {base} (POST /rewards/NAME; POST {OPENRLHF_PATH}: "
             f"{openrlhf_text}; GET /rewards, /health)"] if served or not served_envs else []
    lines += [f"environment {name} on {base}{path} (OpenEnv: /reset, /step, /state, /schema, /health, /ws; "
              f"GenericEnvClient(base_url=\"{base}{path}\"))" for name, path in paths.items()]
    click.echo(f"grpo-run serve: {'; '.join(lines)}" + ("; token required" if token else ""), err=True)
    sys.stdout.flush()
    uvicorn.run(app, host=host, port=port, log_level=log_level, access_log=access_log, ws_max_size=max_bytes)
