# mpi-controller developer commands. Every target does its own setup on a fresh clone.
#   make demo   run the controller on the local cluster and show an MPIJob succeed
#   make test   lint, unit, integration and e2e tests (starts the local cluster unless
#               KUBECONFIG points to a reachable cluster), then the real-node tests' short form
#   make test-oldest-k8s  the integration and e2e suites on the oldest Kubernetes claimed
#               (hack/versions.env K8S_OLDEST_VERSION), built on first use
#   make e2e-real  the real-node tests (e2e/real) on a local cluster with a real node: containers
#               that really run (root; installs Debian's containerd, runc, CNI plugins if missing)
#   make cluster-up-real  the local cluster with its real node, left running (cluster-down
#               stops both)
#   make bench  performance workloads on a dedicated local cluster (BENCH_ARGS="--scale 0.1"
#               to shrink them); writes bench-results/, docs/performance.md, docs/bench.png;
#               BENCH_OPERATORS=all also runs each reference operator (built by
#               hack/reference-operators.sh) and writes the README's side-by-side summary
#   make chaos  fault runs (e2e/chaos) on a cluster of their own; results in chaos-results/
#   make conformance  upstream's e2e suite and the differential runs (MPIJob against
#               mpi-operator, TFJob, PyTorchJob and MPIJob v1 against training-operator, MPIJob
#               v1alpha2 against mpi-operator v0.2.3, TrainJob against Kubeflow Trainer v2.3.0 with
#               the jobset addon; all built from the Go module proxy) on a cluster of their own, and the suite's
#               specs that need real MPI processes on the real node when it is built;
#               conformance-results/
#   make addons-test  the local cluster with its addons (Kueue, Volcano's scheduler, the
#               scheduler-plugins scheduler; built from the Go module proxy on first use) on a
#               cluster of its own: their smoke tests (tests/integration/test_addons.py), gang
#               scheduling of every kind with Volcano and Coscheduling (test_gang_scheduling.py),
#               every kind under Kueue (test_kueue.py) and beside the Go operators under the same
#               Kueue (test_kueue_reference.py); TrainJob through JobSet (test_trainjob.py), the
#               TrainJobs `convert` makes of v1 examples (test_trainjob_from_v1.py) and the
#               Kubeflow SDK's TrainerClient (test_trainer_sdk.py, in .venv-kubeflow)
SHELL := /bin/bash
PYTHON ?= python3.11
VENV := .venv
PY := $(VENV)/bin/python
STAMP := $(VENV)/.installed
CLUSTER := hack/local-cluster.sh
PYTEST_ARGS ?=
BENCH_CLUSTER_DIR ?= $(HOME)/.cache/mpi-controller/cluster-bench
BENCH_ARGS ?=
BENCH_OPERATORS ?= ours

.PHONY: install image sdk-venv kubeflow-sdk-venv lint unit integration e2e e2e-real test test-oldest-k8s cluster-up cluster-up-real cluster-down build-cluster demo demo-down bench chaos conformance addons-test clean

$(STAMP): pyproject.toml constraints.txt
	@test -x $(PY) || $(PYTHON) -m venv $(VENV)
	$(PY) -m pip install --quiet --upgrade pip
	$(PY) -m pip install --quiet -c constraints.txt -e '.[test,bench]'
	@touch $(STAMP)

install: $(STAMP)

# The Kubeflow training SDK (kubeflow-training 1.9.4 needs kubernetes<36; .venv pins 37) in a
# virtualenv of its own, for e2e/test_training_sdk.py (which also makes it when missing).
SDK_VENV := .venv-sdk
SDK_STAMP := $(SDK_VENV)/.installed
$(SDK_STAMP): e2e/sdk/constraints.txt
	@test -x $(SDK_VENV)/bin/python || $(PYTHON) -m venv $(SDK_VENV)
	$(SDK_VENV)/bin/python -m pip install --quiet --disable-pip-version-check \
	  -c e2e/sdk/constraints.txt kubeflow-training kubernetes
	@touch $(SDK_STAMP)

sdk-venv: $(SDK_STAMP)

# The Kubeflow SDK (`kubeflow` 0.5.0, TrainerClient for Trainer v2's TrainJobs; it needs
# kubernetes<36 too and installs the package `kubeflow` kubeflow-training lives in) in a
# virtualenv of its own, for tests/integration/test_trainer_sdk.py (which makes it when missing).
KUBEFLOW_SDK_VENV := .venv-kubeflow
KUBEFLOW_SDK_STAMP := $(KUBEFLOW_SDK_VENV)/.installed
$(KUBEFLOW_SDK_STAMP): e2e/sdk/kubeflow-constraints.txt
	@test -x $(KUBEFLOW_SDK_VENV)/bin/python || $(PYTHON) -m venv $(KUBEFLOW_SDK_VENV)
	$(KUBEFLOW_SDK_VENV)/bin/python -m pip install --quiet --disable-pip-version-check \
	  -c e2e/sdk/kubeflow-constraints.txt kubeflow kubernetes
	@touch $(KUBEFLOW_SDK_STAMP)

kubeflow-sdk-venv: $(KUBEFLOW_SDK_STAMP)

