"""Options of ``mpi-controller run``: the Go operator's flags, same names and defaults.

Go's ``flag`` package accepts ``-name`` and ``--name``; so does this parser. Beyond the Go
operator: ``--health-port`` (default 8080; 0 disables), ``--log-format json|console``,
``--worker-create-concurrency`` (worker pods created in parallel within one sync),
``--pod-update-batch`` (the most seconds pod updates are batched per job, only while every
worker is busy), ``--wakeup-gather`` (the most seconds the event loop waits while busy, so one
wake-up handles what arrives meanwhile: :mod:`mpi_controller.runtime.eventloop`) and
``--no-leader-elect``.
``--kubeconfig`` is an alias of ``--kubeConfig``; an explicit ``--kubeConfig`` wins over
``$KUBECONFIG`` (client-go's order; :func:`~mpi_controller.runtime.kubeconfig.kubeconfig_source`).
``--kube-api-qps`` must not be negative (client-go reads a negative QPS as "no limit"; here
0 means that). ``--startup-timeout`` (default 60) bounds how long start-up waits for the API
server. The webhook flags (``--webhook-server-port`` as the training-operator's, and the
certificate settings) fill :class:`~mpi_controller.webhook.WebhookOptions`.

From training-operator: ``--enable-scheme`` (repeatable, any case: the schemes of
:mod:`mpi_controller.kinds`) selects the job kinds; without it every kind whose CRD is
installed runs. ``--gang-scheduler-name`` is an alias of ``--gang-scheduling``;
``--cluster-domain`` defaults to ``$CUSTOM_CLUSTER_DOMAIN`` (training-operator's variable for
TF_CONFIG host names). Its controller-runtime flags are taken too, so its Deployment's
arguments work unchanged: ``--leader-elect[=bool]`` (Go's boolean spellings; leader election
stays on without it, as in mpi-operator), ``--leader-election-id`` (the Lease's name),
``--metrics-bind-address`` and ``--health-probe-bind-address`` (``[host]:port``, ``0`` turns
the server off: the same settings as ``--monitoring-port`` and ``--health-port``, so one of
each pair may be given).

Each kind adds its own flags (:attr:`~mpi_controller.engine.plugin.KindPlugin.flags`: the MPIJob
kind's ``--feature-gates`` and kubectl-delivery images, the PyTorchJob kind's init container),
parsed into :attr:`ServerOptions.kinds`.

:class:`ServerOptions` groups what each part needs: the process (client, ports, logs, leader
election), the job engine (:class:`~mpi_controller.engine.controller.EngineConfig`), what every
kind shares (:class:`~mpi_controller.engine.training.framework.TrainingOptions`: gang
scheduler, cluster domain, create concurrency) and each kind's own options.
"""

from __future__ import annotations

import argparse
import os
import urllib.parse
from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any

from mpi_controller.engine.controller import EngineConfig
from mpi_controller.engine.training.framework import TrainingOptions
from mpi_controller.kinds import plugin, plugins, schemes
from mpi_controller.kube.timefmt import parse_duration
from mpi_controller.webhook import WebhookOptions

__all__ = ["ServerOptions", "add_run_arguments", "options_from_args"]


