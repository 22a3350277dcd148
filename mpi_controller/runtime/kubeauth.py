"""``kubernetes_asyncio``'s configuration and authentication without its generated API.

The controller talks to the API server with plain dicts (:mod:`mpi_controller.runtime.rest`);
what it takes from ``kubernetes_asyncio`` is the part that is hard to get right: kubeconfig
loading (merged files, client certificates, CA data, ``exec`` credential plugins, OIDC and GCP
auth providers, token refresh) and the in-cluster service account (its token re-read as it
rotates). Importing ``kubernetes_asyncio.client`` as a package runs its ``__init__``, which
imports every generated model and API class: ~34 MB of RSS and ~0.3 s of CPU that an idle
controller would carry for nothing (``docs/benchmarks.md``, "Memory").

Contract:

* :func:`kube_auth` returns the library's own ``Configuration``, ``RESTClientObject``,
  ``load_kube_config``, ``load_incluster_config`` and ``ConfigException``; no module of
  ``kubernetes_asyncio.client.api`` or ``kubernetes_asyncio.client.models`` is imported.
* When ``kubernetes_asyncio.client`` is already imported (another part of the process uses the
  generated API), those are taken from it. Otherwise the few source modules needed are loaded
  under the package's names with its two package ``__init__`` files left out, and
  ``sys.modules`` is then put back exactly as it was: a later ``import
  kubernetes_asyncio.client`` anywhere in the process loads the whole package as usual, with
  classes of its own (our configuration objects are never passed to it).
* ``urllib3`` (~1.2 MB of RSS with its 30 modules), which ``client/configuration.py`` imports
  for its basic-auth helper only, and ``aiohttp`` (~26 MB of RSS and ~0.3 s of CPU with
  ``multidict``, ``yarl`` and the rest), which ``client/rest.py`` and ``config/openid.py`` use
  only inside functions (the aiohttp session, an OIDC token refresh), are not imported by
  :func:`kube_auth` when nothing imported them before: those modules get a stand-in that
  imports the real one on first use of one of its attributes. ``config/openid.py`` is loaded
  with its annotations left unevaluated (they name aiohttp classes).
* :func:`ssl_context` is the ``SSLContext`` of a configuration, made exactly as
  ``RESTClientObject`` makes its aiohttp session's: CA file (else the system's CAs), client
  certificate and key, ``verify_ssl`` and ``disable_strict_ssl_verification``.
* :class:`ApiSession` stands where ``kubernetes_asyncio``'s ``ApiClient`` stood for
  :class:`~mpi_controller.runtime.rest.RestClient`: a ``configuration``; what the lean
  transport needs of it (:attr:`~ApiSession.ssl_context`, made on first use;
  :attr:`~ApiSession.server_hostname`; :attr:`~ApiSession.proxy`); the aiohttp session
  (``rest_client``, a ``RESTClientObject``), made only when first asked for (a proxy, or the
  lean pools disabled), with :attr:`~ApiSession.proxy` and no per-request environment lookups;
  and :meth:`ApiSession.close`. Authentication headers are not the session's business: the
  configuration's ``auth_settings()`` gives them (token refresh hooks included).
"""

from __future__ import annotations
import __future__

import functools
import importlib
import importlib.machinery
import importlib.util
import os
import ssl
import sys
import threading
import types
from dataclasses import dataclass
from typing import Any

__all__ = ["ApiSession", "KubeAuth", "kube_auth", "ssl_context"]

_PACKAGE = "kubernetes_asyncio"
# Leaf modules first: each only imports those before it (and the two packages).
_MODULES = ("client.exceptions", "client.configuration", "client.rest",
            "config.config_exception", "config.dateutil", "config.exec_provider",
            "config.google_auth", "config.openid", "config.kube_config",
            "config.incluster_config")


_DEFERRED = ("urllib3", "aiohttp")
"""Modules the loaded source modules import but use only in functions the controller rarely
calls (see the module doc)."""
_POSTPONED_ANNOTATIONS = ("config.openid",)
"""Source modules whose annotations name a deferred module's classes: loaded as if they began
with ``from __future__ import annotations``, so that loading them touches no attribute of it."""


class _Deferred(types.ModuleType):
    """Stands for the module of its name: the real one is imported on first attribute use
    (also while the source modules load, should one of them use it there: the saving is lost
    then, nothing else)."""

    def __getattr__(self, attr: str) -> Any:
        if sys.modules.get(self.__name__) is self:
            del sys.modules[self.__name__]
        return getattr(importlib.import_module(self.__name__), attr)


@dataclass(frozen=True)
class KubeAuth:
    """What the controller uses of ``kubernetes_asyncio`` (see the module docstring)."""

    Configuration: Any
    RESTClientObject: Any
    load_kube_config: Any
    load_incluster_config: Any
    ConfigException: type[Exception]


def ssl_context(configuration: Any) -> ssl.SSLContext:
    """The ``SSLContext`` of ``configuration``, as ``RESTClientObject`` makes it."""
    context = ssl.create_default_context(cafile=configuration.ssl_ca_cert)
    if configuration.cert_file:
        context.load_cert_chain(configuration.cert_file, keyfile=configuration.key_file)
    if not configuration.verify_ssl:
        context.check_hostname = False
        context.verify_mode = ssl.CERT_NONE
    if configuration.disable_strict_ssl_verification:
        context.verify_flags &= ~ssl.VERIFY_X509_STRICT
    return context


