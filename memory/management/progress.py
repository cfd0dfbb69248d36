"""The progress bar exportmemory and importmemory draw on standard error, one line redrawn in place."""

BAR_WIDTH = 30  # characters of the bar: fits an 80-column terminal beside the counts


def bar(done: int, total: int, what: str) -> str:
    """The bar for `done` of `total` items (full for an empty total), then the counts and `what` was done
    to them, such as "stored"; starts with a carriage return, to be written over the last one."""
    filled = BAR_WIDTH * done // total if total else BAR_WIDTH
    return f"\r[{'#' * filled}{'.' * (BAR_WIDTH - filled)}] {done:,}/{total:,} items {what}"
