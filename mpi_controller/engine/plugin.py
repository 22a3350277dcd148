"""A job kind's one description of itself: :class:`KindPlugin`.

Each kind package has a ``plugin`` module whose ``PLUGIN`` says everything the rest of the
program needs to know of the kind, and :mod:`mpi_controller.kinds` lists them, one line each.
From it:

* ``mpi-controller run`` (:mod:`mpi_controller.app`, :mod:`mpi_controller.options`): the
  ``--enable-scheme`` value, the CRD that must be installed, the kind's own flags and how to
  build it on the engine;
* ``mpi-controller render`` (:mod:`mpi_controller.render`): defaults, checks and the objects of
  a job (:class:`Renderer`);
* the webhooks (:mod:`mpi_controller.webhook`): the validating admission of the kind
  (:class:`Admission`), and a conversion where the CRD serves several versions;
* the CRD (``hack/gen-crd.py``), the ClusterRole and the webhook configuration
  (``hack/gen-manifests.py``), generated;
* the test fixtures and the demo: the CRD and the examples.

Everything here is data and pure functions, except :attr:`KindPlugin.build`, which makes the
kind's :class:`~mpi_controller.engine.kind.JobKind` from the informers of one process.
"""

from __future__ import annotations

from collections.abc import Awaitable, Callable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

from mpi_controller.engine.kind import JobKind
from mpi_controller.engine.training.framework import TrainingOptions
from mpi_controller.kube.crd import CRD
from mpi_controller.kube.fielderrors import FieldError
from mpi_controller.kube.jsonvalue import Obj
from mpi_controller.kube.resources import Resource
from mpi_controller.runtime.informer import InformerFactory, SharedIndexInformer

__all__ = [
    "Admission",
    "Converter",
    "Defaulter",
    "Defaulting",
    "FlagSet",
    "Judge",
    "KindContext",
    "KindPlugin",
    "LookupJudge",
    "RbacRule",
    "RenderOptions",
    "Renderer",
]

Job = Mapping[str, Any]


@dataclass(frozen=True)
class KindContext:
    """What :attr:`KindPlugin.build` gets: one process's informer factory and shared pod
    informer, the namespace it serves (``""``: all), the settings every training kind shares
    (``--gang-scheduler-name``, ``--cluster-domain``, ``--worker-create-concurrency``) and the
    kind's own options (:attr:`KindPlugin.flags`; ``None`` for a kind without flags)."""

    factory: InformerFactory
    pods: SharedIndexInformer
    namespace: str
    training: TrainingOptions
    options: object = None


@dataclass(frozen=True)
class FlagSet:
    """The ``mpi-controller run`` flags of one kind: ``add`` puts them on the parser,
    ``parse`` turns the parsed arguments into the kind's options object (raising ValueError
    naming the flag on a bad value), and ``default`` is that object when no flag was parsed
    (callers that build options in code)."""

    add: Callable[[Any], None]
    parse: Callable[[Any], object]
    default: Callable[[], object]


Judge = Callable[[Job, Job | None], tuple[Sequence[str], Sequence[str]]]
"""``(object, old object or None) -> (errors, warnings)``, as messages; must not raise."""

LookupJudge = Callable[[Callable[[Resource, str, str | None], Awaitable[Obj]], Job, Job | None],
                       Awaitable[tuple[Sequence[str], Sequence[str]]]]
"""``await judge(lookup, object, old object or None) -> (errors, warnings)``: a judge that
reads other objects through ``lookup(resource, name, namespace)`` (which raises
:class:`~mpi_controller.runtime.errors.ApiError`); must not raise."""


@dataclass(frozen=True)
class Admission:
    """One validating admission webhook of the kind: ``judge`` (pure) answers for objects of
    ``version`` (errors refuse the request; warnings are returned either way), or
    ``lookup_judge`` where the answer needs other objects of the API (exactly one of the two).
    ``name`` and ``path`` are the webhook's in the ValidatingWebhookConfiguration;
    ``failure_policy`` what the API server does while no replica answers (``Fail`` or
    ``Ignore``). ``kind``, ``resource`` and ``scope`` default to the kind's own (its jobs,
    namespaced); a kind with several CRDs (TrainJob and its runtimes) names the others."""

    name: str
    path: str
    version: str
    judge: Judge | None = None
    failure_policy: str = "Fail"
    lookup_judge: LookupJudge | None = None
    kind: str = ""
    resource: str = ""
    scope: str = "Namespaced"

    def __post_init__(self) -> None:
        if (self.judge is None) == (self.lookup_judge is None):
            raise ValueError(f"admission {self.name}: give judge or lookup_judge, not both")


Defaulter = Callable[[Job, Job | None, str], Obj]
"""``(object, old object or None, now) -> the object defaulted`` (``now`` as an RFC 3339
time); returns a new object, never changes its arguments, must not raise."""


