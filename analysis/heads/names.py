"""A head's one name: 'encoder.0.1:2', head 2 of site encoder.0.1, the same in every table, chart, CSV and message (the
form `masked_heads` and `removed_heads` columns hold). Torch-free, so that the screens' cheap half can use it."""
from __future__ import annotations


def head_name(site: str, head: int) -> str:
    """'encoder.0.1:2'."""
    return f"{site}:{int(head)}"


__all__ = ["head_name"]
