"""The degenerate completions the checks try on ``code``: programs that try to score without solving."""

from __future__ import annotations

import ast


def fenced(program: str, params: dict) -> str:
    """``program`` written where the reward reads it under ``params`` (fence language, optional tag)."""
    block = f"Here is my solution.\n```{params.get('language') or 'python'}\n{program}```\n"
    tag = params.get("tag")
    return f"<{tag}>\n{block}</{tag}>" if tag else block


def _function_name(tests) -> str:
    for test in tests if isinstance(tests, list) else []:
        try:
            for node in ast.walk(ast.parse(test)):
                if isinstance(node, ast.Call) and isinstance(node.func, ast.Name):
                    return node.func.id
        except (SyntaxError, ValueError, RecursionError):
            continue
    return "solve"


CHEATS = (
    ("a program that does nothing", "pass\n"),
    ("a program that exits before the tests", "import sys\nsys.exit(0)\n"),
    ("a program that ends its process before the tests", "import os\nos._exit(0)\n"),
    ("a function returning an object equal to everything",
     "class Anything:\n    def __eq__(self, other):\n        return True\n    def __ne__(self, other):\n"
     "        return False\n    def __bool__(self):\n        return True\n\ndef {name}(*args, **kwargs):\n"
     "    return Anything()\n"),
    ("a program that makes assertions pass by patching builtins",
     "import builtins\nbuiltins.AssertionError = type('Quiet', (Exception,), {{}})\n"
     "builtins.abs = lambda x: 0\nbuiltins.isinstance = lambda *a: True\nabs = builtins.abs\n\n"
     "def {name}(*args, **kwargs):\n    return None\n"),
    ("a program that ends the process when it exits, tests or not",
     "import atexit, os\natexit.register(lambda: os._exit(0))\n\ndef {name}(*args, **kwargs):\n    raise SystemExit(0)\n"),
    ("a program that writes success lines to every descriptor",
     "import os\nfor i in range(50):\n    for line in ('%d\\tpass\\t\\n' % i, '%d\\tvalue\\t%s\\n' % (i, '3'.encode().hex()),\n"
     "                 '{{\"i\": %d, \"status\": \"pass\"}}\\n' % i):\n        for fd in range(1, 20):\n"
     "            try:\n                os.write(fd, line.encode())\n            except OSError:\n                pass\n"),
)


def degenerate(prompt, columns: dict, params: dict) -> list[tuple[str, str]]:
    """Programs that try to earn the reward without solving the task, and text with no program at all."""
    name = _function_name(columns.get("tests"))
    found = [(label, fenced(source.format(name=name), params)) for label, source in CHEATS]
    found.append(("the task's prompt in a code block", fenced(f"# {str(prompt)[:200]!r}\n", params)))
    found.append(("an empty code block", fenced("", params)))
    return found
