"""Which job kinds ``mpi-controller run`` runs: ``--enable-scheme`` (training-operator's flag,
repeatable, any case), else every kind whose CRD is installed; a clear exit when none (or an
enabled one) is. Also the TFJob kind's flags (``--gang-scheduler-name``, the cluster domain)."""

from __future__ import annotations

import argparse

import pytest

from mpi_controller.kinds import plugins, schemes
from mpi_controller.options import ServerOptions, add_run_arguments, options_from_args
from tests.unit.schemes_client import CrdProbeClient as _Client
from tests.unit.schemes_client import schemes_to_run as _schemes


def _parse(*argv: str) -> ServerOptions:
    parser = argparse.ArgumentParser()
    add_run_arguments(parser)
    return options_from_args(parser.parse_args(list(argv)))


def test_enable_scheme_is_repeatable_and_case_insensitive() -> None:
    assert _parse().enabled_schemes == ()
    assert _parse("--enable-scheme=TFJob", "-enable-scheme", "mpijob",
                  "--enable-scheme", "tfjob").enabled_schemes == ("tfjob", "mpijob")
    assert _parse("--enable-scheme", "PyTorchJob").enabled_schemes == ("pytorchjob",)
    supported = ", ".join(schemes())
    with pytest.raises(ValueError, match=rf"--enable-scheme: scheme mxjob is not supported "
                                         rf"yet \(supported: {supported}\)"):
        _parse("--enable-scheme", "MXJob")


def test_gang_scheduler_name_and_cluster_domain_reach_the_training_kinds(
        monkeypatch: pytest.MonkeyPatch) -> None:
    opts = _parse("--gang-scheduler-name", "volcano", "--cluster-domain", "c.l",
                  "--worker-create-concurrency", "4")
    assert opts.training.gang_scheduler_name == "volcano"
    assert opts.kinds["mpijob"].gang_scheduling == "volcano"
    assert (opts.training.cluster_domain, opts.training.create_concurrency) == ("c.l", 4)
    monkeypatch.setenv("CUSTOM_CLUSTER_DOMAIN", "from.env")
    assert _parse().training.cluster_domain == "from.env"
    assert _parse("--cluster-domain", "flag").training.cluster_domain == "flag"




def test_without_the_flag_every_installed_kind_runs(capsys: pytest.CaptureFixture[str]) -> None:
    assert _schemes(_Client("mpijobs", "tfjobs", "pytorchjobs")) == [
        "mpijob", "tfjob", "pytorchjob"]
    assert _schemes(_Client("mpijobs", "tfjobs")) == ["mpijob", "tfjob"]
    assert _schemes(_Client("tfjobs")) == ["tfjob"]
    assert _schemes(_Client("pytorchjobs")) == ["pytorchjob"]
    assert _schemes(_Client("mpijobs")) == ["mpijob"]
    assert _schemes(_Client()) is None
    out = capsys.readouterr().out
    assert "CRD doesn't exist. Exiting" in out
    assert f"crd='{', '.join(p.crd_name for p in plugins() if not p.explicit)}'" in out


def test_an_enabled_kind_needs_its_crd(capsys: pytest.CaptureFixture[str]) -> None:
    client = _Client("mpijobs")
    assert _schemes(client, "tfjob") is None
    assert client.listed == ["tfjobs.kubeflow.org"]
    assert "crd=tfjobs.kubeflow.org" in capsys.readouterr().out
    assert _schemes(_Client("mpijobs", "tfjobs"), "tfjob") == ["tfjob"]
