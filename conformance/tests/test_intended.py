"""conformance.intended: rules match only what they describe, and each is a row of a
differences table in docs/."""

import re

from conformance.diff import MISSING, Difference
from conformance.intended import RULES, classify, rules_for
from conformance.kinds import KINDS
from conformance.operators import REPO


def readme_difference_rows(title: str) -> list[str]:
    """The first cells of the table under the heading ``title`` (up to the next heading or the
    end of the page), which exactly one page of ``docs/`` has."""
    sections = [match.group(1) for page in sorted((REPO / "docs").glob("*.md"))
                for match in re.finditer(rf"^#+ {re.escape(title)}\n(.*?)(?=^#|\Z)",
                                         page.read_text(), re.MULTILINE | re.DOTALL)]
    assert len(sections) == 1, f"docs/ has {len(sections)} headings {title!r}, not one"
    return [m.group(1).strip() for m in re.finditer(r"^\| ([^|]+?) \|", sections[0],
                                                    re.MULTILINE)
            if m.group(1).strip() not in ("Area", "---")]


def test_every_rule_is_a_row_of_its_kinds_readme_table() -> None:
    for rule in RULES:
        assert rule.kinds, rule.id
        assert set(rule.kinds) <= set(KINDS), rule.id
        for kind in rule.kinds:
            rows = [row for title in KINDS[kind].readme_sections
                    for row in readme_difference_rows(title)]
            assert any(row.startswith(rule.readme) for row in rows), (rule.id, kind, rule.readme)


def test_rules_apply_to_their_kinds_only() -> None:
    assert {r.id for r in rules_for("mpijob-v2beta1")} == {
        r.id for r in RULES if "mpijob-v2beta1" in r.kinds}
    assert not set(rules_for("mpijob-v2beta1")) & {r for r in RULES if "tfjob-v1" in r.kinds
                                                   and "mpijob-v2beta1" not in r.kinds}


def test_rule_ids_are_unique() -> None:
    assert len({r.id for r in RULES}) == len(RULES)


def test_classify_splits_intended_from_unexplained() -> None:
    running = Difference("pi", "events", "events",
                         '["Normal MPIJobRunning: MPIJob <ns>/pi is running"].count', 7, 1)
    more_running = Difference("pi", "events", "events",
                              '["Normal MPIJobRunning: MPIJob <ns>/pi is running"].count', 1, 2)
    hostfile = Difference("pi", "ConfigMap/pi-config", "final", "data.hostfile", "a", "b")
    found, unexplained = classify([running, more_running, hostfile])
    assert [(d, r.id) for d, r in found] == [(running, "mpijob-running-event-once")]
    assert unexplained == [more_running, hostfile]


def test_managed_by_rule_only_for_its_case_and_only_ours_reporting() -> None:
    path = ('["Warning ValidationError: Found validation errors: spec.runPolicy.managedBy: '
            'Unsupported value"]')
    ours_only = Difference("managed-by-unknown", "events", "events", path, MISSING, {"count": 1})
    elsewhere = Difference("example-pi", "events", "events", path, MISSING, {"count": 1})
    found, unexplained = classify([ours_only, elsewhere])
    assert [r.id for _, r in found] == ["managed-by-unknown"]
    assert unexplained == [elsewhere]


def test_status_change_event_repeated_by_the_go_operator_only() -> None:
    path = '["Normal MPIJobCreated: MPIJob <ns>/pi is created."].count'
    go_twice = Difference("pi", "events", "events", path, 2, 1)
    ours_twice = Difference("pi", "events", "events", path, 1, 2)
    succeeded = Difference("pi", "events", "events",
                           '["Normal MPIJobSucceeded: MPIJob <ns>/pi successfully completed."]'
                           '.count', 2, 1)
    found, unexplained = classify([go_twice, ours_twice, succeeded])
    assert [r.id for _, r in found] == ["status-change-event-once"] * 2
    assert unexplained == [ours_twice]


