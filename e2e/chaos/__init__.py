"""Fault runs (``make chaos``): a workload of MPIJobs driven while one kind of fault is
injected, then invariants checked from the API server's audit log and the final state.

* :mod:`e2e.chaos.workload` creates the jobs, watches them converge, samples worker counts,
  deletes them and looks for orphans;
* :mod:`e2e.chaos.audit` reads the audit log (duplicates, 409s, overlapping writers, recovery);
* :mod:`e2e.chaos.hostile` generates invalid and at-the-limit MPIJobs with hypothesis;
* :mod:`e2e.chaos.runner` has one function per fault run, writes JSON records to
  ``chaos-results/`` and a Markdown table (``python -m e2e.chaos.runner --help``).
"""
