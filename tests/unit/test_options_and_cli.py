"""`mpi-controller run` flags (the Go operator's names and defaults) and CLI exit codes."""

from __future__ import annotations

import argparse

import pytest

from mpi_controller import __version__
from mpi_controller.cli import main
from mpi_controller.kinds import plugins
from mpi_controller.options import ServerOptions, add_run_arguments, options_from_args


def _parse(*argv: str) -> ServerOptions:
    parser = argparse.ArgumentParser()
    add_run_arguments(parser)
    return options_from_args(parser.parse_args(list(argv)))


def test_defaults_match_the_go_operator(monkeypatch: pytest.MonkeyPatch) -> None:
    """cmd/mpi-operator/app/options: threadiness 2, qps 5, burst 10, queue 10/100,
    lock namespace mpi-operator, monitoring port 0."""
    monkeypatch.delenv("KUBECONFIG", raising=False)
    monkeypatch.delenv("KUBEFLOW_NAMESPACE", raising=False)
    monkeypatch.delenv("KUBERNETES_SERVICE_HOST", raising=False)
    opts = _parse()
    assert opts == ServerOptions(log_format="console", kinds={
        p.scheme: p.default_options() for p in plugins() if p.flags is not None})
    assert (opts.engine.threadiness, opts.kube_api_qps, opts.kube_api_burst) == (2, 5.0, 10)
    assert (opts.engine.queue_qps, opts.engine.queue_burst) == (10.0, 100)
    assert opts.engine.pod_update_batch == 1.0
    assert opts.wakeup_gather == 0.01
    assert opts.kinds["mpijob"].worker_create_concurrency == 16
    assert (opts.lock_namespace, opts.monitoring_port, opts.health_port) == ("mpi-operator", 0,
                                                                             8080)