@dataclass(frozen=True)
class ServerOptions:
    kubeconfig: str = ""
    master: str = ""
    namespace: str = ""
    monitoring_port: int = 0
    health_port: int = 8080
    monitoring_host: str = "0.0.0.0"
    """The address ``/metrics`` binds (``--metrics-bind-address``'s host)."""
    health_host: str = "0.0.0.0"
    """The address the health endpoint binds (``--health-probe-bind-address``'s host)."""
    lock_namespace: str = "mpi-operator"
    lease_name: str = "mpi-operator"
    """The leader-election Lease (``--leader-election-id``)."""
    kube_api_qps: float = 5.0
    kube_api_burst: int = 10
    startup_timeout: float = 60.0
    """Seconds start-up retries an unreachable or overloaded API server (``app.run``)."""
    wakeup_gather: float = 0.01
    """Most seconds the event loop, while messages keep coming, waits before a turn so one
    wake-up handles all that came meanwhile (:mod:`mpi_controller.runtime.eventloop`)."""
    log_format: str = "console"
    log_level: str = "info"
    leader_elect: bool = True
    engine: EngineConfig = field(default_factory=EngineConfig)
    training: TrainingOptions = field(default_factory=TrainingOptions)
    kinds: Mapping[str, object] = field(default_factory=dict)
    """Each kind's own options (its flags; :attr:`KindPlugin.flags`), by scheme; a kind not
    here gets its defaults (:meth:`kind_options`)."""
    enabled_schemes: tuple[str, ...] = ()
    """``--enable-scheme`` values (lower case); empty: every kind whose CRD is installed."""
    webhook: WebhookOptions = field(default_factory=WebhookOptions)

    def kind_options(self, scheme: str) -> object:
        """The options of the kind ``scheme``: given, else its defaults."""
        if scheme in self.kinds:
            return self.kinds[scheme]
        return plugin(scheme).default_options()


def _flag(parser: Any, name: str, *aliases: str, **kw: Any) -> None:
    """Add ``--name`` (and Go's ``-name``, and each alias in both spellings; only ``--name`` is
    listed by ``--help``)."""
    names = [f"--{name}", f"-{name}"]
    for alias in aliases:
        names += [f"--{alias}", f"-{alias}"]
    parser.add_argument(*names, **kw)


GROUPS = ("connection", "controller", "jobs", "observability", "webhooks")
"""The sections of ``mpi-controller run --help``, in order (then one per kind's own flags)."""


