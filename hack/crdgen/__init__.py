"""The project's CRDs, generated: one module per kind (its schema and :class:`~crdgen.crd.CRD`
description), the shared OpenAPI conversion in :mod:`crdgen.openapi`. ``hack/gen-crd.py`` is
the command."""