def test_go_style_single_dash_flags_and_aliases(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.delenv("KUBECONFIG", raising=False)
    opts = _parse("-kubeConfig", "/a", "-threadiness", "4", "--kube-api-qps", "100",
                  "-gang-scheduling", "volcano", "--cluster-domain", "cluster.local",
                  "--pod-update-batch", "0.25", "--worker-create-concurrency", "3",
                  "-wakeup-gather", "0")
    assert (opts.kubeconfig, opts.engine.threadiness, opts.kube_api_qps) == ("/a", 4, 100.0)
    mpi = opts.kinds["mpijob"]
    assert (mpi.gang_scheduling, mpi.cluster_domain) == ("volcano", "cluster.local")
    assert (opts.engine.pod_update_batch, mpi.worker_create_concurrency) == (0.25, 3)
    assert opts.wakeup_gather == 0.0
    assert _parse("--kubeconfig", "/b").kubeconfig == "/b"
    # training-operator's cmd/training-operator.v1 names it --controller-threads
    assert _parse("--controller-threads", "6").engine.threadiness == 6


def test_the_kubectl_delivery_images_of_the_older_mpijob_generations() -> None:
    """training-operator's flag for v1 launchers, mpi-operator v0.2.3's for v1alpha2."""
    defaults = _parse().kinds["mpijob"]
    assert (defaults.kubectl_delivery_image_v1, defaults.kubectl_delivery_image_v1alpha2) == (
        "ghcr.io/kubeflow/training-v1/kubectl-delivery:latest",
        "mpioperator/kubectl-delivery:latest")
    opts = _parse("--mpi-kubectl-delivery-image", "r/a:1", "-kubectl-delivery-image", "r/b:2")
    mpi = opts.kinds["mpijob"]
    assert (mpi.kubectl_delivery_image_v1, mpi.kubectl_delivery_image_v1alpha2) == (
        "r/a:1", "r/b:2")


def test_environment_overrides(monkeypatch: pytest.MonkeyPatch) -> None:
    """KUBEFLOW_NAMESPACE is --namespace's default; logs are JSON inside a pod. $KUBECONFIG
    does not override an explicit --kubeConfig (client-go's order: the flag first; see
    test_kubeconfig.py)."""
    monkeypatch.setenv("KUBECONFIG", "/env")
    monkeypatch.setenv("KUBEFLOW_NAMESPACE", "team")
    monkeypatch.setenv("KUBERNETES_SERVICE_HOST", "10.0.0.1")
    opts = _parse("--kubeConfig", "/flag")
    assert (opts.kubeconfig, opts.namespace, opts.log_format) == ("/flag", "team", "json")


@pytest.mark.parametrize(("argv", "message"), [
    (["--threadiness", "0"], "--threadiness must be greater than 0, got 0"),
    (["--health-port", "70000"], "--health-port must be between 0 and 65535, got 70000"),
    (["--controller-queue-burst", "-1"], "--controller-queue-burst must be greater than 0"),
    (["--pod-update-batch", "-1"], "--pod-update-batch must not be negative, got -1"),
    (["--kube-api-qps", "-1"], "--kube-api-qps must not be negative, got -1"),
    (["--kube-api-burst", "-5"], "--kube-api-burst must not be negative, got -5"),
    (["--startup-timeout", "-1"], "--startup-timeout must not be negative, got -1"),
    (["--wakeup-gather", "-0.5"], "--wakeup-gather must be between 0 and 1 (seconds), got -0.5"),
    (["--wakeup-gather", "2"], "--wakeup-gather must be between 0 and 1 (seconds), got 2"),
])
def test_bad_flag_values_exit_2_naming_the_flag(
        argv: list[str], message: str, capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["run", *argv]) == 2
    assert message in capsys.readouterr().err


def test_version(capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["version"]) == 0
    assert capsys.readouterr().out == f"mpi-controller {__version__}\n"
    assert main(["run", "--version"]) == 0
    assert capsys.readouterr().out == f"mpi-controller {__version__}\n"


def test_the_help_names_each_kind_with_its_group(capsys: pytest.CaptureFixture[str]) -> None:
    with pytest.raises(SystemExit):
        main(["--help"])
    assert " ".join(capsys.readouterr().out.split()).startswith(
        "usage: mpi-controller [-h] [--version] COMMAND ... A Python implementation of the "
        "Kubeflow training operators, serving MPIJob (kubeflow.org/v2beta1, v1, v1alpha2), "
        "TFJob, PyTorchJob, XGBoostJob, PaddleJob and JAXJob (kubeflow.org/v1), and TrainJob "
        "(trainer.kubeflow.org/v1alpha1). ")


def test_no_command_prints_usage_and_exits_2(capsys: pytest.CaptureFixture[str]) -> None:
    assert main([]) == 2
    assert "usage: mpi-controller" in capsys.readouterr().err


def test_run_raises_the_collector_thresholds_before_it_starts(
        monkeypatch: pytest.MonkeyPatch) -> None:
    import gc

    from mpi_controller import app, logging
    seen: list[tuple[int, ...]] = []

    async def fake_run(opts: object) -> int:
        seen.append(gc.get_threshold())
        return 0

    before = gc.get_threshold()
    monkeypatch.setattr(app, "run", fake_run)
    monkeypatch.setattr(logging, "configure", lambda *args: None)
    try:
        gc.set_threshold(700, 10, 10)
        assert main(["run", "--kubeConfig", "/nowhere"]) == 0
        assert seen == [(50_000, 20, 10)]
    finally:
        gc.set_threshold(*before)


@pytest.mark.parametrize("failure", [
    OSError(98, "error while attempting to bind on address ('0.0.0.0', 9090): address "
                "already in use"),
    ExceptionGroup("unhandled errors in a TaskGroup", [OSError(
        98, "error while attempting to bind on address ('0.0.0.0', 9090): address already "
            "in use")]),
])
def test_a_port_in_use_is_one_line_and_exit_1(
        failure: BaseException, monkeypatch: pytest.MonkeyPatch,
        capsys: pytest.CaptureFixture[str]) -> None:
    from mpi_controller import app, logging

    async def fail(opts: object) -> int:
        raise failure

    monkeypatch.setattr(app, "run", fail)
    monkeypatch.setattr(logging, "configure", lambda *args: None)
    assert main(["run", "--kubeConfig", "/nowhere"]) == 1
    assert capsys.readouterr().err == (
        "mpi-controller run: [Errno 98] error while attempting to bind on address "
        "('0.0.0.0', 9090): address already in use\n")


def test_other_failures_keep_their_traceback(monkeypatch: pytest.MonkeyPatch) -> None:
    from mpi_controller import app, logging

    async def fail(opts: object) -> int:
        raise ExceptionGroup("bug", [OSError("port"), KeyError("spec")])

    monkeypatch.setattr(app, "run", fail)
    monkeypatch.setattr(logging, "configure", lambda *args: None)
    with pytest.raises(ExceptionGroup):
        main(["run", "--kubeConfig", "/nowhere"])


def test_training_operators_controller_runtime_flags(monkeypatch: pytest.MonkeyPatch) -> None:
    """cmd/training-operator.v1/main.go: --leader-elect (a Go bool), --leader-election-id,
    --metrics-bind-address and --health-probe-bind-address ([host]:port; "0" turns the
    server off), so its Deployment's arguments run unchanged."""
    monkeypatch.delenv("KUBERNETES_SERVICE_HOST", raising=False)
    assert _parse().leader_elect is True  # mpi-operator's: always on
    assert _parse("--leader-elect").leader_elect is True
    assert _parse("--leader-elect=false").leader_elect is False
    assert _parse("-leader-elect=0").leader_elect is False
    assert _parse("--leader-elect=True").leader_elect is True
    assert _parse("--no-leader-elect").leader_elect is False
    assert _parse("--no-leader-elect", "--leader-elect=false").leader_elect is False
    opts = _parse("--leader-election-id", "1ca428e5.training-operator.kubeflow.org")
    assert (opts.lease_name, opts.lock_namespace) == (
        "1ca428e5.training-operator.kubeflow.org", "mpi-operator")
    assert _parse().lease_name == "mpi-operator"
    opts = _parse("--metrics-bind-address=:8080", "--health-probe-bind-address", ":8081")
    assert (opts.monitoring_host, opts.monitoring_port) == ("0.0.0.0", 8080)
    assert (opts.health_host, opts.health_port) == ("0.0.0.0", 8081)
    opts = _parse("--metrics-bind-address", "127.0.0.1:9090",
                  "--health-probe-bind-address", "[::1]:9091")
    assert (opts.monitoring_host, opts.monitoring_port) == ("127.0.0.1", 9090)
    assert (opts.health_host, opts.health_port) == ("::1", 9091)
    opts = _parse("--metrics-bind-address", "0", "--health-probe-bind-address", "0")
    assert (opts.monitoring_port, opts.health_port) == (0, 0)
    opts = _parse("--monitoring-port", "9000", "--health-port", "0")
    assert (opts.monitoring_host, opts.monitoring_port, opts.health_port) == (
        "0.0.0.0", 9000, 0)


@pytest.mark.parametrize(("argv", "message"), [
    (["--leader-elect=maybe"], "argument --leader-elect/-leader-elect: 'maybe' is not a "
                               "boolean (true or false)"),
    (["--metrics-bind-address", "8080"], "argument --metrics-bind-address/-metrics-bind-"
     "address: '8080' is not [host]:port with a port from 0 to 65535 (or 0: off)"),
    (["--health-probe-bind-address", ":99999"],
     "':99999' is not [host]:port with a port from 0 to 65535 (or 0: off)"),
])
def test_unreadable_controller_runtime_flag_values_exit_2_naming_the_flag(
        argv: list[str], message: str, capsys: pytest.CaptureFixture[str]) -> None:
    with pytest.raises(SystemExit) as exited:
        main(["run", *argv])
    assert exited.value.code == 2
    assert message in capsys.readouterr().err


@pytest.mark.parametrize(("argv", "message"), [
    (["--no-leader-elect", "--leader-elect"],
     "--no-leader-elect and --leader-elect=true contradict each other"),
    (["--monitoring-port", "9000", "--metrics-bind-address", ":9001"],
     "--monitoring-port and --metrics-bind-address set the same port: give one"),
    (["--health-port", "1", "--health-probe-bind-address", ":2"],
     "--health-port and --health-probe-bind-address set the same port: give one"),
    (["--monitoring-port", "-1"], "--monitoring-port must be between 0 and 65535, got -1"),
])
def test_bad_controller_runtime_flags_exit_2_naming_the_flag(
        argv: list[str], message: str, capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["run", *argv]) == 2
    assert message in capsys.readouterr().err
