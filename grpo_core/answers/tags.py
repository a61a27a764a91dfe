"""Reading the text inside a completion's tags, linear in the text's length."""

from __future__ import annotations

import re
from functools import lru_cache


@lru_cache(maxsize=32)
def _tag_patterns(tag: str) -> tuple[re.Pattern, re.Pattern]:
    name = re.escape(tag)
    return re.compile(rf"<{name}\s*>", re.I), re.compile(rf"</{name}\s*>", re.I)


def answer_tag(text: str, tag: str = "answer") -> str | None:
    """The text inside the last complete ``<tag>...</tag>`` pair (any case), or None if there is none.

    ``answer_tag("<answer>1</answer> <answer> 2 </answer>")`` is ``" 2 "``; nested openings count
    from the last one before the closing tag. Linear in the length of the text.
    """
    opening, closing = _tag_patterns(tag)
    close = None
    for close in closing.finditer(text):
        pass
    if close is None:
        return None
    start = None
    for start in opening.finditer(text, 0, close.start()):
        pass
    return None if start is None else text[start.end() : close.start()]