def test_running_unobserved_rules_need_the_case_context() -> None:
    path = "status.conditions[1].reason"
    plain = Difference("pi", "MPIJob/pi", "final", path, "MPIJobSucceeded", "MPIJobRunning")
    timed = Difference("pi", "MPIJob/pi", "final", path, "MPIJobSucceeded", "MPIJobRunning",
                       context="running-unobserved-by-ours")
    found, unexplained = classify([plain, timed])
    assert [r.id for _, r in found] == ["running-unobserved-conditions"]
    assert unexplained == [plain]


def _tf(case: str, obj: str, phase: str, path: str, go: object, ours: object) -> Difference:
    return Difference(case, obj, phase, path, go, ours)


def test_training_rules_explain_only_their_facts() -> None:
    rules = rules_for("tfjob-v1")
    label = 'metadata.labels["job-name"]'
    cases = {
        # ours adds the kubeflow/common labels; a label missing on ours is not explained
        "label-added": (_tf("a", "Pod/a-worker-0", "created", label, MISSING, "a"),
                        "training-labels"),
        "label-dropped": (_tf("a", "Pod/a-worker-0", "created", label, "a", MISSING), None),
        "manager": (_tf("a", "TFJob/a", "final", "metadata.managedFields[1].manager",
                        "training-operator", "mpi-operator"), "training-field-manager"),
        "other-manager": (_tf("a", "TFJob/a", "final", "metadata.managedFields[1].manager",
                              "training-operator", "kubectl"), None),
        "exited-0-ours-only": (_tf("a", "events", "events",
                                   '["Normal ExitedWithCode: Pod: <ns>.a-worker-1 exited with '
                                   'code 0"]', MISSING, {"count": 1}),
                               "training-pod-update-batch"),
        "exited-1-ours-only": (_tf("a", "events", "events",
                                   '["Normal ExitedWithCode: Pod: <ns>.a-worker-1 exited with '
                                   'code 1"]', MISSING, {"count": 1}), None),
        "exited-repeated": (_tf("a", "events", "events",
                                '["Normal ExitedWithCode: Pod: <ns>.a-worker-1 exited with code '
                                '1"].count', 4, 1), "training-repeated-events"),
        "exited-more-on-ours": (_tf("a", "events", "events",
                                    '["Normal ExitedWithCode: Pod: <ns>.a-worker-1 exited with '
                                    'code 1"].count', 1, 2), None),
        "succeeded-again": (_tf("a", "events", "events",
                                '["Normal TFJobSucceeded: TFJob <ns>/a successfully completed."]'
                                '.count', 3, 1), "training-own-status-writes"),
        "invalid-reconciled": (_tf("invalid-x", "Pod/invalid-x-worker-0", "presence", "",
                                   "present", MISSING), "training-invalid-reconciled"),
        "valid-not-reconciled": (_tf("x", "Pod/x-worker-0", "presence", "", "present", MISSING),
                                 None),
        "invalid-extra-on-ours": (_tf("invalid-x", "Pod/invalid-x-worker-0", "presence", "",
                                      MISSING, "present"), None),
        "invalid-reported": (_tf("invalid-x", "events", "events",
                                 '["Warning TFJobFailedValidation: TFJob failed validation '
                                 'because spec: bad"]', MISSING, {"count": 1}),
                             "training-invalid-reported"),
        "read-back": (_tf("g", "TFJob/g", "final", "status.lastReconcileTime", "<time>", MISSING),
                      "training-pod-group-read-back"),
        "read-back-ours": (_tf("g", "TFJob/g", "final", "status.lastReconcileTime", MISSING,
                               "<time>"), None),
    }
    for name, (diff, rule_id) in cases.items():
        found, _ = classify([diff], rules)
        assert [r.id for _, r in found] == ([rule_id] if rule_id else []), name


def test_mpijob_rules_do_not_explain_tfjob_differences_and_back() -> None:
    labels = Difference("a", "Pod/a-worker-0", "created", 'metadata.labels["job-name"]',
                        MISSING, "a")
    assert classify([labels], rules_for("mpijob-v2beta1"))[1] == [labels]
    running = Difference("pi", "events", "events",
                         '["Normal MPIJobRunning: MPIJob <ns>/pi is running"].count', 7, 1)
    assert classify([running], rules_for("tfjob-v1"))[1] == [running]