def add_run_arguments(parser: argparse.ArgumentParser) -> None:
    """Every ``run`` flag, grouped as :data:`GROUPS`, then each kind's own."""
    d, e, t = ServerOptions(), EngineConfig(), TrainingOptions()
    conn = parser.add_argument_group("connection")
    _flag(conn, "kubeConfig", "kubeconfig", dest="kubeconfig", default=d.kubeconfig,
          help="path to a kubeconfig (wins over $KUBECONFIG, which wins over ~/.kube/config; "
               "in-cluster config in a pod when none is given)")
    _flag(conn, "master", default=d.master, help="the API server URL (overrides the kubeconfig)")
    _flag(conn, "kube-api-qps", dest="kube_api_qps", type=float, default=d.kube_api_qps,
          help="client-side requests per second to the API server (0: unlimited)")
    _flag(conn, "kube-api-burst", dest="kube_api_burst", type=int, default=d.kube_api_burst,
          help="client-side burst of requests to the API server")
    _flag(conn, "startup-timeout", dest="startup_timeout", type=float,
          default=d.startup_timeout,
          help="seconds start-up waits for an unreachable or overloaded API server before "
               "exiting 1")
    ctl = parser.add_argument_group("controller")
    _flag(ctl, "namespace", default=os.environ.get("KUBEFLOW_NAMESPACE", d.namespace),
          help="watch only this namespace (default $KUBEFLOW_NAMESPACE, or all namespaces)")
    _flag(ctl, "enable-scheme", dest="enable_scheme", action="append", default=[],
          help=f"run this job kind ({', '.join(schemes())}; repeatable, any case); default: "
               "every kind whose CRD is installed")
    _flag(ctl, "threadiness", "controller-threads", type=int, default=e.threadiness,
          help="concurrent syncs (alias --controller-threads: training-operator's name)")
    _flag(ctl, "controller-queue-rate-limit", dest="controller_queue_rate_limit", type=float,
          default=e.queue_qps, help="work queue token bucket rate (per second)")
    _flag(ctl, "controller-queue-burst", dest="controller_queue_burst", type=int,
          default=e.queue_burst, help="work queue token bucket burst")
    _flag(ctl, "pod-update-batch", dest="pod_update_batch", type=float,
          default=e.pod_update_batch,
          help="most seconds a job's pod updates wait, batched, before its sync, only while "
               "every worker is busy (an idle controller syncs at once; 0: never batch)")
    _flag(ctl, "wakeup-gather", dest="wakeup_gather", type=float, default=d.wakeup_gather,
          help="most seconds the event loop waits, while messages keep coming, so that one "
               "wake-up handles all that arrived meanwhile (fewer wake-ups, less CPU; the first "
               "message after a pause is handled at once; 0: each message wakes it)")
    _flag(ctl, "lock-namespace", dest="lock_namespace", default=d.lock_namespace,
          help="namespace of the leader-election Lease")
    _flag(ctl, "leader-election-id", dest="lease_name", default=d.lease_name,
          help="name of the leader-election Lease (training-operator's flag)")
    _flag(ctl, "no-leader-elect", dest="leader_elect", action="store_false",
          help="run without leader election (a single replica; for debugging)")
    _flag(ctl, "leader-elect", dest="leader_elect_flag", nargs="?", const=True, default=None,
          type=go_bool, metavar="bool",
          help="training-operator's switch: --leader-elect=false is --no-leader-elect; "
               "leader election is on without either")
    jobs = parser.add_argument_group("jobs (every kind)")
    _flag(jobs, "gang-scheduling", "gang-scheduler-name", dest="gang_scheduling",
          default=t.gang_scheduler_name,
          help="'volcano', or the schedulerName of scheduler-plugins; empty: no gang "
               "scheduling (alias --gang-scheduler-name)")
    _flag(jobs, "cluster-domain", dest="cluster_domain",
          default=os.environ.get("CUSTOM_CLUSTER_DOMAIN", t.cluster_domain),
          help="cluster domain appended to host names in the hostfile and TF_CONFIG "
               "(.svc.<domain>; default $CUSTOM_CLUSTER_DOMAIN)")
    _flag(jobs, "worker-create-concurrency", dest="worker_create_concurrency", type=int,
          default=t.create_concurrency,
          help="worker pods (TFJob: pods and Services) of one job created concurrently "
               "within a sync")
    obs = parser.add_argument_group("observability")
    _flag(obs, "monitoring-port", dest="monitoring_port", type=int, default=None,
          help=f"port of /metrics; 0 disables it (default {d.monitoring_port})")
    _flag(obs, "health-port", dest="health_port", type=int, default=None,
          help=f"port of /healthz and /readyz; 0 disables it (default {d.health_port})")
    _flag(obs, "metrics-bind-address", dest="metrics_bind", type=bind_address, default=None,
          metavar="[host]:port", help="training-operator's form of --monitoring-port (0: off)")
    _flag(obs, "health-probe-bind-address", dest="health_bind", type=bind_address,
          default=None, metavar="[host]:port",
          help="training-operator's form of --health-port (0: off)")
    _flag(obs, "log-format", dest="log_format", choices=["json", "console"], default=None,
          help="log format (default: json in a pod, console otherwise)")
    _flag(obs, "log-level", dest="log_level", default=d.log_level,
          choices=["debug", "info", "warning", "error"], help="minimum log level")
    _add_webhook_arguments(parser.add_argument_group("webhooks"))
    for described in plugins():
        if described.flags is not None:
            described.flags.add(parser.add_argument_group(f"{described.kind} jobs"))
    other = parser.add_argument_group("other")
    _flag(other, "version", action="store_true", help="print the version and exit")


