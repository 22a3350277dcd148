"""Normalization of recorded objects before comparison (pure).

Two runs of the same job through two operators differ in values no operator chooses: uids,
resource versions, timestamps, the namespace, names the API server generates, the scheduler's
node choice, KWOK's IPs, and the SSH key material. :func:`normalize` replaces those by stable
placeholders and keeps every other field as it is, so that what remains differs only where
the operators behaved differently:

* a uid becomes ``<uid Kind/name>`` of the object it belongs to (so an owner reference to the
  wrong object still shows), wherever it appears (owner references, Job selectors and labels);
* a generated name (``metadata.generateName`` + suffix) becomes ``<generateName><n>``, numbered
  in creation order, in names and inside strings (event messages);
* the namespace becomes ``<ns>`` inside strings (hostfiles, messages), RFC 3339 timestamps
  ``<time>``; ``resourceVersion`` and managed-fields times are dropped (their entries ordered by
  manager);
* node names and IPs become ``<node>`` / ``<ip>`` (also inside strings and map keys, such as
  the managed fields' ``k:{"ip":...}``), the token volume ``kube-api-access-<gen>``;
* ``ssh-privatekey`` / ``ssh-publickey`` become a description of the key (type, curve, whether
  the public key matches the private one);
* the JobSet controller's ``jobset.sigs.k8s.io/job-key`` (the SHA-1 of ``<namespace>/<Job>``,
  on its Jobs and their pods) becomes ``<job-key Job/<name>>``;
* a Service's ``spec.ports`` are ordered by name and port: training-operator lists them in Go
  map order, random from one run to the next (docs/training-kinds.md, TFJob differences,
  "Service ports").

:func:`summarize_events` turns the Events of one involved object into a map from
``"<type> <reason>: <message>"`` to its total count and source, the shape Events are compared in.
"""

from __future__ import annotations

import base64
import hashlib
import re
from collections.abc import Iterable
from dataclasses import dataclass, field
from typing import Any

Obj = dict[str, Any]

IPV4 = re.compile(r"\b\d{1,3}\.\d{1,3}\.\d{1,3}\.\d{1,3}\b")
# The ServiceAccount admission plugin names the projected token volume with a random suffix.
TOKEN_VOLUME = re.compile(r"\bkube-api-access-[a-z0-9]{5}\b")
TIME = re.compile(r"^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d(\.\d+)?(Z|[+-]\d\d:\d\d)$")
PLACEHOLDERS = {"nodeName": "<node>", "hostIP": "<ip>", "podIP": "<ip>", "ip": "<ip>",
                "hostname": "<node>"}
DROPPED = {"resourceVersion"}


@dataclass
class Context:
    """What :func:`normalize` replaces: built once from every object of one run."""

    namespace: str
    uids: dict[str, str] = field(default_factory=dict)
    names: dict[str, str] = field(default_factory=dict)
    job_keys: dict[str, str] = field(default_factory=dict)

    def text(self, value: str) -> str:
        if value in self.uids:
            return self.uids[value]
        if value in self.job_keys:
            return self.job_keys[value]
        if TIME.match(value):
            return "<time>"
        if value in self.names:
            return self.names[value]
        for generated, stable in self.names.items():
            if generated in value:
                value = value.replace(generated, stable)
        for uid, stable in self.uids.items():
            if uid in value:
                value = value.replace(uid, stable)
        if self.namespace and self.namespace in value:
            value = value.replace(self.namespace, "<ns>")
        value = TOKEN_VOLUME.sub("kube-api-access-<gen>", value)
        return IPV4.sub("<ip>", value)


def build_context(namespace: str, objects: Iterable[Obj]) -> Context:
    """Placeholders for the uids and generated names among ``objects`` (any order)."""
    ctx = Context(namespace)
    objs = list(objects)
    generated: dict[str, dict[str, str]] = {}
    for obj in objs:
        meta = obj.get("metadata") or {}
        prefix = meta.get("generateName")
        if prefix and meta.get("name", "").startswith(prefix):
            generated.setdefault(prefix, {})[meta["name"]] = meta.get("creationTimestamp", "")
    for prefix, items in generated.items():
        ordered = sorted((stamp, name) for name, stamp in items.items())
        for i, (_, name) in enumerate(ordered, start=1):
            ctx.names[name] = f"{prefix}<{i}>"
    for obj in objs:
        meta = obj.get("metadata") or {}
        if obj.get("kind") == "Job" and meta.get("name"):
            ctx.job_keys[job_key(namespace, meta["name"])] = f"<job-key Job/{meta['name']}>"
        if meta.get("uid"):
            name = ctx.names.get(meta.get("name", ""), meta.get("name", ""))
            ctx.uids[meta["uid"]] = f"<uid {obj.get('kind', '?')}/{name}>"
    return ctx


