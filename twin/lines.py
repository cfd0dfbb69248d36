"""What a value shown on one line may not hold, for every app: memory's one-line fields (memory/limits.py
names the bound), and an OAuth app's name, shown on the consent card and under Connected apps."""

import re

# Unicode Cc (NUL, tab, CR, LF and U+0085 included), the line and paragraph separators, and the
# bidirectional embeddings, overrides and isolates, which break or reorder the line a value is shown on. A
# regular-expression class body, read alike by Python and JSON Schema (ECMA-262).
LINE_BREAKERS = r"\u0000-\u001f\u007f-\u009f\u2028\u2029\u202a-\u202e\u2066-\u2069"
_BREAKS = re.compile(f"[{LINE_BREAKERS}]")


def breaks_line(value: str) -> bool:
    """Whether `value` holds a character that breaks or reorders the line it is shown on."""
    return _BREAKS.search(value) is not None