@dataclass(frozen=True)
class Defaulting:
    """One mutating admission webhook of the kind (Trainer's TrainJob defaulter): ``default``
    answers for objects of ``version`` on create and update; the API server applies the
    difference. ``name`` and ``path`` are the webhook's in the MutatingWebhookConfiguration;
    ``kind``, ``resource`` and ``scope`` default to the kind's own. Served only while the kind
    is enabled (its overlay installs the configuration)."""

    name: str
    path: str
    version: str
    default: Defaulter
    failure_policy: str = "Fail"
    kind: str = ""
    resource: str = ""
    scope: str = "Namespaced"


Converter = Callable[[Job, str], Obj]


@dataclass(frozen=True)
class RenderOptions:
    """The ``mpi-controller render`` flags every kind reads."""

    cluster_domain: str = ""
    gang_scheduling: str = ""
    running_workers: int = 0
    namespace: str = "default"
    priority_classes: Mapping[str, int] = field(default_factory=dict)


@dataclass(frozen=True)
class Renderer:
    """How ``mpi-controller render`` shows a job of the kind: ``prepare`` gives the defaulted
    copy, ``check`` its validation errors and warnings (printed, not fatal), ``objects`` what
    the controller would create for a valid job, in creation order."""

    prepare: Callable[[Job, RenderOptions], Obj]
    check: Callable[[Obj, RenderOptions], tuple[list[FieldError], list[str]]]
    objects: Callable[[Obj, RenderOptions], list[Obj]]


@dataclass(frozen=True)
class RbacRule:
    """A ClusterRole rule the kind needs beyond every kind's own (its jobs, their status and
    finalizers, pods, Services, Events, PodGroups), with why (the generated ClusterRole says
    it)."""

    api_group: str
    resources: tuple[str, ...]
    verbs: tuple[str, ...]
    why: str


@dataclass(frozen=True)
class KindPlugin:
    """A job kind (module doc). ``api_versions`` are the versions its CRD serves, the first the
    one the controller reads; ``operator_names`` the values of the pods'
    ``training.kubeflow.org/operator-name`` label (the shared pod informer selects on them);
    ``component`` the source of its Events; ``children`` the resources beyond pods, Services,
    Events and PodGroups it writes (the in-memory API of the unit tests serves them);
    ``examples`` the repository's manifests of the kind (``examples/...``)."""

    scheme: str
    kind: str
    group: str
    api_versions: tuple[str, ...]
    plural: str
    crd: CRD
    operator_names: tuple[str, ...]
    component: str
    build: Callable[[KindContext], JobKind]
    admission: tuple[Admission, ...] = ()
    defaulting: tuple[Defaulting, ...] = ()
    convert: Converter | None = None
    """Converts an object to another of ``api_versions`` (the CRD's conversion webhook);
    raises ValueError naming the problem. It does not change the object it is given; what
    it returns may share values with that object, so a caller that changes either afterwards
    copies first."""
    renderer: Renderer | None = None
    flags: FlagSet | None = None
    rbac: tuple[RbacRule, ...] = ()
    children: tuple[Resource, ...] = ()
    examples: tuple[str, ...] = ()
    framework_name: str = ""
    """The ``framework`` label of the ``training_operator_jobs_*`` metrics (training kinds)."""
    replica_specs: str = ""
    """Where the replica specs are under ``spec`` (``tfReplicaSpecs``; training kinds)."""
    extra_crds: tuple[CRD, ...] = ()
    """More CRDs of the kind's API, installed and generated beside :attr:`crd` (TrainJob's
    runtimes)."""
    explicit: bool = False
    """Run only when ``--enable-scheme`` names it, never because its CRD is installed (a kind
    whose CRD another operator may serve: TrainJob, Kubeflow Trainer's)."""
    requires: tuple[Resource, ...] = ()
    """Resources of other projects the kind needs served (the JobSet CRD for TrainJob):
    ``run`` exits saying which is missing."""
    events_bucket_of_their_own: bool = False
    """Its Events pass a token bucket of their own, not the one of its pod and Service writes:
    the Go operator records them through a clientset of its own (controller-runtime's event
    recorder in training-operator and Kubeflow Trainer; mpi-operator records through its
    shared one)."""

    @property
    def crd_name(self) -> str:
        return f"{self.plural}.{self.group}"

    @property
    def crd_dir(self) -> str:
        """Where the kind's CRD files are, relative to ``deploy/``: ``crd`` (the default install),
        or ``crd/<scheme>`` for an :attr:`explicit` kind, whose CRDs only its overlay
        (``deploy/overlays/<scheme>``) installs."""
        return f"crd/{self.scheme}" if self.explicit else "crd"

    @property
    def version(self) -> str:
        """The version the controller reads and writes."""
        return self.api_versions[0]

    @property
    def resource(self) -> Resource:
        return Resource(self.group, self.version, self.plural, True, self.kind)

    def default_options(self) -> object:
        return self.flags.default() if self.flags is not None else None