# The controller image: make image IMAGE=registry/name:tag [BASE_IMAGE=...] [PUSH=1]
# (docker, podman or buildah; docs/install.md).
IMAGE ?= mpi-controller:latest
image:
	@hack/build-image.sh "$(IMAGE)" "$(BASE_IMAGE)" "$(PUSH)"

lint: $(STAMP)
	$(VENV)/bin/ruff check mpi_controller tests e2e bench hack conformance conftest.py
	$(VENV)/bin/mypy --strict mpi_controller conformance
	@$(VENV)/bin/pytest -q --collect-only -p no:cacheprovider tests e2e conformance/tests \
	  >/dev/null || { echo "test collection failed (an import error?):"; \
	  $(VENV)/bin/pytest -q --collect-only -p no:cacheprovider tests e2e conformance/tests \
	  | tail -20; exit 1; }

unit: $(STAMP)
	$(VENV)/bin/pytest -q tests/unit conformance/tests $(PYTEST_ARGS)

# Cluster-backed suites use $$KUBECONFIG when it is set and reachable, else the local cluster.
integration: $(STAMP)
	@. hack/ensure-cluster.sh && $(VENV)/bin/pytest -q tests/integration $(PYTEST_ARGS)

e2e: $(STAMP) $(SDK_STAMP)
	@. hack/ensure-cluster.sh && $(VENV)/bin/pytest -q e2e --ignore=e2e/real $(PYTEST_ARGS)

# Its own cluster (REAL_CLUSTER_DIR, default ~/.cache/mpi-controller/cluster-real), brought up
# with a real node and taken down afterwards unless REAL_KEEP_CLUSTER=1 (hack/real-node-tests.sh).
e2e-real: $(STAMP)
	@bash hack/real-node-tests.sh $(PYTEST_ARGS)

test: $(STAMP)
	@hack/timed.sh lint $(MAKE) --no-print-directory lint
	@hack/timed.sh sdk-venv $(MAKE) --no-print-directory sdk-venv
	@hack/timed.sh unit $(VENV)/bin/pytest -q -p no:cacheprovider tests/unit conformance/tests \
	  $(PYTEST_ARGS)
	@hack/timed.sh cluster bash -c '. hack/ensure-cluster.sh'
	@hack/timed.sh reference-operators bash hack/reference-operators.sh build mpi-operator
	@. hack/ensure-cluster.sh >/dev/null && hack/timed.sh integration+e2e \
	  $(VENV)/bin/pytest -q -p no:cacheprovider tests/integration e2e --ignore=e2e/real $(PYTEST_ARGS)
	@. hack/ensure-cluster.sh >/dev/null && hack/timed.sh conformance-short \
	  $(PY) -m conformance --short --no-build --kinds mpijob-v2beta1 \
	  --kubeconfig "$$KUBECONFIG" --out conformance-results/short
	@hack/timed.sh real-node bash hack/real-node-tests.sh --short

# The integration and e2e suites on the oldest Kubernetes the controller claims
# (K8S_OLDEST_VERSION in hack/versions.env; docs/install.md), on a cluster of its own
# (OLDEST_CLUSTER_DIR), taken down afterwards. Not part of `make test`: its control plane is a
# second cold build (kube-apiserver, controller-manager, scheduler, kubectl: ~10 min on 2 cores).
OLDEST_CLUSTER_DIR ?= $(HOME)/.cache/mpi-controller/cluster-oldest
# The CRD files embed the Pod schema of K8S_VERSION's API server, so the check that the
# generator makes them from the server's OpenAPI holds on that version only.
OLDEST_TESTS ?= tests/integration e2e --ignore=e2e/real \
  --deselect tests/integration/test_crd.py::test_the_crd_files_are_what_the_generator_makes
test-oldest-k8s: $(STAMP) $(SDK_STAMP)
	@export MPI_CONTROLLER_K8S=oldest MPI_CONTROLLER_CLUSTER_DIR=$(OLDEST_CLUSTER_DIR); \
	  bash $(CLUSTER) up | tail -1 && \
	  KUBECONFIG=$(OLDEST_CLUSTER_DIR)/kubeconfig $(VENV)/bin/pytest -q -p no:cacheprovider \
	  $(OLDEST_TESTS) $(PYTEST_ARGS); rc=$$?; bash $(CLUSTER) down >/dev/null; exit $$rc

build-cluster:
	bash $(CLUSTER) build

cluster-up:
	bash $(CLUSTER) up

cluster-up-real:
	bash $(CLUSTER) up --real-node

cluster-down:
	bash $(CLUSTER) down

demo: $(STAMP)
	bash hack/demo.sh

demo-down:
	bash hack/demo.sh down

