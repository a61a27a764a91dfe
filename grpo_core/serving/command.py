"""``grpo-run serve``: checks what it is asked (rewards, the address, the token) in one line each, then runs the
server. FastAPI and uvicorn (the ``serve`` extra) are imported only here, when the command runs."""

from __future__ import annotations

import ipaddress
import os
import sys

import click

from grpo_core.errors import GrpoError, UsageError
from grpo_core.plugins import get_registry
from grpo_core.rewards.backend import configure_scoring
from grpo_core.plugins.loading import load_rewards
from grpo_core.rewards.reward import Reward
from grpo_core.settings.declared import option
from grpo_core.settings.layers import parse_reward_options, parse_weight

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


@click.command(context_settings={"help_option_names": ["-h", "--help"]})
@click.option("--host", default="127.0.0.1", show_default=True,
              help="Address to listen on; any but a loopback address needs a token (--token-env).")
@click.option("--port", type=click.IntRange(1, 65535), default=DEFAULT_PORT, show_default=True)
@option("rewards", help="A reward to serve, NAME or NAME=WEIGHT (the weight counts in /get_reward); repeat for "
        "several (default: every installed reward).")
@option("reward_args", help="A served reward's parameter, fixed for the server's life, e.g. math.extract=boxed.")
@click.option("--openrlhf-reward", "openrlhf", multiple=True, metavar="NAME[=WEIGHT]",
              help="A reward that OpenRLHF's /get_reward sums, with its weight; repeat for several (default: every "
                   "--reward given).")
@option("reward_workers")
@click.option("--max-request-mb", type=click.FloatRange(min=0, min_open=True), default=16.0, show_default=True,
              help="Largest request body; a larger one is refused (413) before it is parsed.")
@click.option("--token-env", default=TOKEN_ENV, show_default=True, metavar="VARIABLE",
              help="Environment variable holding the bearer token every request but /health must carry.")
@click.option("--log-level", type=click.Choice(["critical", "error", "warning", "info", "debug"]), default="info",
              show_default=True)
@click.option("--access-log", is_flag=True, help="Log every request.")
def serve(host, port, rewards, reward_args, openrlhf, reward_workers, max_request_mb, token_env, log_level,
          access_log):
    """Serve installed rewards over HTTP: POST /rewards/NAME, OpenRLHF's POST /get_reward, GET /rewards, GET /health.

    \b
    grpo-run serve --reward math --reward xml-format=0.5 --port 8765
    OpenRLHF: --remote_rm_url http://127.0.0.1:8765/get_reward --label_key answer
    grpo-run train --reward remote:math --reward-arg remote:math.url=http://HOST:8765
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
    served, weights = served_rewards(rewards, reward_args)
    summed = openrlhf_rewards(openrlhf, served, weights, bool(rewards))
    configure_scoring(reward_workers)
    app = create_app(served, summed, max_bytes=int(max_request_mb * 1024 * 1024), token=token)
    openrlhf_text = ", ".join(f"{reward.__name__}={weight:g}" for reward, weight in summed) or "off"
    click.echo(f"grpo-run serve: {', '.join(served) or 'no rewards'} on http://{host}:{port} (POST /rewards/NAME; "
               f"POST {OPENRLHF_PATH}: {openrlhf_text}; GET /rewards, /health)"
               + ("; token required" if token else ""), err=True)
    sys.stdout.flush()
    uvicorn.run(app, host=host, port=port, log_level=log_level, access_log=access_log)