def _add_webhook_arguments(parser: Any) -> None:
    w = WebhookOptions()
    _flag(parser, "webhooks", dest="webhooks", choices=["auto", "on", "off"], default=w.mode,
          help="serve the conversion and validating webhooks (auto: in a pod, or with "
               "--webhook-url or --webhook-cert-dir)")
    _flag(parser, "webhook-server-port", dest="webhook_server_port", type=int, default=w.port,
          help="HTTPS port of the webhooks")
    _flag(parser, "webhook-service-name", dest="webhook_service_name", default=w.service_name,
          help="the Service in front of the webhooks (the certificate names "
               "<service>.<namespace>.svc)")
    _flag(parser, "webhook-secret-name", dest="webhook_secret_name", default=w.secret_name,
          help="the Secret that keeps the CA and serving certificate (shared by replicas)")
    _flag(parser, "webhook-configuration-name", dest="webhook_configuration_name",
          default=w.configuration_name,
          help="the ValidatingWebhookConfiguration whose caBundle is kept (default "
               "mpi-operator; mpi-operator-local with --webhook-url)")
    _flag(parser, "webhook-namespace", dest="webhook_namespace", default=w.namespace,
          help="namespace of the Secret and the Service (default $POD_NAMESPACE, else "
               "--lock-namespace)")
    _flag(parser, "webhook-url", dest="webhook_url", default=w.url,
          help="https://host:port at which the API server reaches this process directly; the "
               "CRD and webhook configuration are pointed there instead of at the Service")
    _flag(parser, "webhook-cert-dir", dest="webhook_cert_dir", default=w.cert_dir,
          help="serve tls.crt/tls.key from this directory (e.g. cert-manager's) instead of "
               "managing certificates")
    _flag(parser, "webhook-cert-validity", dest="webhook_cert_validity", default="87600h",
          help="lifetime of the CA and serving certificate the controller issues (Go "
               "duration); renewed 90 days (or a quarter of it) before the end")


_TRUE = ("1", "t", "T", "TRUE", "true", "True")
_FALSE = ("0", "f", "F", "FALSE", "false", "False")


def go_bool(value: str) -> bool:
    """A boolean flag's value as Go's ``flag`` package reads it (``strconv.ParseBool``)."""
    if value in _TRUE:
        return True
    if value in _FALSE:
        return False
    raise argparse.ArgumentTypeError(f"{value!r} is not a boolean (true or false)")


def bind_address(value: str) -> tuple[str, int]:
    """A controller-runtime bind address, ``[host]:port`` (an empty host: every address), or
    ``0`` (the server off), as (host, port)."""
    if value == "0":
        return "0.0.0.0", 0
    host, sep, port = value.rpartition(":")
    if not sep or not port.isdigit() or not 0 <= int(port) <= 65535:
        raise argparse.ArgumentTypeError(
            f"{value!r} is not [host]:port with a port from 0 to 65535 (or 0: off)")
    return host.strip("[]") or "0.0.0.0", int(port)


def _endpoint(port: int | None, bind: tuple[str, int] | None, flags: tuple[str, str],
              default: int) -> tuple[str, int]:
    """(host, port) of an endpoint given by its port flag or its bind-address flag (``flags``:
    their names), not both; ``default`` the port when neither is."""
    port_flag, bind_flag = flags
    if port is not None and bind is not None:
        raise ValueError(f"--{port_flag} and --{bind_flag} set the same port: give one")
    if bind is not None:
        return bind
    port = default if port is None else port
    if not 0 <= port <= 65535:
        raise ValueError(f"--{port_flag} must be between 0 and 65535, got {port}")
    return "0.0.0.0", port


def _positive(name: str, value: float) -> None:
    if value <= 0:
        raise ValueError(f"--{name} must be greater than 0, got {value:g}")


