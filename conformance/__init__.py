"""Conformance against the reference (Go) operators.

Two parts, both run by ``make conformance`` (``python -m conformance``):

* upstream's own e2e suite (mpi-operator v0.8.2, ``test/e2e``), built as a test binary and run
  against our controller on the local cluster (``e2e_suite``);
* a differential run: a corpus of jobs through the Go operator and through ours, one after the
  other on the same cluster with the same flags, every child object, the status and the Events
  normalized and compared field by field (``differential``); every difference is either listed
  as intended (``intended``, mirrored by the differences tables in docs/) or fails the run.

Pure parts (``normalize``, ``diff``, ``intended``, ``corpus``, ``report``) do no I/O beyond
reading files; ``kube``, ``operators``, ``differential`` and ``e2e_suite`` talk to the cluster
and run processes. Our controller is a black box here: it runs as ``python -m mpi_controller
run``, as the e2e tests start it.
"""