def test_created_again_rules_need_their_context() -> None:
    rules = rules_for("tfjob-v1")
    pod = Difference("b", "Pod/b-worker-0", "final", "deleted", False, True)
    tagged = Difference("b", "Pod/b-worker-0", "final", "deleted", False, True,
                        context="created-again-by-go")
    events = Difference("b", "events", "events",
                        '["Normal SuccessfulCreatePod: Created pod: b-worker-0"].count', 2, 1,
                        context="created-again-by-go")
    fewer = Difference("b", "events", "events",
                       '["Normal SuccessfulCreatePod: Created pod: b-worker-0"].count', 1, 2,
                       context="created-again-by-go")
    found, unexplained = classify([pod, tagged, events, fewer], rules)
    assert [r.id for _, r in found] == ["training-created-again-children",
                                        "training-created-again-events"]
    assert unexplained == [pod, fewer]


def test_pytorch_selector_rule_allows_only_the_job_labels_beside_upstreams() -> None:
    go = ("training.kubeflow.org/job-name=pt,training.kubeflow.org/operator-name="
          "pytorchjob-controller,training.kubeflow.org/replica-type=worker")
    ours = f"group-name=kubeflow.org,job-name=pt,{go}"
    path = "status.replicaStatuses.Worker.selector"
    rules = rules_for("pytorchjob-v1")
    same = Difference("pt", "PyTorchJob/pt", "final", path, go, ours)
    left_out = Difference("pt", "PyTorchJob/pt", "final", path, MISSING, ours)
    other_type = Difference("pt", "PyTorchJob/pt", "final", path, go,
                            ours.replace("replica-type=worker", "replica-type=master"))
    other_job = Difference("pt", "PyTorchJob/pt", "final", path, go,
                           ours.replace("job-name=pt,", "job-name=other,", 1))
    ours_missing = Difference("pt", "PyTorchJob/pt", "final", path, go, MISSING)
    found, unexplained = classify([same, left_out, other_type, other_job, ours_missing], rules)
    assert [(d, r.id) for d, r in found] == [(same, "pytorch-replica-selector"),
                                             (left_out, "pytorch-replica-selector")]
    assert unexplained == [other_type, other_job, ours_missing]
    assert not classify([same], rules_for("tfjob-v1"))[0]


def test_pytorch_crd_metric_defaults_only_empty_strings_of_ours() -> None:
    path = ("spec.versions[0].schema.openAPIV3Schema.properties.spec.properties.elasticPolicy."
            "properties.metrics.items.properties.pods.properties.metric.properties.selector."
            "properties.matchLabels.additionalProperties.default")
    ours = Difference("(CRD)", "CustomResourceDefinition", "schema", path, MISSING, "")
    other = Difference("(CRD)", "CustomResourceDefinition", "schema", path, MISSING, "x")
    found, unexplained = classify([ours, other], rules_for("pytorchjob-v1"))
    assert [r.id for _, r in found] == ["pytorch-crd-metric-defaults"]
    assert unexplained == [other]


V1 = rules_for("mpijob-v1")


def test_mpijob_v1_spam_filter_rule_needs_the_burst_context_among_others() -> None:
    path = '["Normal SuccessfulDeletePod: Deleted pod: pi-worker-0"]'
    event = {"count": 1, "source": "mpi-job-controller"}
    plain = Difference("pi", "events", "events", path, MISSING, event)
    burst = Difference("pi", "events", "events", path, MISSING, event,
                       context="created-again-by-go,event-burst-by-go")
    go_only = Difference("pi", "events", "events", path, event, MISSING,
                         context="event-burst-by-go")
    found, unexplained = classify([plain, burst, go_only], V1)
    assert [(d, r.id) for d, r in found] == [(burst, "training-event-spam-filter")]
    assert unexplained == [plain, go_only]


def test_spam_filter_count_rule_only_where_the_reference_counted_fewer_in_a_burst() -> None:
    path = ('["Warning MPIJobRestarting: MPIJob r is restarting because 1 Launcher replica(s) '
            'failed."].count')
    burst = "event-burst-by-go"
    fewer = Difference("r", "events", "events", path, 1, 2, context=burst)
    more = Difference("r", "events", "events", path, 2, 1, context=burst)
    quiet = Difference("r", "events", "events", path, 1, 2)
    found, unexplained = classify([fewer, more, quiet], V1)
    assert [(d, r.id) for d, r in found] == [(fewer, "training-event-spam-filter-count")]
    assert unexplained == [more, quiet]