class ApiSession:
    """A configuration, its TLS settings, and the aiohttp session made from it on first use
    (see the module docstring)."""

    def __init__(self, configuration: Any) -> None:
        self.configuration = configuration
        self.proxy: str | None = configuration.proxy or None
        self._rest: Any = None

    @property
    def server_hostname(self) -> str | None:
        """The name the server's certificate is checked against, when not the host's."""
        return self.configuration.tls_server_name or None

    @functools.cached_property
    def ssl_context(self) -> ssl.SSLContext:
        return ssl_context(self.configuration)

    @property
    def rest_client(self) -> Any:
        """The ``RESTClientObject`` (``pool_manager`` is its aiohttp session), made now if it
        was not: this imports aiohttp. Call it from the event loop."""
        if self._rest is None:
            rest = kube_auth().RESTClientObject(self.configuration)
            rest.proxy = self.proxy
            rest.pool_manager._trust_env = False  # the proxy is resolved once, in self.proxy
            self._rest = rest
        return self._rest

    async def close(self) -> None:
        rest, self._rest = self._rest, None
        if rest is not None:
            await rest.close()


_LOADING = threading.Lock()


@functools.cache
def _kube_auth() -> KubeAuth:
    if f"{_PACKAGE}.client" in sys.modules:
        return _from_package()
    return _load_without_generated_api()


def kube_auth() -> KubeAuth:
    """The configuration and authentication pieces, loaded once per process. Thread-safe:
    the first loads are serialized, so no thread sees a module another one is still
    importing (clients made in several threads, each with its own event loop)."""
    with _LOADING:
        return _kube_auth()


def _from_package() -> KubeAuth:
    from kubernetes_asyncio import client, config
    from kubernetes_asyncio.client import rest

    return KubeAuth(client.Configuration, rest.RESTClientObject, config.load_kube_config,
                    config.load_incluster_config, config.ConfigException)


class _FullApiClient:
    """Stands for ``ApiClient`` in ``kube_config`` (its ``new_client_from_config*``, which the
    controller never calls): builds the real one, importing the whole package then."""

    def __new__(cls, *args: Any, **kwargs: Any) -> Any:
        from kubernetes_asyncio.client.api_client import ApiClient

        return ApiClient(*args, **kwargs)


def _load_without_generated_api() -> KubeAuth:
    spec = importlib.util.find_spec(_PACKAGE)
    if spec is None or not spec.submodule_search_locations:
        raise ImportError(f"{_PACKAGE} is not installed")
    root = next(iter(spec.submodule_search_locations))
    before = {name: mod for name, mod in sys.modules.items()
              if name == _PACKAGE or name.startswith(f"{_PACKAGE}.")}
    deferred = {name: _Deferred(name) for name in _DEFERRED if name not in sys.modules}
    sys.modules.update(deferred)
    try:
        for name, sub in ((_PACKAGE, ""), (f"{_PACKAGE}.client", "client"),
                          (f"{_PACKAGE}.config", "config")):
            package = types.ModuleType(name)
            package.__path__ = [os.path.join(root, sub)] if sub else [root]
            sys.modules[name] = package
        client = sys.modules[f"{_PACKAGE}.client"]
        loaded: dict[str, types.ModuleType] = {}
        for sub in _MODULES:
            if sub == "config.kube_config":  # it imports these two from the package
                client.Configuration = loaded["client.configuration"].Configuration  # type: ignore[attr-defined]
                client.ApiClient = _FullApiClient  # type: ignore[attr-defined]
            loaded[sub] = (_import_postponed(f"{_PACKAGE}.{sub}")
                           if sub in _POSTPONED_ANNOTATIONS
                           else importlib.import_module(f"{_PACKAGE}.{sub}"))
    finally:
        for name in [n for n in sys.modules if n == _PACKAGE or n.startswith(f"{_PACKAGE}.")]:
            del sys.modules[name]
        sys.modules.update(before)
        for name, stand_in in deferred.items():
            if sys.modules.get(name) is stand_in:
                del sys.modules[name]
    return KubeAuth(loaded["client.configuration"].Configuration,
                    loaded["client.rest"].RESTClientObject,
                    loaded["config.kube_config"].load_kube_config,
                    loaded["config.incluster_config"].load_incluster_config,
                    loaded["config.config_exception"].ConfigException)


class _PostponedLoader(importlib.machinery.SourceFileLoader):
    """Compiles a source module as if it began with ``from __future__ import annotations``,
    from its source every time (no bytecode cache read or written: the cached one is the
    module's own)."""

    def get_code(self, fullname: str) -> types.CodeType:
        code: types.CodeType = compile(self.get_data(self.path), self.path, "exec",
                                       dont_inherit=True,
                                       flags=__future__.annotations.compiler_flag)
        return code


def _import_postponed(name: str) -> types.ModuleType:
    spec = importlib.util.find_spec(name)
    if spec is None or spec.origin is None:
        raise ImportError(f"{name} is not installed")
    loader = _PostponedLoader(name, spec.origin)
    postponed = importlib.machinery.ModuleSpec(name, loader, origin=spec.origin)
    postponed.has_location = True
    module = importlib.util.module_from_spec(postponed)
    sys.modules[name] = module
    loader.exec_module(module)
    return module
