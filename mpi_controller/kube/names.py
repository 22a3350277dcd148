"""Object names: apimachinery's DNS label rules, with its exact messages."""

from __future__ import annotations

import re

__all__ = ["is_dns1035_label"]

_DNS1035_FMT = "[a-z]([-a-z0-9]*[a-z0-9])?"
_DNS1035_RE = re.compile(_DNS1035_FMT)
_DNS1035_MSG = (
    "a DNS-1035 label must consist of lower case alphanumeric characters or '-', "
    "start with an alphabetic character, and end with an alphanumeric character"
)
_DNS1035_MAX = 63


def is_dns1035_label(value: str) -> list[str]:
    """apimachinery ``IsDNS1035Label``: the list of problems (empty when valid)."""
    problems = []
    if len(value.encode()) > _DNS1035_MAX:
        problems.append(f"must be no more than {_DNS1035_MAX} characters")
    if not _DNS1035_RE.fullmatch(value):
        problems.append(
            f"{_DNS1035_MSG} (e.g. 'my-name',  or 'abc-123', "
            f"regex used for validation is '{_DNS1035_FMT}')"
        )
    return problems
