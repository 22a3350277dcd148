"""The differences we mean to have (pure): each is a row of a differences table in ``docs/``.

A :class:`Rule` matches a :class:`~conformance.diff.Difference` by object kind, phase, path
(regular expressions, anchored) and optionally a predicate over the two values. The runner
classifies every difference of a kind with that kind's rules (:func:`rules_for`): one matched
by a rule is *intended* (and reported with the table row that explains it), anything else is
*unexplained* and fails the run. The ``readme`` field (named when the tables were in the
README) is the first cell of that row, in the differences table of the rule's kinds
(``KindSpec.readme_sections``, headings of ``docs/differences.md``, ``docs/mpijob.md`` and
``docs/training-kinds.md``); ``conformance/tests`` checks that every rule's row exists there, so
the docs and this list cannot drift apart.
"""

from __future__ import annotations

import re
from collections.abc import Callable, Iterable
from dataclasses import dataclass
from typing import Any

import yaml

from conformance.diff import MISSING, Difference
from conformance.kinds import registered_training_kinds

MPIJOB = ("mpijob-v2beta1",)


@dataclass(frozen=True)
class Rule:
    id: str
    readme: str                    # the differences table row in docs/ (its first cell)
    kinds: tuple[str, ...] = MPIJOB  # the kinds (KindSpec names) whose differences it explains
    obj: str = ".*"                # "Kind/name", "events", "create", "CustomResourceDefinition"
    phase: str = ".*"
    path: str = ".*"
    case: str = ".*"
    context: str = ".*"
    when: Callable[[Any, Any], bool] | None = None

    def matches(self, d: Difference) -> bool:
        return bool(re.fullmatch(self.obj, d.obj) and re.fullmatch(self.phase, d.phase)
                    and re.fullmatch(self.path, d.path) and re.fullmatch(self.case, d.case)
                    and any(re.fullmatch(self.context, c) for c in d.context.split(","))
                    and (self.when is None or self.when(d.go, d.ours)))


def _count_fewer(go: Any, ours: Any) -> bool:
    return isinstance(go, int) and isinstance(ours, int) and 1 <= ours < go


def _absent_or_empty(value: Any) -> bool:
    return value in (MISSING, None, "", [], {})


_RUNNING_OR_RESTARTING = ({"Running", "Restarting"}, {"False", "True"},
                          {"MPIJobRunning", "MPIJobRestarting"})


def _running_or_restarting(go: Any, ours: Any) -> bool:
    """One side's condition is ``Running`` (False once the job failed) where the other's is
    ``Restarting``: the type, status, reason or message of that pair."""
    if {go, ours} in _RUNNING_OR_RESTARTING:
        return True
    said = {re.sub(r".* is (running|restarting)\.$", r"\1", str(v)) for v in (go, ours)}
    return said == {"running", "restarting"}


def _one_empty_script(go: Any, ours: Any) -> bool:
    """One side's ``discover_hosts.sh`` is still the empty script it was created with."""
    return isinstance(go, str) and isinstance(ours, str) and "#!/bin/sh" in (go.strip(),
                                                                           ours.strip())


_XGBOOST_ENV = {"EXTRA", "1", "DMLC_TRACKER_URI", "DMLC_TRACKER_PORT", "29500",
                "DMLC_TASK_ID", "DMLC_NUM_WORKER", "2"}


def _env_entry(value: Any) -> bool:
    """An env var of the corpus's xgboost case (a name, a plain value, a whole entry, or the
    ``valueFrom`` its DMLC_TASK_ID has), or a DMLC_TRACKER_URI value (``<job>-node-0-0.<job>``)."""
    if value is MISSING or isinstance(value, dict):
        return True
    return isinstance(value, str) and (value in _XGBOOST_ENV or value.endswith("-node-0-0.xgboost"))


def _count_more(go: Any, ours: Any) -> bool:
    return isinstance(go, int) and isinstance(ours, int) and 1 <= go < ours


_JOB_TRACKING = "batch.kubernetes.io/job-tracking"


def _job_tracking_only(go: Any, ours: Any) -> bool:
    """One side's last sight still has only the Job controller's tracking finalizer (as the
    list, or its managed-fields entry); the other's has none."""
    def tracking(value: Any) -> bool:
        return bool(value == [_JOB_TRACKING] or value == {".": {}, f'v:"{_JOB_TRACKING}"': {}})
    return (go == MISSING and tracking(ours)) or (ours == MISSING and tracking(go))