def test_mpijob_v1_owner_and_role_rules_match_only_what_they_name() -> None:
    owner = "metadata.ownerReferences[0].apiVersion"
    stored = Difference("pi", "Pod/pi-launcher", "created", owner, "kubeflow.org/v1",
                        "kubeflow.org/v2beta1")
    other = Difference("pi", "Pod/pi-launcher", "created", owner, "kubeflow.org/v1",
                       "kubeflow.org/v1alpha2")
    every_pod = {"verbs": ["create"], "apiGroups": [""], "resources": ["pods/exec"]}
    named = {**every_pod, "resourceNames": ["pi-worker-0"]}
    no_rule = Difference("pi", "Role/pi-launcher", "final", "rules[1]", every_pod, MISSING)
    lost_rule = Difference("pi", "Role/pi-launcher", "final", "rules[1]", named, MISSING)
    found, unexplained = classify([stored, other, no_rule, lost_rule], V1)
    assert [(d, r.id) for d, r in found] == [(stored, "mpijob-v1-owner-version"),
                                             (no_rule, "mpijob-v1-role-without-workers")]
    assert unexplained == [other, lost_rule]
    assert classify([stored], rules_for("tfjob-v1"))[1] == [stored]


def test_mpijob_v1_events_once_only_when_the_reference_recorded_more() -> None:
    path = '["Normal ServiceAccount is exist: ServiceAccount: pi-launcher"].count'
    fewer = Difference("pi", "events", "events", path, 6, 1)
    more = Difference("pi", "events", "events", path, 1, 2)
    found, unexplained = classify([fewer, more], V1)
    assert [r.id for _, r in found] == ["mpijob-v1-events-once"]
    assert unexplained == [more]


def test_job_tracking_finalizer_rule_only_for_that_finalizer_on_a_launcher_pod() -> None:
    rules = rules_for("mpijob-v2beta1")
    fields = 'metadata.managedFields[0].fieldsV1["f:metadata"]["f:finalizers"]'
    tracking = ["batch.kubernetes.io/job-tracking"]
    launcher = "Pod/active-deadline-launcher-<1>"
    explained = [
        Difference("c", launcher, "final", "metadata.finalizers", MISSING, tracking),
        Difference("c", launcher, "final", fields, MISSING,
                   {".": {}, 'v:"batch.kubernetes.io/job-tracking"': {}}),
        Difference("c", launcher, "final", "metadata.finalizers", tracking, MISSING),
    ]
    unexplained = [
        Difference("c", launcher, "final", "metadata.finalizers", MISSING, ["example.com/x"]),
        Difference("c", "Pod/c-worker-0", "final", "metadata.finalizers", MISSING, tracking),
        Difference("c", launcher, "created", "metadata.finalizers", MISSING, tracking),
    ]
    found, left = classify(explained + unexplained, rules)
    assert [(d, r.id) for d, r in found] == [(d, "job-tracking-finalizer") for d in explained]
    assert left == unexplained


def test_discover_hosts_after_failure_only_when_the_reference_rewrote_it_from_a_stale_cache(
        ) -> None:
    def d(go: str, ours: str, context: str) -> Difference:
        return Difference("backoff-limit", "ConfigMap/backoff-limit-config", "final",
                          'data["discover_hosts.sh"]', go, ours, context)

    listed = "#!/bin/sh\necho backoff-limit-worker-0:1\necho backoff-limit-worker-1:1"
    rules = rules_for("mpijob-v1")
    found, unexplained = classify([d("#!/bin/sh", listed, "created-again-by-go,x")], rules)
    assert [r.id for _, r in found] == ["mpijob-v1-discover-hosts-after-failure"]
    assert not unexplained
    for other in (d("#!/bin/sh", listed, ""), d(listed, "#!/bin/sh", "created-again-by-go"),
                  d("#!/bin/sh\necho a:1", listed, "created-again-by-go")):
        assert classify([other], rules)[1] == [other]
    assert classify([d("#!/bin/sh", listed, "created-again-by-go")],
                    rules_for("mpijob-v1alpha2"))[0] == []


