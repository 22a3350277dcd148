"""Fault runs (``make chaos``, docs/chaos.md): a mixed workload of every job kind driven while
one kind of fault is injected, then invariants checked (overall and per kind) from the API
server's audit log, samples and the final state; and the webhook runs.

* :mod:`e2e.chaos.kinds` says which kinds (``--kinds``), makes each kind's small jobs and checks
  the per-kind invariants (pure);
* :mod:`e2e.chaos.workload` creates the jobs, watches them converge, samples pods, HPAs and
  StatefulSets, deletes them and looks for orphans;
* :mod:`e2e.chaos.audit` reads the audit log (duplicates, 409s, overlapping writers, recovery);
* :mod:`e2e.chaos.hostile` generates invalid and at-the-limit MPIJobs with hypothesis;
* :mod:`e2e.chaos.webhooks` serves the webhooks from several replicas behind a failover proxy
  and drives clients through MPIJob ``v1``/``v1alpha2``; :mod:`e2e.chaos.webhook_runs` has the
  webhook fault runs;
* :mod:`e2e.chaos.runner` has one function per fault run, writes JSON records to
  ``chaos-results/`` and Markdown tables (``python -m e2e.chaos.runner --help``).
"""
