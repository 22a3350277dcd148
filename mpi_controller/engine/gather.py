"""Running a sync's writes concurrently: :func:`gather_bounded` and :func:`gather_raising`.

Both wait for every call to finish before anything is raised, so a retry finds in the cache
whatever the calls did; ``asyncio.CancelledError`` is always raised first, never returned or
swallowed.
"""

from __future__ import annotations

import asyncio
from collections.abc import Awaitable, Callable, Iterable, Sequence
from typing import Any, TypeVar

__all__ = ["first_error", "gather_bounded", "gather_raising"]

T = TypeVar("T")
R = TypeVar("R")


def first_error(results: Iterable[object]) -> BaseException | None:
    """The first exception among ``results`` (a cancellation before any other), or ``None``."""
    errors = [r for r in results if isinstance(r, BaseException)]
    for error in errors:
        if isinstance(error, asyncio.CancelledError):
            return error
    return errors[0] if errors else None


async def gather_raising(*coros: Awaitable[Any]) -> None:
    """Run all concurrently, then raise the first error (after every one has finished;
    cancellation first)."""
    error = first_error(await asyncio.gather(*coros, return_exceptions=True))
    if error is not None:
        raise error


async def gather_bounded(items: Sequence[T], call: Callable[[T], Awaitable[R]], *,
                         concurrency: int) -> list[R | BaseException]:
    """``call`` on every item, at most ``concurrency`` at once (at least one); the results or
    errors in input order (a cancellation is raised)."""
    limit = asyncio.Semaphore(max(concurrency, 1))

    async def one(item: T) -> R:
        async with limit:
            return await call(item)

    results = await asyncio.gather(*(one(i) for i in items), return_exceptions=True)
    error = first_error(results)
    if isinstance(error, asyncio.CancelledError):
        raise error
    return results
