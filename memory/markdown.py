"""Stored text rendered into markdown (index.md, passage files, subject files) always reads as quoted data.

Every stored field is hostile: a title, an author or a fact's value could otherwise open a heading, a list
item, a quote or a fence of its own in a file that a model reads as memory's own words. Two rules, used by
every file memory writes:

- `inline(value)`: a value set on a line of ours. It is one line (line breaks and other control characters
  become spaces, for rows stored before validation refused them), and a leading markdown block marker is
  backslash-escaped, so the value can never start a block even where it stands at a line's start.
- `fenced(text)`: stored multi-line text (a passage's body, a fact's evidence) inside a fenced code block
  whose fence is one backtick longer than the longest run of backticks in the text (at least three), so no
  line of the text can close it.
"""

import re

from .limits import LINE_BREAKERS

_BREAKING = re.compile(f"[{LINE_BREAKERS}]+")

# A value starting with one of these could start a block: a heading (#), a quote (>), a list item (- + * or
# digits then . or )), a table (|), a fence (``` or ~~~), a thematic break (--- *** ___), a setext underline
# (===), raw HTML (<) or a link reference definition ([).
_BLOCK_START = re.compile(r"^(?:[#>\-+*|`~_=<\[]|\d+[.)])")
_ORDERED = re.compile(r"^(\d+)([.)])")
_BACKTICK_RUN = re.compile(r"`+")
FENCE_MIN = 3  # CommonMark's shortest fence


def inline(value) -> str:
    """`value` as one line of markdown that starts no block: breaks made spaces, a block marker escaped."""
    text = _BREAKING.sub(" ", str(value or "")).strip()
    if not _BLOCK_START.match(text):
        return text
    ordered = _ORDERED.match(text)
    if ordered:  # "1." starts a list; "1\." does not
        return f"{ordered[1]}\\{ordered[2]}{text[ordered.end() :]}"
    return "\\" + text


def fence_for(text: str) -> str:
    """The backtick fence for `text`: one longer than its longest backtick run, at least FENCE_MIN."""
    longest = max((len(run) for run in _BACKTICK_RUN.findall(text)), default=0)
    return "`" * max(FENCE_MIN, longest + 1)


def fenced(text: str) -> str:
    """`text` inside a fenced code block no line of it can close or escape."""
    fence = fence_for(text)
    return f"{fence}\n{text}\n{fence}"