def _same_runtime(go: Any, ours: Any) -> bool:
    """Two runtime snapshots (YAML) that are one runtime: equal without managedFields and
    without the empty ``metadata`` and ``resources`` (Go structs' zero values, written as
    ``{}``)."""
    def meaning(text: Any) -> Any:
        doc = yaml.safe_load(text) if isinstance(text, str) else None
        if isinstance(doc, dict):
            (doc.get("metadata") or {}).pop("managedFields", None)
        return _without_empty(doc)
    return isinstance(go, str) and isinstance(ours, str) and meaning(go) == meaning(ours)


_ZERO_STRUCTS = ("metadata", "resources")


def _without_empty(value: Any) -> Any:
    if isinstance(value, dict):
        kept = {k: _without_empty(v) for k, v in value.items()}
        return {k: v for k, v in kept.items() if not (k in _ZERO_STRUCTS and v == {})}
    if isinstance(value, list):
        return [_without_empty(v) for v in value]
    return value


def _ours_only(go: Any, ours: Any) -> bool:
    return bool(go == MISSING and ours != MISSING)


def _go_only(go: Any, ours: Any) -> bool:
    return bool(ours == MISSING and go != MISSING)


def _one_side_only(go: Any, ours: Any) -> bool:
    return MISSING in (go, ours) and go != ours


def _selector(value: str) -> dict[str, str]:
    return dict(term.partition("=")[::2] for term in value.split(",") if term)


def _selector_with_job_labels(go: Any, ours: Any) -> bool:
    """Ours selects with ``group-name: kubeflow.org`` and ``job-name: <job>`` beside upstream's
    labels; upstream's selector is the same but for those, or was left out."""
    if not isinstance(ours, str):
        return False
    mine = _selector(ours)
    job = mine.get("training.kubeflow.org/job-name")
    if not job or mine.get("group-name") != "kubeflow.org" or mine.get("job-name") != job:
        return False
    upstream = {k: v for k, v in mine.items() if k not in ("group-name", "job-name")}
    return go == MISSING or (isinstance(go, str) and _selector(go) == upstream)


_TEMPLATE = (r"spec\.versions\[0\]\.schema\.openAPIV3Schema\.properties\.spec\.properties\."
             r"\w+ReplicaSpecs\.additionalProperties\.properties\.template\.properties")
UNOBSERVED = "running-unobserved-by-(go|ours)"
BURST = "event-burst-by-go"
UNOBSERVED_ROW = "A launcher that finishes before the controller sees it running"
TRAINING_UNOBSERVED_ROW = "A job that finishes before the operator sees it running"
# Kinds of training-operator v1.9.2 whose engine-level rules are shared (the rows are in the
# TFJob section of docs/training-kinds.md, which the other kinds name too:
# KindSpec.readme_sections); every
# registered kubeflow.org/v1 kind joins, and may have rules of its own below.
TRAINING = (*(k.name for k in registered_training_kinds()), "mpijob-v1")
PYTORCH = ("pytorchjob-v1",)
SCALED = ("pytorchjob-v1", "paddlejob-v1", "jaxjob-v1")
"""The kinds whose CRD has the scale subresource: their status has the replicas' selectors."""
MPIJOB_V1 = ("mpijob-v1",)
MPIJOB_V1ALPHA2 = ("mpijob-v1alpha2",)
CRD_KINDS = MPIJOB + TRAINING
_EVENT = r'\["(Normal|Warning) [A-Za-z]+: .*"\]'
_ADMITTED = (r'\["Warning ValidationError: .* \(admitted: the job runs as '
             r'(training|mpi)-operator runs it\)"\](\..*)?')


