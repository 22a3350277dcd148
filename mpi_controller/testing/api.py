"""The in-memory API server's verbs: :class:`FakeApi`, a
:class:`~mpi_controller.runtime.kubeclient.KubeClient` (create, get, list, watch, update,
update_status, patch, delete, close) answering as kube-apiserver does (the contract:
:mod:`mpi_controller.testing`).
"""

from __future__ import annotations

import builtins
from collections.abc import Mapping
from typing import Any

from mpi_controller.kube.jsonvalue import Obj
from mpi_controller.kube.resources import Resource
from mpi_controller.runtime.codec import Codec, dumps, loads
from mpi_controller.runtime.kubeclient import KubeClient, PatchType
from mpi_controller.testing.controls import Controls
from mpi_controller.testing.errors import (
    FieldProblem,
    bad_request,
    expired,
    invalid,
    invalid_options,
    method_not_allowed,
    page_not_found,
    status_error,
    too_large,
)
from mpi_controller.testing.patches import (
    PatchFailed,
    has_strategic_directive,
    json_patch,
    merge_patch,
)
from mpi_controller.testing.store import (
    INCONSISTENT_CONTINUE,
    Request,
    ResourceType,
    Table,
    check_name,
    decode_continue,
    encode_continue,
    make_filter,
    meta_of,
    object_key,
    parse_rv,
    roundtrip,
    sort_key,
    wire,
)
from mpi_controller.testing.watch import FakeWatch

__all__ = ["FakeApi"]