def test_trainjob_rules_explain_managed_fields_and_not_the_features_built_since() -> None:
    """The field manager and the Events API are explained; a missing runtime snapshot,
    PodGroup or PodGroup label is not (ours makes them now)."""
    rules = rules_for("trainjob-v1alpha1")
    manager = Difference("deepspeed", "JobSet/deepspeed", "created",
                         "metadata.managedFields[0].manager", "trainer", "mpi-operator")
    content = Difference("deepspeed", "JobSet/deepspeed", "created",
                         "spec.replicatedJobs[0].replicas", 1, 2)
    snapshot = Difference("jax", "ConfigMap/jax-runtime-snapshot", "presence", "", "present",
                          MISSING)
    podgroup = Difference("volcano", "PodGroup/volcano", "presence", "", "present", MISSING)
    label = Difference("coscheduling", "Pod/coscheduling-node-0-0-<1>", "final",
                       'metadata.labels["scheduling.x-k8s.io/pod-group"]', "coscheduling",
                       MISSING)
    event = ('["Warning TrainJobResourcesCreationFailed: TrainJob resources reconciliation '
             'failed: x"]')
    source = Difference("runtime-not-found", "events", "events", f"{event}.source", None,
                        "trainer-trainjob-controller")
    other_source = Difference("runtime-not-found", "events", "events", f"{event}.source", None,
                              "trainjob-controller")
    found, unexplained = classify([manager, content, snapshot, podgroup, label, source,
                                   other_source], rules)
    assert [(d.obj, r.id) for d, r in found] == [
        ("JobSet/deepspeed", "trainjob-field-manager"),
        ("events", "trainjob-events-api-source")]
    assert unexplained == [content, snapshot, podgroup, label, other_source]


def test_a_trainjob_snapshot_is_explained_only_when_both_sides_are_one_runtime() -> None:
    """Trainer's snapshot is its typed runtime marshalled (managedFields, `metadata: {}`,
    `resources: {}`, double quotes); ours is the served runtime: the same runtime once parsed
    is explained, a different image is not."""
    rules = rules_for("trainjob-v1alpha1")
    go = ('apiVersion: trainer.kubeflow.org/v1alpha1\nkind: ClusterTrainingRuntime\n'
          'metadata:\n  managedFields:\n  - manager: x\n  name: r\n  resourceVersion: "264"\n'
          'spec:\n  mlPolicy:\n    xgboost: {}\n  template:\n    metadata: {}\n    spec:\n'
          '      replicatedJobs:\n      - name: node\n        template:\n          spec:\n'
          '            template:\n              spec:\n                containers:\n'
          '                - image: img\n                  resources: {}\n')
    ours = ("apiVersion: trainer.kubeflow.org/v1alpha1\nkind: ClusterTrainingRuntime\n"
            "metadata:\n  name: r\n  resourceVersion: '264'\nspec:\n  mlPolicy:\n"
            "    xgboost: {}\n  template:\n    spec:\n      replicatedJobs:\n"
            "      - name: node\n        template:\n          spec:\n            template:\n"
            "              spec:\n                containers:\n                - image: img\n")
    same = Difference("xgboost", "ConfigMap/xgboost-runtime-snapshot", "created",
                      "data.runtime", go, ours)
    other = Difference("xgboost", "ConfigMap/xgboost-runtime-snapshot", "final",
                       "data.runtime", go, ours.replace("image: img", "image: other"))
    no_policy = Difference("xgboost", "ConfigMap/xgboost-runtime-snapshot", "final",
                           "data.runtime", go, ours.replace("    xgboost: {}\n", ""))
    found, unexplained = classify([same, other, no_policy], rules)
    assert [(d.phase, r.id) for d, r in found] == [
        ("created", "trainjob-snapshot-serialization")]
    assert unexplained == [other, no_policy]


