"""Namespaces being deleted, as the API server last said: :class:`TerminatingNamespaces`.

While a namespace is being deleted the API server refuses every create in it (403, cause
``NamespaceTerminating``), and a namespace never leaves that state except by being deleted.
Deleting a namespace deletes its pods first, and every pod deletion syncs its job again, whose
creates (and the Warning Events about them) are refused in turn: without a memory of the answer
a controller spends its whole client-side QPS on creates that cannot succeed, and the jobs of
every other namespace wait behind them.

Contract:

* :meth:`TerminatingNamespaces.note` records a refusal (an :class:`ApiError` for which
  ``is_namespace_terminating()`` holds) for its namespace; other errors are ignored.
* :meth:`TerminatingNamespaces.refusal` returns, for ``hold`` seconds after the last recorded
  refusal in that namespace, a new :class:`ApiError` equal to it (same status, reason, message
  and body), else None. The hold is short (1 s by default) because a namespace of the same name
  can be created again once the deletion has finished: a create in it then fails at most for
  the rest of the hold, and is retried with the job's backoff like any failed create.
* :meth:`TerminatingNamespaces.guard` runs a create through both: raises the held refusal
  without calling it, or calls it and notes the error it raises.
* Time is the injected :class:`~mpi_controller.runtime.clock.Clock`'s; memory is one entry per
  namespace refused within the hold (older entries are dropped when a refusal is noted).
"""

from __future__ import annotations

from collections.abc import Awaitable, Callable
from typing import TypeVar

from mpi_controller.runtime.clock import Clock
from mpi_controller.runtime.errors import ApiError

__all__ = ["DEFAULT_HOLD", "TerminatingNamespaces"]

T = TypeVar("T")

DEFAULT_HOLD = 1.0


class TerminatingNamespaces:
    """The last ``NamespaceTerminating`` refusal of each namespace, kept ``hold`` seconds."""

    def __init__(self, clock: Clock, hold: float = DEFAULT_HOLD) -> None:
        self._clock = clock
        self.hold = hold
        self._refused: dict[str, tuple[float, ApiError]] = {}

    def note(self, namespace: str | None, error: ApiError) -> None:
        """Remember ``error`` for ``namespace`` if it says the namespace is being deleted."""
        if not namespace or not error.is_namespace_terminating():
            return
        now = self._clock.now()
        self._refused = {ns: seen for ns, seen in self._refused.items()
                         if now - seen[0] < self.hold}
        self._refused[namespace] = (now, error)

    def refusal(self, namespace: str | None) -> ApiError | None:
        """The error a create in ``namespace`` would get now, if it was refused lately."""
        seen = self._refused.get(namespace or "")
        if seen is None:
            return None
        at, error = seen
        if self._clock.now() - at >= self.hold:
            del self._refused[namespace or ""]
            return None
        return ApiError(error.status, error.reason, error.message, error.body)

    async def guard(self, namespace: str | None, create: Callable[[], Awaitable[T]]) -> T:
        """``await create()`` unless ``namespace`` was refused lately (then that error)."""
        refused = self.refusal(namespace)
        if refused is not None:
            raise refused
        try:
            return await create()
        except ApiError as err:
            self.note(namespace, err)
            raise
