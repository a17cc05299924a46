"""Typed errors. Every message names the problem (column, row, value) so the UI and CLI can show it as is."""
from __future__ import annotations


class InformerLabError(Exception):
    """Base of every error a user can cause; the UI shows str(err), the CLI prints it and exits 2."""


class DataError(InformerLabError):
    """A CSV that cannot be used. `column`, `row` (0-based data row) and `value` say where, when known."""

    def __init__(self, message: str, *, column: str | None = None, row: int | None = None, value: object = None):
        super().__init__(message)
        self.column = column
        self.row = row
        self.value = value


class CheckpointError(InformerLabError):
    """A checkpoint folder or file that is missing, tampered with, or does not match its config."""


class ConfigError(InformerLabError):
    """Settings that cannot work together (e.g. label_len > seq_len)."""