RULES: tuple[Rule, ...] = (
    # The Kubernetes Job controller (neither operator) removes its tracking finalizer from a
    # launcher pod once it has counted the pod; the last sight of the pod may come first.
    Rule("job-tracking-finalizer", readme="Job tracking finalizer",
         obj="Pod/.*-launcher-.*", phase="final",
         path=(r'metadata\.finalizers'
               r'|metadata\.managedFields\[\d+\]\.fieldsV1\["f:metadata"\]\["f:finalizers"\]'),
         when=_job_tracking_only),
    Rule("mpijob-running-event-once", readme="`MPIJobRunning` event",
         obj="events", phase="events", path=r'\["Normal MPIJobRunning: .*"\]\.count',
         when=_count_fewer),
    Rule("status-change-event-once", readme="Own status writes",
         obj="events", phase="events",
         path=(r'\["(Normal (MPIJobCreated|MPIJobSuspended|MPIJobResumed|MPIJobSucceeded)|'
               r'Warning (DeadlineExceeded|BackoffLimitExceeded|MPIJobFailed|MPIJobEvicted)): '
               r'.*"\]\.count'),
         when=_count_fewer),
    Rule("crd-scale-subresource", readme="CRD scale subresource (#278, #336)",
         obj="CustomResourceDefinition", phase="schema",
         path=r"spec\.versions\[0\]\.subresources\.scale.*"),
    Rule("crd-more-versions", readme="MPIJob versions",
         obj="CustomResourceDefinition", phase="schema",
         path=r"spec\.conversion(\..*)?|spec\.versions\[[12]\](\..*)?",
         when=lambda go, ours: go == MISSING),
    Rule("crd-short-names", readme="CRD short names", kinds=("mpijob-v2beta1", "mpijob-v1"),
         obj="CustomResourceDefinition", phase="schema", path=r"spec\.names\.shortNames",
         when=lambda go, ours: go == MISSING and ours == ["mj", "mpij"]),
    Rule("crd-printer-columns", readme="CRD printer columns",
         obj="CustomResourceDefinition", phase="schema",
         path=r"spec\.versions\[0\]\.additionalPrinterColumns.*"),
    Rule("crd-openapi-defaults", readme="CRD pod template schema", kinds=CRD_KINDS,
         obj="CustomResourceDefinition", phase="schema", path=_TEMPLATE + r".*\.default",
         when=lambda go, ours: go == MISSING and ours in ("", 0, "ReadWrite", "Shared")),
    Rule("crd-map-type-atomic", readme="CRD pod template schema", kinds=CRD_KINDS,
         obj="CustomResourceDefinition", phase="schema",
         path=_TEMPLATE + r'.*\["x-kubernetes-map-type"\]',
         when=lambda go, ours: go == "atomic" and ours == MISSING),
    Rule("crd-pod-api-version", readme="CRD pod template schema",
         obj="CustomResourceDefinition", phase="schema",
         path=_TEMPLATE + r"\.spec\.properties\.(workloadRef|schedulingGroup)",
         when=lambda go, ours: MISSING in (go, ours)),
    Rule("crd-generator-annotation", readme="CRD pod template schema", kinds=CRD_KINDS,
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
    Rule("admitted-slots-per-worker-zero", readme="`slotsPerWorker: 0`",
         case="admitted-.*", obj="events", phase="events", path=_ADMITTED, when=_ours_only),
    # mpi-operator reads the launcher Job from its informer's cache and creates it when the
    # cache has none: a reconcile right after the one that created it (another worker turning
    # ready, under WaitForWorkersReady) can create it again and record the AlreadyExists as a
    # Warning (syncHandler, v0.8.2). Ours waits for its expectations to see the launcher.
    Rule("launcher-created-again-event", readme="Stale cache",
         obj="events", phase="events",
         path=(r'\["Warning MPIJobFailed: launcher pod created failed: jobs\.batch '
               r'"\S+-launcher" already exists"\](\..*)?'),
         when=_go_only),
    Rule("managed-by-unknown", readme="Unknown `runPolicy.managedBy`",
         case="managed-by-unknown", obj="events", phase="events",
         path=r'\["Warning ValidationError: .*managedBy.*"\](\..*)?',
         when=lambda go, ours: _absent_or_empty(go)),
    # -- training-operator v1.9.2 (docs/training-kinds.md: "Differences from training-operator
    # v1.9.2 (TFJob)") ----
    # A reconcile of a job read from a stale cache right after the job failed at its backoff
    # limit or deadline creates again the pods and Services that the failure had deleted
    # (training-operator's expectations never hold a reconcile back): the created-again
    # objects then stay (cleanPodPolicy None). differential.created_again_context tags it.
    Rule("training-created-again-children", readme="Stale cache", kinds=TRAINING,
         context="created-again-by-go", obj="(Pod|Service)/.*", phase="final"),
    Rule("training-created-again-events", readme="Stale cache", kinds=TRAINING,
         context="created-again-by-go", obj="events", phase="events",
         path=r'\["Normal SuccessfulCreate(Pod|Service): .*"\]\.count',
         when=lambda go, ours: isinstance(go, int) and isinstance(ours, int) and go > ours),
    # An invalid job, without training-operator's webhook (row "Validation"): it is
    # reconciled there (objects, status, events, the API server's refusals); ours reports it.
    Rule("training-invalid-reconciled", readme="Validation", kinds=TRAINING, case="invalid-.*",
         phase="presence", when=_go_only),
    Rule("training-invalid-status", readme="Validation", kinds=TRAINING, case="invalid-.*",
         phase="final", path=r"status|metadata\.managedFields\[\d+\]", when=_go_only),
    Rule("training-invalid-events", readme="Validation", kinds=TRAINING, case="invalid-.*",
         obj="events", phase="events", path=_EVENT, when=_go_only),
    Rule("training-invalid-reported", readme="Validation", kinds=TRAINING, case="invalid-.*",
         obj="events", phase="events", path=r'\["Warning [A-Za-z]+FailedValidation: .*"\]',
         when=_ours_only),
    # More Events on one job than client-go's spam filter lets through (a burst of 25 per
    # source and object): the reference operator's later Events of the job were dropped
    # (differential.event_burst_context tags the case).
    Rule("training-event-spam-filter", readme="Event spam filter", kinds=TRAINING,
         context=BURST, obj="events", phase="events",
         path=r'\["(Normal|Warning) [^:]+: .*"\]', when=_ours_only),
    # the filter also drops the repeats that would have raised an Event's count
    Rule("training-event-spam-filter-count", readme="Event spam filter", kinds=TRAINING,
         context=BURST, obj="events", phase="events",
         path=r'\["(Normal|Warning) [^:]+: .*"\]\.count', when=_count_more),
    Rule("training-pod-api-version", readme="CRD pod template schema", kinds=TRAINING,
         obj="CustomResourceDefinition", phase="schema", path=_TEMPLATE + r"\..+",
         when=lambda go, ours: go == MISSING and isinstance(ours, dict)
         and bool({"type", "properties"} & set(ours))),
    Rule("training-labels", readme="Labels", kinds=TRAINING,
         obj="(Pod|Service)/.*", phase="created|final",
         path=(r'(metadata\.labels|spec\.selector)\["(job-name|group-name)"\]'
               r'|metadata\.managedFields\[\d+\]\.fieldsV1\["f:metadata"\]\["f:labels"\]'
               r'\["f:(job-name|group-name)"\]'),
         when=_ours_only),
    Rule("training-field-manager", readme="Field manager", kinds=TRAINING,
         phase="created|final", path=r"metadata\.managedFields\[\d+\]\.manager",
         when=lambda go, ours: go == "training-operator" and ours == "mpi-operator"),
    Rule("training-repeated-events", readme="Repeated Events", kinds=TRAINING,
         obj="events", phase="events",
         path=(r'\["(Normal (ExitedWithCode|[A-Za-z]+Suspended)|Warning [A-Za-z]+): '
               r'(Pod: |Error pod |[A-Za-z]+ \S+ is suspended).*"\]\.count'),
         when=_count_fewer),
    Rule("training-own-status-writes", readme="Own status writes", kinds=TRAINING,
         obj="events", phase="events",
         path=r'\["(Normal [A-Za-z]+(Succeeded|Suspended|Resumed)|Normal [A-Za-z]+Failed): .*"\]'
              r'\.count',
         when=_count_fewer),
    # One side's job finished before its operator saw it running (no Running condition):
    # its conditions are Created then Succeeded or Failed, the other side's have Running
    # (False) between them.
    Rule("training-running-unobserved", readme=TRAINING_UNOBSERVED_ROW, kinds=TRAINING,
         context=UNOBSERVED, obj=r"\w+Job/.*", phase="final",
         path=r"status\.conditions\[\d+\](\.(type|status|reason|message))?"),
    Rule("training-pod-update-batch", readme="Pod update events", kinds=TRAINING,
         obj="events", phase="events",
         path=r'\["Normal ExitedWithCode: Pod: <ns>\.\S+ exited with code 0"\]',
         when=_one_side_only),
    Rule("training-pod-group-read-back", readme="PodGroup just created", kinds=TRAINING,
         obj=r"\w+/.*", phase="final",
         path=(r'status\.lastReconcileTime|metadata\.managedFields\[\d+\]\.fieldsV1'
               r'\["f:status"\]\["f:lastReconcileTime"\]'),
         when=_go_only),
    # -- PyTorchJob (docs/training-kinds.md: "Differences from training-operator v1.9.2
    # (PyTorchJob)") ------
    Rule("pytorch-replica-selector", readme="`replicaStatuses[*].selector`", kinds=SCALED,
         obj="(PyTorchJob|PaddleJob|JAXJob)/.*", phase="final",
         path=r"status\.replicaStatuses\.\w+\.selector", when=_selector_with_job_labels),
    Rule("pytorch-replica-selector-field", readme="`replicaStatuses[*].selector`",
         kinds=SCALED, obj="(PyTorchJob|PaddleJob|JAXJob)/.*", phase="final",
         path=(r'metadata\.managedFields\[\d+\]\.fieldsV1\["f:status"\]\["f:replicaStatuses"\]'
               r'\["f:\w+"\]\["(f:selector|\.)"\]'),
         when=_ours_only),
    Rule("pytorch-crd-metric-defaults", readme="CRD `elasticPolicy.metrics` schema",
         kinds=(*PYTORCH, "paddlejob-v1"), obj="CustomResourceDefinition", phase="schema",
         path=(r"spec\.versions\[0\]\.schema\.openAPIV3Schema\.properties\.spec\.properties\."
               r"elasticPolicy\.properties\.metrics\..*\.default"),
         when=lambda go, ours: go == MISSING and ours == ""),
    # A replica type of 0 replicas: upstream's pod and Service slices are never shorter than
    # one (core.CalculatePodSliceSize), so it creates index 0, and each later reconcile of a
    # running job deletes it as beyond the replicas and creates it again (its Events, a
    # create that finds the Service not yet gone, the pod counted active, failed or succeeded
    # meanwhile).
    Rule("training-zero-replicas", readme="Zero replicas", kinds=TRAINING, case=".*zero-.*",
         obj="(Pod|Service)/.*-0", phase="presence", when=_go_only),
    Rule("training-zero-replicas-events", readme="Zero replicas", kinds=TRAINING,
         case=".*zero-.*", obj="events", phase="events",
         path=(r'\["(Normal Successful(Create|Delete)(Pod|Service): (Created|Deleted) '
               r'(pod|service): .*-0|Warning FailedCreate(Pod|Service): Error creating: '
               r'(pods|services) ".*-0" already exists)"\]'),
         when=_go_only),
    Rule("training-zero-replicas-active", readme="Zero replicas", kinds=TRAINING,
         case=".*zero-.*", obj=r"\w+Job/.*", phase="final",
         path=(r'status\.replicaStatuses\.\w+\.(active|failed|succeeded)'
               r'|metadata\.managedFields\[\d+\]\.fieldsV1\["f:status"\]\["f:replicaStatuses"\]'
               r'\["f:\w+"\]\["f:(active|failed|succeeded)"\]'),
         when=_go_only),
    # The TTL deletion of a finished job repeated from a stale cache: upstream's second delete
    # finds the job gone and records its failure (DeleteJob's event reasons are the kind's).
    Rule("training-ttl-delete-again", readme="Stale cache", kinds=TRAINING, case="ttl-.*",
         obj="events", phase="events",
         path=r'\["Warning Failed(DeleteJob|DeletePod): Error deleting: .*not found.*"\](\..*)?',
         when=_go_only),
    # A job with an empty map of replica specs: upstream's create handler sets Created on the
    # cached object itself, so its reconcile sees no change and never writes the status.
    Rule("training-no-replica-specs", readme="A job without replicas", kinds=TRAINING,
         case="(no|empty)-replica-specs", obj=r"\w+Job/.*", phase="final",
         path=r'status|metadata\.managedFields\[1\]', when=_ours_only),
    Rule("training-no-replica-specs-step", readme="A job without replicas", kinds=TRAINING,
         case="(no|empty)-replica-specs", obj="steps", when=lambda go, ours: ours == MISSING
         and isinstance(go, str) and "waiting for condition Created" in go),
    # A problem upstream admits and runs anyway (mpi_controller.engine.admitted): ours also
    # records one Warning ValidationError Event naming the field.
    Rule("pytorch-admitted-elastic", readme="`elasticPolicy.minReplicas` above `maxReplicas`",
         kinds=PYTORCH, case="admitted-elastic-.*", obj="events", phase="events",
         path=_ADMITTED, when=_ours_only),
    Rule("training-admitted-problem", readme="Admitted problems", kinds=TRAINING,
         case="admitted-.*|clean-pod-policy-unknown", obj="events", phase="events",
         path=_ADMITTED, when=_ours_only),
    # Negative replicas: upstream's TFJob reconcile panics (nothing made); ours reports them.
    Rule("tfjob-negative-replicas", readme="Negative `replicas`", kinds=("tfjob-v1",),
         case="admitted-negative-.*", obj="events", phase="events",
         path=r'\["Warning TFJobFailedValidation: .*replicas: Invalid value: -\d+: .*"\]'
              r'(\..*)?', when=_ours_only),
    Rule("training-managed-by-unknown", readme="`runPolicy.managedBy` other than",
         kinds=TRAINING, case="managed-by-unknown", obj="events", phase="events",
         path=r'\["Warning [A-Za-z]+FailedValidation: .*managedBy.*"\]', when=_ours_only),
)


def _stored_as_v2beta1(kind: str, version: str) -> tuple[Rule, ...]:
    """The rows "Owner references" and "Status writes" of a MPIJob version ours serves through
    conversion (``kind``, ``kubeflow.org/<version>``): the reference operator names its only
    version where ours names ``v2beta1``, the stored one, whose ``conditions`` are a list map
    keyed by ``type`` in the managed fields."""
    def renamed(go: Any, ours: Any) -> bool:
        return bool(go == f"kubeflow.org/{version}" and ours == "kubeflow.org/v2beta1")

    return (
        Rule(f"{kind}-owner-version", readme="Owner references", kinds=(kind,),
             phase="created|final", path=r"metadata\.ownerReferences\[0\]\.apiVersion",
             when=renamed),
        Rule(f"{kind}-status-version", readme="Status writes", kinds=(kind,),
             obj="MPIJob/.*", phase="final", path=r"metadata\.managedFields\[\d+\]\.apiVersion",
             when=renamed),
        Rule(f"{kind}-status-conditions-map", readme="Status writes", kinds=(kind,),
             obj="MPIJob/.*", phase="final",
             path=(r'metadata\.managedFields\[\d+\]\.fieldsV1\["f:status"\]\["f:conditions"\]'
                   r'\[("\."|"k:\{"type":"\w+"\}")\]'),
             when=_ours_only),
    )


_V1_EXIST = r"(ServiceAccount|LauncherRole|RoleBinding) is exist: \w+: \S+"
RULES += (
    # -- MPIJob v1 (docs/mpijob.md: "Differences from training-operator v1.9.2 (MPIJob v1)") --
    *_stored_as_v2beta1("mpijob-v1", "v1"),
    Rule("mpijob-v1-events-once", readme="Events of every reconcile", kinds=MPIJOB_V1,
         obj="events", phase="events",
         path=(r'\["(Normal (' + _V1_EXIST + r'|MPIJobRunning: MPIJob <ns>/\S+ is running)'
               r'|Warning MPIJobFailedValidation: MPIJob failed validation because .*)"\]\.count'),
         when=_count_fewer),
    Rule("mpijob-v1-role-without-workers", readme="Role of a job without workers",
         kinds=MPIJOB_V1, obj="Role/.*", phase="created|final", path=r"rules\[1\]",
         when=lambda go, ours: ours == MISSING and isinstance(go, dict)
         and go.get("resources") == ["pods/exec"] and not go.get("resourceNames")),
    # training-operator counted the replicas of a sync into a map its status did not share
    # while the cached job had no replicaStatuses yet, so a launcher running when it was seen
    # never gave Running (differential.case_context: running-unobserved-by-go).
    Rule("mpijob-v1-running-unobserved", readme="Replica counts of a job without any yet",
         kinds=MPIJOB_V1, context="running-unobserved-by-go", obj="MPIJob/.*", phase="final",
         path=(r'status\.conditions\[\d+\](\.(type|status|reason|message))?'
               r'|metadata\.managedFields\[\d+\]\.fieldsV1\["f:status"\]\["f:conditions"\]'
               r'\["k:\{"type":"Running"\}"\]')),
    Rule("mpijob-v1-crd-versions", readme="CRD `v1`", kinds=MPIJOB_V1,
         obj="CustomResourceDefinition", phase="schema",
         path=(r"spec\.conversion|spec\.versions\[0\]\.(storage|subresources\.scale)"
               r"|spec\.versions\[0\]\.schema\.openAPIV3Schema\.properties\.status\."
               r'properties\.conditions(\["x-kubernetes-list-(type|map-keys)"\]'
               r"|\.items\.properties\.status\.enum)")),
    Rule("mpijob-v1-created-again-counts", readme="Stale cache", kinds=MPIJOB_V1,
         context="created-again-by-go", obj="events", phase="events",
         path=(r'\["Normal (MPIJobRunning: launcher pod created success|SuccessfulDeletePod: '
               r'Deleted pod|SuccessfulCreatePod: Created worker pod): \S+"\]\.count'),
         when=lambda go, ours: isinstance(go, int) and isinstance(ours, int) and go > ours),
    # A reconcile that read the job or the launcher from a stale cache: the launcher's failure
    # recorded again before the Failed status was seen, the template warnings of a second
    # attempt to create the launcher the first had created.
    Rule("mpijob-v1-status-event-again", readme="Own status writes", kinds=MPIJOB_V1,
         obj="events", phase="events",
         path=r'\["(Warning MPIJobFailed: MPIJob <ns>/\S+ has failed|Normal mpijobsSucceeded: '
              r'MPIJob <ns>/\S+ successfully completed\.)"\]\.count', when=_count_fewer),
    Rule("mpijob-v1-template-warning-again", readme="Stale cache", kinds=MPIJOB_V1,
         obj="events", phase="events",
         path=r'\["Warning SettedPodTemplate(RestartPolicy|SchedulerName): .*"\]\.count',
         when=_count_fewer),
    # The reconcile that read a failed job from a stale cache rewrote discover_hosts.sh from
    # the workers then being deleted: none Running, the empty script.
    Rule("mpijob-v1-discover-hosts-after-failure", readme="`discover_hosts.sh` of a finished job",
         kinds=MPIJOB_V1, context="created-again-by-go", obj="ConfigMap/.*-config",
         phase="final", path=r'data\["discover_hosts\.sh"\]',
         when=lambda go, ours: isinstance(go, str) and go.strip() == "#!/bin/sh"
         and isinstance(ours, str) and "echo " in ours),
    Rule("mpijob-v1-created-again-events", readme="Stale cache", kinds=MPIJOB_V1,
         obj="events", phase="events",
         path=(r'\["Warning (MPIJobFailed: (launcher|worker) pod created failed: pods "\S+" '
               r'already exists|FailedCreatePod: Created worker pod: )"\]'),
         when=_go_only),
)


RULES += (
    # -- MPIJob v1alpha2 (docs/mpijob.md: "Differences from mpi-operator v0.2.3 (MPIJob
    # v1alpha2)") ---
    *_stored_as_v2beta1("mpijob-v1alpha2", "v1alpha2"),
    # Upstream's schemaless template leaves every list atomic in the job's managed fields;
    # ours lists the containers and volumes by name (the pod schema's list maps).
    Rule("mpijob-v1alpha2-template-list-maps", readme="CRD `v1alpha2`", kinds=MPIJOB_V1ALPHA2,
         obj="MPIJob/.*", phase="created|final",
         path=(r'metadata\.managedFields\[\d+\]\.fieldsV1\["f:spec"\]\["f:mpiReplicaSpecs"\]'
               r'\["f:(Launcher|Worker)"\]\["f:template"\]\["f:spec"\]'
               r'\["f:(containers|initContainers|volumes)"\]\[("\."|"k:\{"name":"[^"]*"\}")\]'),
         when=_ours_only),
    Rule("mpijob-v1alpha2-crd", readme="CRD `v1alpha2`", kinds=MPIJOB_V1ALPHA2,
         obj="CustomResourceDefinition", phase="schema",
         path=(r"spec\.conversion|spec\.versions\[0\]\.(storage|subresources\.scale"
               r"|additionalPrinterColumns)"
               r"|spec\.versions\[0\]\.schema\.openAPIV3Schema(\.properties\.\S+)?"
               r'(\["x-kubernetes-preserve-unknown-fields"\]|\.format)?')),
    Rule("mpijob-v1alpha2-reporting-component", readme="Event reporter", kinds=MPIJOB_V1ALPHA2,
         obj="events", phase="events", path=r'\[".*"\]\.reportingComponent',
         when=lambda go, ours: go == "" and ours == "mpi-job-controller"),
    # Whether a sync reads the launcher Job between its last failed pod and its `Failed`
    # condition decides whether `Restarting` replaces `Running` once more before `Failed`: the
    # same code path on both sides, either way round.
    Rule("mpijob-v1alpha2-last-restart", readme="Last launcher failure", kinds=MPIJOB_V1ALPHA2,
         obj="MPIJob/.*", phase="final",
         path=r"status\.conditions\[\d+\]\.(type|status|reason|message)",
         when=_running_or_restarting),
    Rule("mpijob-v1alpha2-succeeded-event-again", readme="`MPIJobSucceeded` event",
         kinds=MPIJOB_V1ALPHA2, obj="events", phase="events",
         path=r'\["Normal MPIJobSucceeded: MPIJob <ns>/\S+ successfully completed\."\]\.count',
         when=_count_fewer),
)


TRAINJOB = ("trainjob-v1alpha1",)
_RESOURCES_FAILED = r'\["Warning TrainJobResourcesCreationFailed: .*"\]'

RULES += (
    # -- TrainJob (docs/trainjob.md: "Differences from Trainer v2.3.0") ---
    # Ours embeds the Kubernetes types of its CRD from the API server's OpenAPI (defaults,
    # no atomic map type on ConfigMap and Secret references); Trainer's controller-gen
    # writes them without defaults, atomic, and stamps its version.
    Rule("trainjob-crd-openapi-defaults", readme="CRD embedded Kubernetes types",
         kinds=TRAINJOB, obj="CustomResourceDefinition", phase="schema",
         path=r"spec\.versions\[0\]\.schema\.openAPIV3Schema\..*\.default",
         when=lambda go, ours: go == MISSING and ours in ("", 0, "ReadWrite", "Shared")),
    Rule("trainjob-crd-map-type-atomic", readme="CRD embedded Kubernetes types", kinds=TRAINJOB,
         obj="CustomResourceDefinition", phase="schema",
         path=r'spec\.versions\[0\]\.schema\.openAPIV3Schema\..*\["x-kubernetes-map-type"\]',
         when=lambda go, ours: go == "atomic" and ours == MISSING),
    Rule("trainjob-crd-generator-annotation", readme="CRD embedded Kubernetes types",
         kinds=TRAINJOB, obj="CustomResourceDefinition", phase="schema",
         path=r'metadata\.annotations(\["controller-gen\.kubebuilder\.io/version"\])?'),
    # Trainer server-side applies every object as `trainer` and patches the TrainJob's status
    # as `trainer-controller-manager`; ours creates (and updates the hostfile) as
    # `mpi-operator` and applies as `trainer` only while suspended: only the managed fields
    # differ, never the objects' content.
    Rule("trainjob-field-manager", readme="Field manager", kinds=TRAINJOB,
         obj="(JobSet|ConfigMap|Secret|TrainJob|PodGroup)/.*", phase="created|final",
         path=r"metadata\.managedFields(\[\d+\](\..*)?)?"),
    # Trainer writes the snapshot by marshalling its typed runtime (managedFields kept, empty
    # structs as {}, Go's quoting); ours writes the runtime as the API server served it:
    # explained only where both parse to the same runtime.
    Rule("trainjob-snapshot-serialization", readme="Runtime snapshot serialization",
         kinds=TRAINJOB, obj="ConfigMap/.*-runtime-snapshot", phase="created|final",
         path=r"data\.runtime", when=_same_runtime),
    # Trainer applies the JobSet before it checks the deadline: a reconcile from a cache that
    # has not seen its own DeadlineExceeded yet applies the JobSet it has just deleted (a new
    # one, whose Job the JobSet controller cannot create while the old one is still there),
    # then deletes it again. The recorder then follows the new JobSet, which owns nothing.
    Rule("trainjob-stale-cache-presence", readme="Stale cache", kinds=TRAINJOB,
         context="created-again-by-go", obj="(Job|Pod|Service)/.*", phase="presence",
         when=lambda go, ours: go == MISSING and ours == "present"),
    Rule("trainjob-stale-cache-status", readme="Stale cache", kinds=TRAINJOB,
         context="created-again-by-go", obj="(Job|JobSet|TrainJob)/.*", phase="final",
         path=r"status(\.\w+)?|metadata\.managedFields\[\d+\]", when=_ours_only),
    # The same stale reconcile: Trainer's Pod, whose Job went with the first JobSet, was last
    # seen still holding the Job controller's tracking finalizer; ours held none by then.
    Rule("trainjob-stale-cache-pod-finalizer", readme="Stale cache", kinds=TRAINJOB,
         context="created-again-by-go", obj="Pod/.*", phase="final",
         path=(r'metadata\.finalizers|metadata\.managedFields\[\d+\]\.fieldsV1\["f:metadata"\]'
               r'\["f:finalizers"\]'),
         when=lambda go, ours: ours == MISSING and "batch.kubernetes.io/job-tracking" in str(go)),
    # Where a plain policy and XGBoost's both add env vars, Trainer runs them in a Go map's
    # order (the xgboost case: the TrainJob's env and DMLC_*): the same vars, in either order.
    Rule("trainjob-plugin-order", readme="plugin order", kinds=TRAINJOB, case="xgboost",
         obj="(JobSet|Job|Pod)/.*", phase="created|final",
         path=(r"(spec\.replicatedJobs\[\d+\]\.template\.spec\.template\.|"
               r"spec\.template\.)?spec\.containers\[\d+\]\.env\[\d+\](\.\w+)?"),
         when=lambda go, ours: _env_entry(go) and _env_entry(ours)),
    # Trainer records through events.k8s.io/v1: no `source`, and a repeated Event becomes a
    # series whose count is written every 30 minutes; ours through core/v1, each retry counted.
    Rule("trainjob-events-api-source", readme="Events API", kinds=TRAINJOB, obj="events",
         phase="events", path=_RESOURCES_FAILED + r"\.source",
         when=lambda go, ours: go is None and ours == "trainer-trainjob-controller"),
    Rule("trainjob-events-api-count", readme="Events API", kinds=TRAINJOB, obj="events",
         phase="events", path=_RESOURCES_FAILED + r"\.count",
         when=lambda go, ours: isinstance(go, int) and isinstance(ours, int)
         and go >= 1 and ours >= 1),
)


def rules_for(kind: str) -> list[Rule]:
    """The rules that explain differences of ``kind`` (a ``KindSpec`` name)."""
    return [r for r in RULES if kind in r.kinds]


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