def test_a_runpolicy_field_nothing_checks_is_an_admitted_problem_of_ours_only() -> None:
    """The corpus's unknown cleanPodPolicy: training-operator says nothing; ours records one
    Warning ValidationError naming the field ("Admitted problems" of the TFJob rows)."""
    rules = rules_for("tfjob-v1")
    event = ('["Warning ValidationError: spec.runPolicy.cleanPodPolicy: Unsupported value: '
             '"Sometimes": supported values: "All", "Running", "None": every pod is deleted '
             'when the job finishes, as with All (admitted: the job runs as training-operator '
             'runs it)"]')
    ours = Difference("clean-pod-policy-unknown", "events", "events", event, MISSING,
                      {"count": 1})
    both = Difference("clean-pod-policy-unknown", "events", "events", event, {"count": 1},
                      {"count": 1})
    found, unexplained = classify([ours, both], rules)
    assert [(d.case, r.id) for d, r in found] == [
        ("clean-pod-policy-unknown", "training-admitted-problem")]
    assert unexplained == [both]


def test_a_trainjob_pod_finalizer_is_explained_only_after_trainer_made_its_jobset_again() -> None:
    """active-deadline: Trainer applied the JobSet it had just deleted; its first Job's Pod was
    last seen still holding `batch.kubernetes.io/job-tracking` (docs/trainjob.md, "Stale
    cache"). Without that context, or with a finalizer of ours, it stays unexplained."""
    rules = rules_for("trainjob-v1alpha1")
    pod = "Pod/active-deadline-node-0-0-<1>"
    field = 'metadata.managedFields[0].fieldsV1["f:metadata"]["f:finalizers"]'
    tracking = "batch.kubernetes.io/job-tracking"
    again = "created-again-by-go"
    held = Difference("active-deadline", pod, "final", "metadata.finalizers", [tracking],
                      MISSING, context=again)
    managed = Difference("active-deadline", pod, "final", field,
                         {".": {}, f'v:"{tracking}"': {}}, MISSING, context=again)
    no_context = Difference("active-deadline", pod, "final", "metadata.finalizers", [tracking],
                            MISSING)
    ours_held = Difference("active-deadline", pod, "final", "metadata.finalizers", MISSING,
                           [tracking], context=again)
    other = Difference("active-deadline", pod, "final", "metadata.finalizers", ["x/y"],
                       MISSING, context=again)
    found, unexplained = classify([held, managed, no_context, ours_held, other], rules)
    assert [(d, r.id) for d, r in found] == [(held, "trainjob-stale-cache-pod-finalizer"),
                                             (managed, "trainjob-stale-cache-pod-finalizer")]
    assert unexplained == [no_context, ours_held, other]


def test_a_zero_replica_pod_upstream_counted_is_explained_in_any_of_its_states() -> None:
    """A PaddleJob's master beside 0 workers: training-operator's `worker-0`, made and deleted
    again while the job runs, was last counted active, failed or (its simulated run ended)
    succeeded; ours counts nothing. A count of ours, or another field, is not explained."""
    rules = rules_for("paddlejob-v1")
    job, case = "PaddleJob/master-with-zero-workers", "master-with-zero-workers"
    counted = [Difference(case, job, "final", f"status.replicaStatuses.Worker.{state}", 1,
                          MISSING) for state in ("active", "failed", "succeeded")]
    field = Difference(case, job, "final", 'metadata.managedFields[1].fieldsV1["f:status"]'
                       '["f:replicaStatuses"]["f:Worker"]["f:succeeded"]', {}, MISSING)
    ours = Difference(case, job, "final", "status.replicaStatuses.Worker.succeeded", MISSING, 1)
    other = Difference(case, job, "final", "status.replicaStatuses.Worker.restarts", 1, MISSING)
    other_case = Difference("two-workers", "PaddleJob/two-workers", "final",
                            "status.replicaStatuses.Worker.succeeded", 1, MISSING)
    found, unexplained = classify([*counted, field, ours, other, other_case], rules)
    assert [(d, r.id) for d, r in found] == [(d, "training-zero-replicas-active")
                                             for d in (*counted, field)]
    assert unexplained == [ours, other, other_case]