class FakeApi(Controls):
    """An in-memory API server behind the :class:`KubeClient` verbs (the contract:
    :mod:`mpi_controller.testing`)."""

    # -- create -----------------------------------------------------------------------------

    async def create(self, resource: Resource, body: Mapping[str, Any], *,
                     namespace: str | None = None, field_manager: str | None = None,
                     result: bool = True) -> Obj:
        meta_in = body.get("metadata") or {}
        ns = namespace or meta_in.get("namespace")
        await self._admit(Request("create", resource, ns, str(meta_in.get("name") or ""),
                                  body=wire(body)))
        table = self._table(resource)
        if resource.namespaced and not ns:
            raise method_not_allowed()
        created = self._create(table, roundtrip(body), object_key(resource, ns, "")[0],
                               keep_status=False)
        return roundtrip(created) if result else {}

    # -- get and list -----------------------------------------------------------------------

    async def get(self, resource: Resource, name: str, *, namespace: str | None = None) -> Obj:
        check_name(resource, name)
        await self._admit(Request("get", resource, namespace, name))
        table = self._table(resource)
        return roundtrip(self._existing(table, (self._namespace(table, namespace), name)))

    async def list(self, resource: Resource, *, namespace: str | None = None,
                   label_selector: str | None = None, field_selector: str | None = None,
                   limit: int | None = None, continue_: str | None = None,
                   resource_version: str | None = None,
                   resource_version_match: str | None = None,
                   timeout_seconds: int | None = None, codec: Codec | None = None) -> Obj:
        params = {"label_selector": label_selector, "field_selector": field_selector,
                  "limit": limit, "continue_": continue_, "resource_version": resource_version,
                  "resource_version_match": resource_version_match}
        await self._admit(Request("list", resource, namespace, "",
                                  params={k: v for k, v in params.items() if v is not None}))
        table = self._table(resource)
        rv_text, match = resource_version or "", resource_version_match or ""
        self._validate_list_options(rv_text, match, continue_ or "")
        filter_ = make_filter(table.type, namespace, label_selector, field_selector)
        start = ""
        if continue_:
            if rv_text not in ("", "0"):
                raise bad_request("specifying resource version is not allowed when using"
                                   " continue")
            snapshot_rv, start = decode_continue(continue_)
            if snapshot_rv < 0:
                snapshot_rv = self._rv
            elif snapshot_rv < table.floor:
                fresh = encode_continue(-1, start)
                raise expired(INCONSISTENT_CONTINUE, metadata={"continue": fresh})
        else:
            snapshot_rv = self._list_rv(table, rv_text, match, limit)
        state = table.objects if snapshot_rv == self._rv else table.state_at(snapshot_rv)
        keys = sorted((k for k, o in state.items() if filter_.matches(k, o)), key=sort_key)
        if start:
            keys = [k for k in keys if sort_key(k) >= start]
        metadata: Obj = {"resourceVersion": str(snapshot_rv)}
        if limit and len(keys) > limit:
            start = sort_key(keys[limit - 1]) + "\x00"
            metadata["continue"] = encode_continue(snapshot_rv, start)
            if not filter_.selects:
                metadata["remainingItemCount"] = len(keys) - limit
            keys = keys[:limit]
        items = [self._list_item(table.type, state[k]) for k in keys]
        page = {"kind": f"{resource.kind}List", "apiVersion": resource.api_version,
                "metadata": metadata, "items": items}
        data = dumps(page)
        result: Obj = codec.decode_list(data) if codec is not None else loads(data)
        return result

    @staticmethod
    def _list_item(rtype: ResourceType, obj: Obj) -> Obj:
        if rtype.custom:
            return obj
        return {k: v for k, v in obj.items() if k not in ("kind", "apiVersion")}

    def _list_rv(self, table: Table, rv_text: str, match: str, limit: int | None) -> int:
        """The resourceVersion whose state a list (without continue) shows."""
        if rv_text in ("", "0"):
            return self._rv
        rv = parse_rv(rv_text)
        if rv > self._rv:
            raise too_large(rv, self._rv)
        exact = match == "Exact" or (not match and bool(limit))
        if not exact:
            return self._rv
        if rv < table.floor:
            raise expired("The resourceVersion for the provided list is too old.")
        return rv

    @staticmethod
    def _validate_list_options(rv: str, match: str, continue_: str) -> None:
        errors: builtins.list[FieldProblem] = []
        if match:
            if not rv:
                errors.append(FieldProblem("resourceVersionMatch", "Forbidden",
                                          "resourceVersionMatch is forbidden unless"
                                          " resourceVersion is provided"))
            if continue_:
                errors.append(FieldProblem("resourceVersionMatch", "Forbidden",
                                          "resourceVersionMatch is forbidden when continue is"
                                          " provided"))
            if match not in ("Exact", "NotOlderThan"):
                errors.append(FieldProblem("resourceVersionMatch", "Unsupported",
                                          'supported values: "Exact", "NotOlderThan", ""',
                                          match))
            if match == "Exact" and rv == "0":
                errors.append(FieldProblem("resourceVersionMatch", "Forbidden",
                                          'resourceVersionMatch "exact" is forbidden for'
                                          ' resourceVersion "0"'))
        if errors:
            raise invalid_options(errors)

    # -- watch ------------------------------------------------------------------------------

    def watch(self, resource: Resource, *, namespace: str | None = None,
              label_selector: str | None = None, field_selector: str | None = None,
              resource_version: str | None = None, allow_watch_bookmarks: bool = True,
              timeout_seconds: int | None = None, send_initial_events: bool | None = None,
              resource_version_match: str | None = None,
              codec: Codec | None = None) -> FakeWatch:
        params: Obj = {
            "namespace": namespace, "label_selector": label_selector,
            "field_selector": field_selector, "resource_version": resource_version,
            "allow_watch_bookmarks": allow_watch_bookmarks, "timeout_seconds": timeout_seconds,
            "send_initial_events": send_initial_events,
            "resource_version_match": resource_version_match,
        }
        return FakeWatch(self, resource, params, codec)

    async def _open(self, watch: FakeWatch) -> None:
        """Serve a watch's opening: validate, register, queue its first events."""
        p = watch.params
        await self._admit(Request("watch", watch.resource, p["namespace"], "", params={
            k: v for k, v in p.items() if v is not None and k != "namespace"}))
        table = self._table(watch.resource)
        rv_text, send_initial = p["resource_version"] or "", p["send_initial_events"]
        self._validate_watch_options(p["resource_version_match"] or "", send_initial)
        filter_ = make_filter(table.type, p["namespace"], p["label_selector"],
                               p["field_selector"])
        rv = parse_rv(rv_text) if rv_text else 0
        watch._start(filter_)
        if send_initial is not True and 0 < rv < table.floor:
            watch.send_error(expired(f"too old resource version: {rv} ({table.floor})"))
            return
        self._watches.append(watch)
        watch._arm(p["timeout_seconds"], p["allow_watch_bookmarks"])
        if send_initial is not True and rv > 0:
            for change in table.history:
                if change.rv > rv:
                    watch._offer(change)
            return
        if send_initial is True or send_initial is None:
            for key in sorted(table.objects, key=sort_key):
                obj = table.objects[key]
                if filter_.matches(key, obj):
                    watch._send("ADDED", obj)
        if send_initial is True and p["allow_watch_bookmarks"]:
            watch._bookmark(self._rv, initial_end=True)

    def _validate_watch_options(self, match: str, send_initial: bool | None) -> None:
        errors: builtins.list[FieldProblem] = []
        if send_initial is not None:
            if match != "NotOlderThan":
                errors.append(FieldProblem("resourceVersionMatch", "Forbidden",
                                          "sendInitialEvents requires setting"
                                          " resourceVersionMatch to NotOlderThan"))
            if not self.watch_list:
                errors.append(FieldProblem("sendInitialEvents", "Forbidden",
                                          "sendInitialEvents is forbidden for watch unless the"
                                          " WatchList feature gate is enabled"))
        if match:
            if send_initial is None:
                errors.append(FieldProblem("resourceVersionMatch", "Forbidden",
                                          "resourceVersionMatch is forbidden for watch unless"
                                          " sendInitialEvents is provided"))
            if match != "NotOlderThan":
                errors.append(FieldProblem("resourceVersionMatch", "Unsupported",
                                          'supported values: "NotOlderThan"', match))
        if errors:
            raise invalid_options(errors)

    def _forget(self, watch: FakeWatch) -> None:
        if watch in self._watches:
            self._watches.remove(watch)

    # -- update -------------------------------------------------------------------------------

    async def update(self, resource: Resource, body: Mapping[str, Any], *,
                     namespace: str | None = None, field_manager: str | None = None) -> Obj:
        return await self._put(resource, body, namespace, "")

    async def update_status(self, resource: Resource, body: Mapping[str, Any], *,
                            namespace: str | None = None,
                            field_manager: str | None = None, result: bool = True) -> Obj:
        updated = await self._put(resource, body, namespace, "status")
        return updated if result else {}

    async def _put(self, resource: Resource, body: Mapping[str, Any], namespace: str | None,
                   subresource: str) -> Obj:
        meta_in = body.get("metadata") or {}
        ns = namespace or meta_in.get("namespace")
        name = str(meta_in.get("name") or "")
        check_name(resource, name)
        await self._admit(Request("update", resource, ns, name, subresource, wire(body)))
        table = self._table(resource)
        if subresource and not table.type.status_subresource:
            raise page_not_found()
        key = (self._namespace(table, ns), name)
        incoming = roundtrip(body)
        if table.type.resource.namespaced and meta_of(incoming).get("namespace", key[0]) != key[0]:
            raise bad_request("the namespace of the provided object does not match the"
                               " namespace sent on the request")
        return roundtrip(self._update(table, key, incoming, subresource))


    # -- patch ----------------------------------------------------------------------------------

    async def patch(self, resource: Resource, name: str, body: Any, *,
                    namespace: str | None = None, patch_type: PatchType = "merge",
                    field_manager: str | None = None, force: bool | None = None,
                    subresource: str | None = None) -> Obj:
        check_name(resource, name)
        await self._admit(Request("patch", resource, namespace, name, subresource or "",
                                  wire(body)))
        if patch_type == "apply":
            raise NotImplementedError("FakeApi does not implement server-side apply")
        if subresource not in (None, "", "status"):
            raise NotImplementedError(f"FakeApi does not serve the {subresource} subresource")
        if patch_type == "strategic" and has_strategic_directive(body):
            raise NotImplementedError("FakeApi treats strategic merge patches as merge patches;"
                                      " $-directives are not implemented")
        table = self._table(resource)
        if subresource and not table.type.status_subresource:
            raise page_not_found()
        key = (self._namespace(table, namespace), name)
        existing = self._existing(table, key)
        try:
            patched = (json_patch(existing, wire(body)) if patch_type == "json"
                       else merge_patch(roundtrip(existing), wire(body)))
        except PatchFailed as exc:
            if exc.decoding:
                raise bad_request(str(exc)) from exc
            raise status_error(422, "Invalid", "the server rejected our request due to an error"
                               " in our request", {}) from exc
        if not isinstance(patched, dict):
            raise bad_request("the patched object is not a JSON object")
        return roundtrip(self._update(table, key, patched, subresource or ""))

    # -- delete ---------------------------------------------------------------------------------

    async def delete(self, resource: Resource, name: str, *, namespace: str | None = None,
                     propagation_policy: str | None = None,
                     preconditions: Mapping[str, str] | None = None,
                     grace_period_seconds: int | None = None, result: bool = True) -> Obj:
        deleted = await self._delete_checked(resource, name, namespace=namespace,
                                             propagation_policy=propagation_policy,
                                             preconditions=preconditions,
                                             grace_period_seconds=grace_period_seconds)
        return deleted if result else {}

    async def _delete_checked(self, resource: Resource, name: str, *, namespace: str | None,
                              propagation_policy: str | None,
                              preconditions: Mapping[str, str] | None,
                              grace_period_seconds: int | None) -> Obj:
        check_name(resource, name)
        await self._admit(Request("delete", resource, namespace, name))
        table = self._table(resource)
        key = (self._namespace(table, namespace), name)
        existing = self._existing(table, key)
        meta = existing["metadata"]
        for field_name, what in (("uid", "UID"), ("resourceVersion", "ResourceVersion")):
            wanted = (preconditions or {}).get(field_name)
            if wanted is not None and wanted != meta[field_name]:
                raise self._precondition_failed(table, key, what, wanted, meta[field_name])
        if propagation_policy not in (None, "Orphan", "Background", "Foreground"):
            raise invalid("DeleteOptions", "meta.k8s.io", "", [FieldProblem(
                "propagationPolicy", "Unsupported",
                'supported values: "Foreground", "Background", "Orphan", "nil"',
                propagation_policy)])
        return roundtrip(self._delete(table, key, propagation_policy))

    async def close(self) -> None:
        """End every watch; later requests fail like a closed connection."""
        self._closed = True
        for watch in list(self._watches):
            await watch.aclose()


def _as_kube_client(api: FakeApi) -> KubeClient:
    """Checked by mypy: :class:`FakeApi` satisfies the :class:`KubeClient` protocol."""
    return api