def options_from_args(args: argparse.Namespace) -> ServerOptions:
    """Builds validated options; raises ValueError naming the flag on bad values."""
    _positive("threadiness", args.threadiness)
    _positive("controller-queue-rate-limit", args.controller_queue_rate_limit)
    _positive("controller-queue-burst", args.controller_queue_burst)
    _positive("worker-create-concurrency", args.worker_create_concurrency)
    for flag, value in (("kube-api-qps", args.kube_api_qps),
                        ("kube-api-burst", args.kube_api_burst),
                        ("startup-timeout", args.startup_timeout)):
        if value < 0:
            raise ValueError(f"--{flag} must not be negative, got {value:g}")
    if args.pod_update_batch < 0:
        raise ValueError(f"--pod-update-batch must not be negative, got {args.pod_update_batch:g}")
    if not 0 <= args.wakeup_gather <= 1:
        raise ValueError(f"--wakeup-gather must be between 0 and 1 (seconds), got "
                         f"{args.wakeup_gather:g}")
    enabled = tuple(dict.fromkeys(s.lower() for s in args.enable_scheme))
    for scheme in enabled:
        if scheme not in schemes():
            raise ValueError(f"--enable-scheme: scheme {scheme} is not supported yet "
                             f"(supported: {', '.join(schemes())})")
    d = ServerOptions()
    monitoring = _endpoint(args.monitoring_port, args.metrics_bind,
                           ("monitoring-port", "metrics-bind-address"), d.monitoring_port)
    health = _endpoint(args.health_port, args.health_bind,
                       ("health-port", "health-probe-bind-address"), d.health_port)
    if not 0 <= args.webhook_server_port <= 65535:
        raise ValueError(f"--webhook-server-port must be between 0 and 65535, got "
                         f"{args.webhook_server_port}")
    leader_elect = args.leader_elect
    if args.leader_elect_flag is not None:
        if not leader_elect and args.leader_elect_flag:
            raise ValueError("--no-leader-elect and --leader-elect=true contradict each other")
        leader_elect = args.leader_elect_flag
    log_format = args.log_format or (
        "json" if os.environ.get("KUBERNETES_SERVICE_HOST") else "console")
    return ServerOptions(
        kubeconfig=args.kubeconfig,
        master=args.master,
        namespace=args.namespace,
        monitoring_host=monitoring[0],
        monitoring_port=monitoring[1],
        health_host=health[0],
        health_port=health[1],
        lock_namespace=args.lock_namespace,
        lease_name=args.lease_name,
        kube_api_qps=args.kube_api_qps,
        kube_api_burst=args.kube_api_burst,
        startup_timeout=args.startup_timeout,
        wakeup_gather=args.wakeup_gather,
        log_format=log_format,
        log_level=args.log_level,
        leader_elect=leader_elect,
        engine=EngineConfig(
            threadiness=args.threadiness,
            queue_qps=args.controller_queue_rate_limit,
            queue_burst=args.controller_queue_burst,
            pod_update_batch=args.pod_update_batch,
        ),
        training=TrainingOptions(
            gang_scheduler_name=args.gang_scheduling,
            cluster_domain=args.cluster_domain,
            create_concurrency=args.worker_create_concurrency,
        ),
        kinds={p.scheme: p.flags.parse(args) for p in plugins() if p.flags is not None},
        enabled_schemes=enabled,
        webhook=_webhook_options(args),
    )


def _webhook_options(args: argparse.Namespace) -> WebhookOptions:
    try:
        validity = parse_duration(args.webhook_cert_validity)
    except ValueError as err:
        raise ValueError(f"--webhook-cert-validity: {err}") from None
    if validity.total_seconds() <= 0:
        raise ValueError(f"--webhook-cert-validity must be positive, got "
                         f"{args.webhook_cert_validity}")
    url = args.webhook_url
    if url and not (url.startswith("https://") and urllib.parse.urlsplit(url).hostname):
        raise ValueError(f"--webhook-url must be https://<host>[:<port>], got {url!r}")
    return WebhookOptions(
        mode=args.webhooks, port=args.webhook_server_port,
        service_name=args.webhook_service_name, secret_name=args.webhook_secret_name,
        configuration_name=args.webhook_configuration_name,
        namespace=args.webhook_namespace, url=url, cert_dir=args.webhook_cert_dir,
        cert_validity=validity)
