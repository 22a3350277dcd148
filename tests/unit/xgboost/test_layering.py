"""The XGBoostJob package keeps the layering of ``tests/unit/test_layering.py``, more strictly:
every module is pure, its hooks (``hooks``) included (only the engine's pure training-operator
modules); its ``plugin`` module alone meets the engine's wiring; it imports no other kind; its
public API is importable."""

from __future__ import annotations

from pathlib import Path

import mpi_controller.xgboost as xgboost
from tests.unit.test_layering import IO_MODULES, KIND_PACKAGES, PKG, PURE_ENGINE, _imports

WIRING = ("mpi_controller.engine.plugin", "mpi_controller.engine.training.plugin")


def test_the_package_does_no_io() -> None:
    found = _imports(PKG / "xgboost")
    assert {"xgboost/hooks.py", "xgboost/status.py", "xgboost/envvars.py",
            "xgboost/v1/validation.py"} <= set(found)
    for module, names in found.items():
        allowed = (*PURE_ENGINE, *WIRING) if Path(module).name == "plugin.py" else PURE_ENGINE
        bad = {n for n in names if n.startswith(IO_MODULES) and n not in allowed}
        assert not bad, (module, bad)


def test_no_other_kind_is_imported() -> None:
    others = tuple(f"mpi_controller.{k}." for k in KIND_PACKAGES if k != "xgboost")
    for module, names in _imports(PKG / "xgboost").items():
        assert not {n for n in names if f"{n}.".startswith(others)}, module


def test_the_public_api_is_importable() -> None:
    assert xgboost.__all__
    for name in xgboost.__all__:
        assert getattr(xgboost, name) is not None, name