def test_a_v1alpha2_last_restart_read_by_one_side_only_is_explained_either_way() -> None:
    """`launcher-restarting`: one side read the launcher Job between its last failed pod and
    its Failed condition, so its `Running` gave way to `Restarting` once more. Another pair of
    conditions, or another kind, is not explained."""
    rules = rules_for("mpijob-v1alpha2")
    job, case, path = "MPIJob/launcher-restarting", "launcher-restarting", "status.conditions[1]"
    pairs = {"type": ("Running", "Restarting"), "status": ("False", "True"),
             "reason": ("MPIJobRunning", "MPIJobRestarting"),
             "message": ("MPIJob <ns>/launcher-restarting is running.",
                         "MPIJob <ns>/launcher-restarting is restarting.")}
    seen = [Difference(case, job, "final", f"{path}.{field}", go, ours)
            for field, (go, ours) in pairs.items()]
    turned = [Difference(case, job, "final", f"{path}.{field}", ours, go)
              for field, (go, ours) in pairs.items()]
    other = Difference(case, job, "final", f"{path}.type", "Running", "Succeeded")
    other_message = Difference(case, job, "final", f"{path}.message",
                               "MPIJob <ns>/launcher-restarting is running.",
                               "MPIJob <ns>/launcher-restarting has failed")
    found, unexplained = classify([*seen, *turned, other, other_message], rules)
    assert [(d, r.id) for d, r in found] == [(d, "mpijob-v1alpha2-last-restart")
                                             for d in (*seen, *turned)]
    assert unexplained == [other, other_message]
    assert not classify(seen, rules_for("tfjob-v1"))[0]


def test_a_training_job_one_operator_never_saw_running_differs_only_in_its_conditions() -> None:
    """Seven PaddleJobs of a run under load: training-operator's ended `Created`, `Succeeded`
    (never seen running), ours `Created`, `Running` (False), `Succeeded`. Only the conditions,
    and only in that context."""
    rules = rules_for("paddlejob-v1")
    ctx = "running-unobserved-by-go"
    job = "PaddleJob/custom-ports"
    kind_of = Difference("custom-ports", job, "final", "status.conditions[1].type", "Succeeded",
                         "Running", context=ctx)
    added = Difference("custom-ports", job, "final", "status.conditions[2]", MISSING,
                       {"type": "Succeeded", "status": "True"}, context=ctx)
    untagged = Difference("custom-ports", job, "final", "status.conditions[1].type",
                          "Succeeded", "Running")
    replicas = Difference("custom-ports", job, "final", "status.replicaStatuses.Worker.active",
                          1, MISSING, context=ctx)
    found, unexplained = classify([kind_of, added, untagged, replicas], rules)
    assert [(d, r.id) for d, r in found] == [(kind_of, "training-running-unobserved"),
                                             (added, "training-running-unobserved")]
    assert unexplained == [untagged, replicas]


def test_a_launcher_created_again_is_explained_only_as_the_reference_s_own_warning() -> None:
    """mpi-operator's second create of a launcher its cache did not show yet (its Warning
    Event, only on its side) is the row "Stale cache"; the same Event of ours, another
    failure of the reference's, or a pod's AlreadyExists are not."""
    path = ('["Warning MPIJobFailed: launcher pod created failed: jobs.batch '
            '"launcher-wait-for-workers-ready-launcher" already exists"]')
    event = {"count": 1, "reason": "MPIJobFailed", "type": "Warning"}
    go_only = Difference("launcher-wait-for-workers-ready", "events", "events", path,
                         event, MISSING)
    ours_only = Difference("launcher-wait-for-workers-ready", "events", "events", path,
                           MISSING, event)
    other = Difference("pi", "events", "events",
                       '["Warning MPIJobFailed: launcher pod created failed: jobs.batch '
                       '"pi-launcher" is forbidden: exceeded quota"]', event, MISSING)
    pod = Difference("pi", "events", "events",
                     '["Warning MPIJobFailed: launcher pod created failed: pods '
                     '"pi-launcher" already exists"]', event, MISSING)
    found, unexplained = classify([go_only, ours_only, other, pod], rules_for("mpijob-v2beta1"))
    assert [(d, r.id) for d, r in found] == [(go_only, "launcher-created-again-event")]
    assert unexplained == [ours_only, other, pod]
