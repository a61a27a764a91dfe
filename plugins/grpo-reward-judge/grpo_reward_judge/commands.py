"""The judge's commands: ``grpo-run judge-server`` (the embedded judge on its own, for other runs or tools to use)
and ``grpo-run judge-check`` (the measures that judge the judge, alone)."""

from __future__ import annotations

import time

import click


@click.command("judge-server")
@click.option("--port", type=int, default=8000, show_default=True, help="port on 127.0.0.1 (0: a free one)")
@click.option("--model", "model_folder", default=None,
              help="a local model folder to serve (default: the embedded SmolLM2-135M-Instruct)")
def judge_server(port: int, model_folder: str | None) -> None:
    """Serve the embedded judge model over the OpenAI chat API on 127.0.0.1 until interrupted.

    Point the judge reward at it with --reward-arg judge.base_url=URL --reward-arg judge.model=MODEL.
    """
    from grpo_reward_judge.server import start_server

    server = start_server(model_folder, port or None)
    click.echo(f"judge server answering at {server.url} after {server.started_s:.1f} s; model: {server.model}")
    click.echo(f"use it: --reward judge --reward-arg judge.base_url={server.url} --reward-arg judge.model={server.model}")
    try:
        while server.process.poll() is None:
            time.sleep(0.5)
    except KeyboardInterrupt:
        pass
    finally:
        server.stop()
    if server.process.returncode not in (0, -15, None):
        raise click.ClickException(f"the judge server exited with {server.process.returncode}; see {server.log}")


@click.command("judge-check")
@click.option("--reward", "name", type=click.Choice(["judge", "judge-group"]), default="judge", show_default=True,
              help="the judge reward to check")
@click.option("--reward-arg", "reward_args", multiple=True, metavar="KEY=VALUE",
              help="a judge parameter, e.g. base_url=http://127.0.0.1:8000 (repeatable)")
def judge_check(name: str, reward_args: tuple[str, ...]) -> None:
    """Judge the judge: agreement with references, injection, length and consistency (and, for judge-group, order
    consistency), each with its figure: the measures of grpo-run check --reward judge, alone."""
    from grpo_core import load_rewards

    params = dict(arg.split("=", 1) for arg in reward_args)
    [reward] = load_rewards([name], {name: params})
    failed = 0
    for measure in reward.spec.checks.measures:
        ok, figure = measure.measure(reward)
        failed += not ok
        click.echo(f"{measure.name:18} {'pass' if ok else 'FAIL'}  {figure}")
    if failed:
        raise click.ClickException("the judge failed checks above; a policy trained with it learns its faults")
