"""Upserts into the lists of a pod template, keyed as Trainer v2.3.0's ``pkg/apply/apply.go``
keys them: an env var by name, a container port by port number or name, a volume by name, a
volume mount by mount path. An upsert replaces the matching entry in place, or appends.
Pure; the lists are plain JSON (lists of dicts), changed in place."""

from __future__ import annotations

from collections.abc import Callable, Iterable
from typing import Any

__all__ = ["upsert_env", "upsert_ports", "upsert_volume_mounts", "upsert_volumes"]

Item = dict[str, Any]


def _upsert(items: list[Item], new: Iterable[Item], same: Callable[[Item, Item], bool]) -> None:
    for item in new:
        for index, existing in enumerate(items):
            if same(existing, item):
                items[index] = dict(item)
                break
        else:
            items.append(dict(item))


def upsert_env(env: list[Item], new: Iterable[Item]) -> None:
    _upsert(env, new, lambda a, b: a.get("name") == b.get("name"))


def upsert_ports(ports: list[Item], new: Iterable[Item]) -> None:
    """By port or by name, where two ports without a name have the same name (``ptr.Equal``
    of two nil pointers): a port without a name replaces the first other one without a
    name."""
    def same(a: Item, b: Item) -> bool:
        return a.get("containerPort") == b.get("containerPort") or a.get("name") == b.get("name")
    _upsert(ports, new, same)


def upsert_volumes(volumes: list[Item], new: Iterable[Item]) -> None:
    _upsert(volumes, new, lambda a, b: a.get("name") == b.get("name"))


def upsert_volume_mounts(mounts: list[Item], new: Iterable[Item]) -> None:
    _upsert(mounts, new, lambda a, b: a.get("mountPath") == b.get("mountPath"))
