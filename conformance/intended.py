"""The differences we mean to have (pure): each is a row of the README's differences table.

A :class:`Rule` matches a :class:`~conformance.diff.Difference` by object kind, phase, path
(regular expressions, anchored) and optionally a predicate over the two values. The runner
classifies every difference it finds: one matched by a rule is *intended* (and reported with
the README row that explains it), anything else is *unexplained* and fails the run. The
``readme`` field is the first cell of that row; ``conformance/tests`` checks that every rule's
row exists, so the README and this list cannot drift apart.
"""

from __future__ import annotations

import re
from collections.abc import Callable, Iterable
from dataclasses import dataclass
from typing import Any

from conformance.diff import MISSING, Difference


@dataclass(frozen=True)
class Rule:
    id: str
    readme: str                    # the README differences table row (its first cell)
    obj: str = ".*"                # "Kind/name", "events", "create", "CustomResourceDefinition"
    phase: str = ".*"
    path: str = ".*"
    case: str = ".*"
    context: str = ".*"
    when: Callable[[Any, Any], bool] | None = None

    def matches(self, d: Difference) -> bool:
        return bool(re.fullmatch(self.obj, d.obj) and re.fullmatch(self.phase, d.phase)
                    and re.fullmatch(self.path, d.path) and re.fullmatch(self.case, d.case)
                    and re.fullmatch(self.context, d.context)
                    and (self.when is None or self.when(d.go, d.ours)))


def _count_fewer(go: Any, ours: Any) -> bool:
    return isinstance(go, int) and isinstance(ours, int) and 1 <= ours < go


def _absent_or_empty(value: Any) -> bool:
    return value in (MISSING, None, "", [], {})


def _one_empty_script(go: Any, ours: Any) -> bool:
    """One side's ``discover_hosts.sh`` is still the empty script it was created with."""
    return isinstance(go, str) and isinstance(ours, str) and "#!/bin/sh" in (go.strip(),
                                                                           ours.strip())


_TEMPLATE = (r"spec\.versions\[0\]\.schema\.openAPIV3Schema\.properties\.spec\.properties\."
             r"mpiReplicaSpecs\.additionalProperties\.properties\.template\.properties")
UNOBSERVED = "running-unobserved-by-(go|ours)"
UNOBSERVED_ROW = "A launcher that finishes before the controller sees it running"


RULES: tuple[Rule, ...] = (
    Rule("mpijob-running-event-once", readme="`MPIJobRunning` event",
         obj="events", phase="events", path=r'\["Normal MPIJobRunning: .*"\]\.count',
         when=_count_fewer),
    Rule("status-change-event-once", readme="Own status writes",
         obj="events", phase="events",
         path=(r'\["(Normal (MPIJobCreated|MPIJobSuspended|MPIJobResumed)|Warning '
               r'(DeadlineExceeded|BackoffLimitExceeded|MPIJobFailed|MPIJobEvicted)): .*"\]'
               r'\.count'),
         when=_count_fewer),
    Rule("crd-scale-subresource", readme="CRD scale subresource (#278, #336)",
         obj="CustomResourceDefinition", phase="schema",
         path=r"spec\.versions\[0\]\.subresources\.scale.*"),
    Rule("crd-printer-columns", readme="CRD printer columns",
         obj="CustomResourceDefinition", phase="schema",
         path=r"spec\.versions\[0\]\.additionalPrinterColumns.*"),
    Rule("crd-openapi-defaults", readme="CRD pod template schema",
         obj="CustomResourceDefinition", phase="schema", path=_TEMPLATE + r".*\.default",
         when=lambda go, ours: go == MISSING and ours in ("", 0, "ReadWrite", "Shared")),
    Rule("crd-map-type-atomic", readme="CRD pod template schema",
         obj="CustomResourceDefinition", phase="schema",
         path=_TEMPLATE + r'.*\["x-kubernetes-map-type"\]',
         when=lambda go, ours: go == "atomic" and ours == MISSING),
    Rule("crd-pod-api-version", readme="CRD pod template schema",
         obj="CustomResourceDefinition", phase="schema",
         path=_TEMPLATE + r"\.spec\.properties\.(workloadRef|schedulingGroup)",
         when=lambda go, ours: MISSING in (go, ours)),
    Rule("crd-generator-annotation", readme="CRD pod template schema",
         obj="CustomResourceDefinition", phase="schema",
         path=r'metadata\.annotations(\["controller-gen\.kubebuilder\.io/version"\])?'),
    Rule("running-unobserved-conditions", readme=UNOBSERVED_ROW, context=UNOBSERVED,
         obj="MPIJob/.*", phase="final",
         path=r"status\.conditions\[\d+\]\.(type|status|reason|message)"),
    Rule("running-unobserved-event", readme=UNOBSERVED_ROW, context=UNOBSERVED,
         obj="events", phase="events", path=r'\["Normal MPIJobRunning: .*"\](\..*)?'),
    Rule("running-unobserved-discover-hosts", readme=UNOBSERVED_ROW, context=UNOBSERVED,
         obj="ConfigMap/.*-config", phase="final", path=r'data\["discover_hosts\.sh"\]',
         when=_one_empty_script),
    Rule("managed-by-unknown", readme="Unknown `runPolicy.managedBy`",
         case="managed-by-unknown", obj="events", phase="events",
         path=r'\["Warning ValidationError: .*managedBy.*"\](\..*)?',
         when=lambda go, ours: _absent_or_empty(go)),
)


def classify(diffs: Iterable[Difference], rules: Iterable[Rule] = RULES
             ) -> tuple[list[tuple[Difference, Rule]], list[Difference]]:
    """(intended differences with the rule that explains each, unexplained differences)."""
    rules = list(rules)
    intended: list[tuple[Difference, Rule]] = []
    unexplained: list[Difference] = []
    for d in diffs:
        rule = next((r for r in rules if r.matches(d)), None)
        if rule is None:
            unexplained.append(d)
        else:
            intended.append((d, rule))
    return intended, unexplained
