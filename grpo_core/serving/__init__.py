"""``grpo-run serve``: the installed rewards over HTTP, for other trainers and for the ``remote`` reward, and
environments with OpenEnv's protocol (``--env``)."""
