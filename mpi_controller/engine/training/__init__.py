"""The training operators' common job semantics (training-operator v1.9 ``ReconcileJobs``) for
the ``kubeflow.org/v1`` kinds (TFJob, PyTorchJob, ...), on the job engine.

Pure modules: :mod:`.api` (the shared v1 API view and names, the typed view every kind's
extends), :mod:`.names` (the names a kind's constants give), :mod:`.defaults` and
:mod:`.validation` (shared defaulting and webhook checks), :mod:`.replicas` (pods and Services
per replica index, labels, slices), :mod:`.env` (the environment a kind appends to a pod's
containers), :mod:`.decisions` (restarts, exit codes, backoff, deadline, TTL, cleanup, replica
counting), :mod:`.conditions` (the condition rules), :mod:`.status` (the status rules the
kinds share), :mod:`.gang` (PodGroups), :mod:`.children` (what a kind creates for a job,
:func:`~.children.initial_children` the first sync's objects). :mod:`.metrics` holds the
``training_operator_jobs_*`` counters; :mod:`.kind` is the generic kind on the engine and
:mod:`.reconcile` its reconcile (``ReconcileJobs``); :mod:`.framework` what a kind plugs in
(``TrainingFramework``), and :mod:`.hooks` the generic one a kind makes of its functions and
names (``TrainingHooks``). Importing this package imports nothing, so a kind's pure code can
use the pure modules alone.
"""
