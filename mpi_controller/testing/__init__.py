"""An in-memory Kubernetes API server for tests, like controller-runtime's ``client/fake``:
:class:`FakeApi` is a :class:`~mpi_controller.runtime.kubeclient.KubeClient`, so a controller
built on :mod:`mpi_controller.runtime` (this project's, or another one's) runs on it unchanged,
with no cluster. ``docs/testing.md`` shows it in use.

The real runtime (reflectors, informers with streaming or paged lists, the event recorder,
leader election, controllers) runs on it unchanged, with a
:class:`~mpi_controller.runtime.clock.ManualClock`. What it answers follows kube-apiserver
v1.36 (``k8s.io/apiserver`` registry, storage and watch cache; the ``metav1.Status`` shapes of
``k8s.io/apimachinery/pkg/api/errors``).

Contract:

* **Resources** must be known: the built-in ones of ``kube.resources`` (pods, services,
  configmaps, secrets, events, namespaces, leases, jobs, priorityclasses) are, anything else is
  added with :meth:`FakeApi.register` (a CRD: ``custom=True`` by default). A request for an
  unknown resource fails as the server's router does: 404 with the text
  ``404 page not found``. Objects are keyed by (group, version, plural, namespace, name).
* **Every request** is a fresh JSON round trip: bodies are encoded and decoded, never shared
  with the store. Map entries whose value is ``null`` are dropped on write (typed fields are
  ``omitempty``; structural CRDs prune them). Each request first yields to the event loop once,
  is appended to :attr:`FakeApi.requests` (:class:`Request`), then passes the fault rules
  (:meth:`FakeApi.fail`, :meth:`FakeApi.delay`) and :attr:`FakeApi.interceptor`, which may
  raise an :class:`ApiError`, return an awaitable (awaited first: a delay on the test's clock)
  or return ``None`` (go on).
* ``result=False`` on ``create``, ``update_status`` and ``delete`` makes the write as usual and
  answers ``{}``, as :class:`~mpi_controller.runtime.rest.RestClient` does (a caller that
  asked for no answer and reads one fails its tests).
* **resourceVersion** is one global counter (a decimal string) bumped by every write.
  ``uid`` (random, from ``seed``), ``creationTimestamp`` (``wall``, default 2024-01-01 plus the
  clock's time) are set on create; ``generateName`` gets 5 characters from the server's
  alphabet (8 attempts, then 409). ``metadata.generation`` is 1 on create and grows on any
  change outside ``metadata`` and ``status`` for resources with ``generation`` (custom ones,
  and built-ins that have it), and when deletion starts. An update that changes nothing is not
  written (same resourceVersion, no event), as in the API server.
* **Errors** are :class:`ApiError` built from the server's ``Status`` bodies: 404 NotFound
  ``pods "a" not found``; 409 AlreadyExists; 409 Conflict ``Operation cannot be fulfilled on
  <plural.group> "<name>": the object has been modified; ...`` for a stale resourceVersion,
  and a precondition text (``StorageError: invalid object ...``) for a uid/resourceVersion
  precondition; 410 Expired for a list, continue token or watch from a compacted
  resourceVersion; 422 Invalid for a missing or malformed name or bad list/watch options; 400
  for bad selectors or tokens; 500 for a resourceVersion on create; 504 for a resourceVersion
  from the future. :func:`not_found`, :func:`conflict` and friends build them for fault rules.
* **Status subresource** (``status_subresource=True``): create drops ``status``, update keeps
  the stored ``status``, :meth:`~FakeApi.update_status` (and patch with
  ``subresource="status"``) changes only ``status``. Without it, ``/status`` is 404.
* **Delete**: preconditions (uid, resourceVersion) give 409. An object with finalizers (after
  the propagation policy added ``orphan`` or ``foregroundDeletion``; ``jobs`` default to
  Orphan as batch/v1 does) gets ``deletionTimestamp`` and ``deletionGracePeriodSeconds: 0``
  and stays until an update removes its last finalizer. Otherwise it is removed at once: the
  answer is the object for pods (``ReturnDeletedObject``), else a ``Success`` Status. There is
  no garbage collector and no graceful pod deletion (pods go at once, like unscheduled ones):
  :meth:`FakeApi.collect_garbage` does the collector's work when a test calls it.
* **Patch**: ``merge`` (RFC 7386), ``json`` (RFC 6902), ``strategic`` treated as merge (lists
  are replaced, not merged by key; ``$patch``-style directives raise NotImplementedError),
  ``apply`` raises NotImplementedError. A patched ``metadata.resourceVersion`` is a
  precondition.
* **List**: label selectors (``=``, ``==``, ``!=``, ``in``, ``notin``, ``key``, ``!key``),
  field selectors (``metadata.name``, ``metadata.namespace`` and the resource's selectable
  fields; others: 400 ``field label not supported``), ``limit``/``continue`` (the server's
  token format; every page is from the first page's snapshot; ``remainingItemCount`` when
  nothing is filtered). ``resourceVersion`` ``""``/``"0"``/``NotOlderThan``: the current
  state; ``Exact``, or an RV with ``limit`` and no match: the state at that RV (410 when
  compacted). Items are decoded by ``codec`` exactly as ``RestClient`` does
  (``codec.decode_list`` of the encoded page); built-in lists carry no per-item kind.
* **Watch** (opened on first iteration, like ``RestClient``): from an RV, the stored history
  after it (410 ``too old resource version: R (F)`` as an ``ERROR`` event when compacted); from
  ``""``/``"0"`` synthetic ``ADDED`` events of the current state first; with
  ``sendInitialEvents=true`` (needs ``resourceVersionMatch=NotOlderThan``) the current state
  then a ``BOOKMARK`` annotated ``k8s.io/initial-events-end: "true"`` at the current RV.
  Selectors are applied to the old and new object of each change: an object that stops
  matching is sent as ``DELETED`` (its previous content at the new RV), one that starts
  matching as ``ADDED``. ``timeoutSeconds`` ends the watch on the clock; a watch that allows
  bookmarks gets one every ``bookmark_interval`` (60 s) and 2 s before its timeout. Events
  are decoded by ``codec.decode_event``. Test controls: :meth:`FakeApi.watches`,
  :meth:`FakeWatch.end`, :meth:`FakeWatch.fail` (raise from the iteration),
  :meth:`FakeWatch.send_error` (an ``ERROR`` event, then the end), :meth:`FakeApi.bookmark`,
  :meth:`FakeApi.compact`.
  ``watch_list=False`` makes ``sendInitialEvents`` a 422, as a server without WatchList.
* **History** is kept per resource, ``history_limit`` changes deep; :meth:`FakeApi.compact`
  drops it, so watches, exact lists and continue tokens from before that point get 410.
* **Test-side access** (not requests: not logged, not intercepted, but they write and notify
  watches like any change): :meth:`~FakeApi.add`, :meth:`~FakeApi.modify`,
  :meth:`~FakeApi.remove`, :meth:`~FakeApi.stored`, :meth:`~FakeApi.objects`.
* Not modelled: admission (namespaces need not exist), managedFields, server-side apply,
  defaulting and schema validation beyond names, graceful pod deletion, per-resource quotas.
"""

from mpi_controller.testing.api import FakeApi
from mpi_controller.testing.errors import (
    OPTIMISTIC_LOCK_MESSAGE,
    already_exists,
    conflict,
    connection_error,
    expired,
    internal_error,
    not_found,
    status_error,
    too_many_requests,
)
from mpi_controller.testing.patches import json_patch, merge_patch
from mpi_controller.testing.store import BUILTIN_TYPES, INITIAL_EVENTS_END, Request, ResourceType
from mpi_controller.testing.watch import FakeWatch

__all__ = [
    "BUILTIN_TYPES",
    "INITIAL_EVENTS_END",
    "OPTIMISTIC_LOCK_MESSAGE",
    "FakeApi",
    "FakeWatch",
    "Request",
    "ResourceType",
    "already_exists",
    "conflict",
    "connection_error",
    "expired",
    "internal_error",
    "json_patch",
    "merge_patch",
    "not_found",
    "status_error",
    "too_many_requests",
]
