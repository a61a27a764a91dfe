"""``grpo-run serve``: the installed rewards over HTTP, for other trainers and for the ``remote`` reward."""
