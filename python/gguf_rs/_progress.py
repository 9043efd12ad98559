"""What a long call (``import_hf``, ``quantize``) reports progress to: a
callable ``progress(stage, done, total)``, ``True`` for a tqdm bar, or
``None`` for nothing."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any


class _Bar:
    """A tqdm bar per stage: ``convert`` counts bytes written, ``quantize``
    the work units of the quantizer (copies are quick, encoding slow)."""

    def __init__(self, tqdm: Any):
        self._tqdm = tqdm
        self._bar: Any = None
        self._stage: str | None = None

    def __call__(self, stage: str, done: int, total: int) -> None:
        if stage != self._stage:
            self.close()
            unit = dict(unit="B", unit_scale=True, unit_divisor=1024) if stage == "convert" else dict(unit="")
            self._bar = self._tqdm(total=total, desc=stage, **unit)
            self._stage = stage
        self._bar.total = total
        self._bar.update(done - self._bar.n)

    def close(self) -> None:
        if self._bar is not None:
            self._bar.close()
            self._bar = None


def callback(progress: Any) -> tuple[Callable[[str, int, int], Any] | None, Callable[[], None]]:
    """The callable to hand the library, and what to call when the work
    ends (closing a bar)."""
    if progress is None or progress is False:
        return None, lambda: None
    if progress is True:
        try:
            from tqdm import tqdm
        except ImportError as e:  # pragma: no cover - tqdm comes with gguf-py
            raise ImportError("progress=True draws a tqdm bar: pip install tqdm") from e
        bar = _Bar(tqdm)
        return bar, bar.close
    if not callable(progress):
        raise TypeError(f"progress must be a callable (stage, done, total), True or None, not {type(progress).__name__}")
    return progress, lambda: None