def job_key(namespace: str, job: str) -> str:
    """The JobSet controller's key of Job ``job`` (``jobHashKey``: SHA-1 of ``ns/name``)."""
    return hashlib.sha1(f"{namespace}/{job}".encode()).hexdigest()


def normalize(obj: Obj, ctx: Context) -> Obj:
    """A normalized deep copy of ``obj`` (see the module docstring)."""
    out = _value(obj, ctx, key="")
    assert isinstance(out, dict)
    meta = out.get("metadata") or {}
    if meta.get("managedFields"):
        # The API server orders entries by time (whole seconds), then by manager: without the
        # times, order them by manager so that same-second ties do not decide.
        for entry in meta["managedFields"]:
            entry.pop("time", None)
        meta["managedFields"].sort(key=lambda e: (str(e.get("manager")), str(e.get("operation")),
                                                  str(e.get("subresource"))))
    if out.get("kind") == "Secret" and isinstance(out.get("data"), dict):
        out["data"] = describe_key_material(obj.get("data") or {}, out["data"])
    ports = (out.get("spec") or {}).get("ports") if out.get("kind") == "Service" else None
    if isinstance(ports, list) and all(isinstance(p, dict) for p in ports):
        ports.sort(key=lambda p: (str(p.get("name", "")), str(p.get("port", ""))))
    return out


def _value(value: Any, ctx: Context, key: str) -> Any:
    if isinstance(value, dict):  # keys too: managed fields name list items by uid or IP
        return {ctx.text(k): _value(v, ctx, k) for k, v in value.items() if k not in DROPPED}
    if isinstance(value, list):
        return [_value(v, ctx, key) for v in value]
    if isinstance(value, str):
        if key in PLACEHOLDERS and value:
            return PLACEHOLDERS[key]
        return ctx.text(value)
    return value


def describe_key_material(raw: dict[str, str], data: dict[str, Any]) -> dict[str, Any]:
    """``data`` with the SSH key entries of ``raw`` (base64, as in a Secret) described."""
    out = dict(data)
    private = _b64(raw.get("ssh-privatekey"))
    public = _b64(raw.get("ssh-publickey"))
    if private is not None:
        out["ssh-privatekey"] = _describe_private(private)
    if public is not None:
        out["ssh-publickey"] = _describe_public(public, private)
    return out


def _b64(value: str | None) -> bytes | None:
    if value is None:
        return None
    try:
        return base64.b64decode(value)
    except ValueError:
        return value.encode()


def _private_key(pem: bytes) -> Any:
    from cryptography.hazmat.primitives import serialization

    try:
        return serialization.load_pem_private_key(pem, password=None)
    except (ValueError, TypeError):
        return None


def _describe_private(pem: bytes) -> str:
    first = pem.split(b"\n", 1)[0].decode(errors="replace")
    key = _private_key(pem)
    if key is None:
        return f"<unparsable private key: {first}>"
    from cryptography.hazmat.primitives.asymmetric import ec, rsa

    if isinstance(key, ec.EllipticCurvePrivateKey):
        algorithm = f"EC {key.curve.name}"
    elif isinstance(key, rsa.RSAPrivateKey):
        algorithm = f"RSA {key.key_size}"
    else:
        algorithm = type(key).__name__
    return f"<{first} {algorithm}>"


def _describe_public(line: bytes, private_pem: bytes | None) -> str:
    from cryptography.hazmat.primitives import serialization

    text = line.decode(errors="replace")
    kind = text.split(" ", 1)[0]
    ending = "ends with a newline" if text.endswith("\n") else "no trailing newline"
    key = _private_key(private_pem) if private_pem else None
    if key is None:
        return f"<{kind} public key, {ending}>"
    mine = key.public_key().public_bytes(serialization.Encoding.OpenSSH,
                                         serialization.PublicFormat.OpenSSH)
    matches = "matches" if text.strip().split(" ")[:2] == mine.decode().split(" ")[:2] \
        else "does NOT match"
    return f"<{kind} public key, {matches} ssh-privatekey, {ending}>"


def summarize_events(events: Iterable[Obj], ctx: Context) -> dict[str, Obj]:
    """``"<type> <reason>: <message>"`` -> total count and reporting source, over ``events``
    (normalized messages; an Event's ``count`` or its ``series.count`` adds to the total)."""
    out: dict[str, Obj] = {}
    for ev in events:
        key = f"{ev.get('type')} {ev.get('reason')}: {ctx.text(ev.get('message') or '')}"
        count = ev.get("count") or (ev.get("series") or {}).get("count") or 1
        entry = out.setdefault(key, {
            "count": 0,
            "source": (ev.get("source") or {}).get("component"),
            "reportingComponent": ev.get("reportingComponent"),
            "involvedObject": {k: ctx.text(str(v)) for k, v in
                               (ev.get("involvedObject") or {}).items()
                               if k in ("apiVersion", "kind", "name", "namespace")},
        })
        entry["count"] += count
    return dict(sorted(out.items()))