# Fault runs on their own local cluster (restarts and overloads its API server, compacts etcd),
# each with a mixed workload of every kind, then the webhook runs (docs/chaos.md).
# Sizes: CHAOS_ARGS='--jobs 100 --workers 4 --kills 10 --webhook-seconds 90' (the defaults);
# kinds: CHAOS_ARGS='--kinds mpijob,tfjob' (default all); runs by name, e.g.
# CHAOS_ARGS='crashes failover cert-rotation'. Writes chaos-results/<run>.json and
# chaos-results/summary.md (a table per run, per kind, and of the webhook runs).
CHAOS_CLUSTER_DIR ?= $(HOME)/.cache/mpi-controller/cluster-chaos
CHAOS_ARGS ?=
chaos: $(STAMP)
	MPI_CONTROLLER_CLUSTER_DIR=$(CHAOS_CLUSTER_DIR) bash $(CLUSTER) up | tail -1
	KUBECONFIG=$(CHAOS_CLUSTER_DIR)/kubeconfig bash hack/install-crd.sh
	$(PY) -m e2e.chaos.runner --cluster-dir $(CHAOS_CLUSTER_DIR) --out chaos-results $(CHAOS_ARGS)

# Its own cluster (BENCH_CLUSTER_DIR), so other test runs neither disturb nor are disturbed;
# stopped afterwards unless BENCH_KEEP_CLUSTER=1.
bench: $(STAMP)
	@export MPI_CONTROLLER_CLUSTER_DIR=$(BENCH_CLUSTER_DIR); \
	  bash $(CLUSTER) up >/dev/null && \
	  KUBECONFIG=$(BENCH_CLUSTER_DIR)/kubeconfig bash hack/install-crd.sh && \
	  $(PY) bench/queue_bench.py && \
	  $(PY) bench/informer_bench.py --kubeconfig $(BENCH_CLUSTER_DIR)/kubeconfig && \
	  $(PY) bench/harness.py --cluster-dir $(BENCH_CLUSTER_DIR) --docs \
	    --operators $(BENCH_OPERATORS) $(BENCH_ARGS); \
	  rc=$$?; test -n "$(BENCH_KEEP_CLUSTER)" || bash $(CLUSTER) down; exit $$rc

# Upstream's e2e suite (against ours and the Go operator) and the differential run of every
# kind's corpus case and flag group (MPIJob against mpi-operator, TFJob and PyTorchJob against
# training-operator), on a cluster of its own (left running for the next run; stop it with
# MPI_CONTROLLER_CLUSTER_DIR=$(CONFORMANCE_CLUSTER_DIR) hack/local-cluster.sh down).
# Builds the reference operators on first use. CONFORMANCE_ARGS='--only suspend-resume,volcano'
# picks cases or groups; '--parts differential' one part; '--kinds tfjob-v1' one kind.
# Results in conformance-results/.
CONFORMANCE_CLUSTER_DIR ?= $(HOME)/.cache/mpi-controller/cluster-conformance
CONFORMANCE_ARGS ?=
conformance: $(STAMP)
	$(PY) -m conformance --cluster-dir $(CONFORMANCE_CLUSTER_DIR) $(CONFORMANCE_ARGS)

# The addons' tests on a cluster of their own (ADDONS_CLUSTER_DIR), left running for the
# next run (stop it with MPI_CONTROLLER_CLUSTER_DIR=$(ADDONS_CLUSTER_DIR) hack/local-cluster.sh
# down): the smoke tests, gang scheduling, Kueue, and the comparison with the Go operators under
# Kueue (which builds them on first use, as `make conformance` does). ADDONS picks a subset of
# addons (the tests of addons not started are skipped), ADDONS_TESTS a subset of the files;
# figures in $(ADDONS_CLUSTER_DIR)/results/. Not part of `make test`: a cold build of the four
# addons takes tens of minutes on a small machine.
ADDONS_CLUSTER_DIR ?= $(HOME)/.cache/mpi-controller/cluster-addons
ADDONS ?= kueue,volcano,scheduler-plugins,jobset
ADDONS_TESTS ?= tests/integration/test_addons.py tests/integration/test_gang_scheduling.py \
  tests/integration/test_kueue.py tests/integration/test_kueue_reference.py \
  tests/integration/test_jobset_addon.py tests/integration/test_trainjob.py \
  tests/integration/test_kueue_trainjob.py tests/integration/test_trainjob_from_v1.py \
  tests/integration/test_trainer_sdk.py tests/integration/test_trainjob_gang.py \
  tests/integration/test_rbac.py::test_every_trainjob_rule_is_needed \
  tests/integration/test_trainjob_webhook_rbac.py
addons-test: $(STAMP) $(KUBEFLOW_SDK_STAMP)
	set -o pipefail; MPI_CONTROLLER_CLUSTER_DIR=$(ADDONS_CLUSTER_DIR) bash $(CLUSTER) up --addons $(ADDONS) | tail -1
	@if [[ " $(ADDONS_TESTS) " == *test_kueue_reference.py* ]]; then \
	  bash hack/reference-operators.sh build mpi-operator training-operator; fi
	MPI_CONTROLLER_ADDONS_CLUSTER_DIR=$(ADDONS_CLUSTER_DIR) $(VENV)/bin/pytest -q -p no:cacheprovider \
	  --durations=0 $(ADDONS_TESTS) $(PYTEST_ARGS)

clean:
	rm -rf $(VENV) $(SDK_VENV) $(KUBEFLOW_SDK_VENV) .mypy_cache .ruff_cache .pytest_cache bench-results conformance-results
