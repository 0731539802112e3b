# reconciler-sdk developer targets. `make test` is the command CI (.ci/run) runs.
SHELL := /usr/bin/env bash
.SHELLFLAGS := -euo pipefail -c

GO ?= go
# Flags of `make demo`, e.g. DEMO_FLAGS=-scene=keystone (horizon, keystone or all).
DEMO_FLAGS ?=
# Flags of `make katalog-demo`, e.g. KATALOG_DEMO_FLAGS=-exit-when-ready.
KATALOG_DEMO_FLAGS ?=
GOLANGCI_LINT_VERSION ?= v2.15.0
TOOLS_BIN := $(CURDIR)/bin
GOLANGCI_LINT := $(TOOLS_BIN)/golangci-lint-$(GOLANGCI_LINT_VERSION)
CONTROLLER_TOOLS_VERSION ?= v0.23.0
CONTROLLER_GEN := $(TOOLS_BIN)/controller-gen-$(CONTROLLER_TOOLS_VERSION)
# What `make generate` writes; `make verify-generate` fails when any of it is stale.
GENERATED := '*zz_generated*.go' api/v1/internal/testcrd/crds rbac \
	examples/quickstart/config/crd examples/quickstart/config/rbac \
	examples/horizon/config/crd examples/horizon/config/rbac examples/horizon/config/webhook \
	examples/keystone/config/crd examples/keystone/config/rbac examples/keystone/config/webhook
# Packages whose rbac.go carries +kubebuilder:rbac markers: one ClusterRole each.
RBAC_PACKAGES := $(sort $(patsubst %/rbac.go,%,$(wildcard */rbac.go)))
# Test flags; override e.g. `make test TESTFLAGS=-run=TestEnsureObject`.
TESTFLAGS ?=
# The race detector is on for every `make test`; `make test RACE=` turns it off locally.
RACE ?= -race
# How long `make fuzz` runs each fuzz target.
FUZZTIME ?= 20s
BENCHFLAGS ?= -run='^$$' -bench=. -benchmem
# The size of the side-by-side comparison (bench/): owner counts, converged passes averaged,
# runs of each way's convergence from creation (the report shows the median), unrelated
# Secrets (and as many ConfigMaps) before they grow tenfold, and the custom
# resources of the sharding comparison (CI's `make test` runs that comparison at 30). Full
# size: `make bench BENCH_OWNERS=50,500`.
BENCH_OWNERS ?= 50
BENCH_PASSES ?= 3
BENCH_CONVERGE_RUNS ?= 20
BENCH_UNRELATED ?= 200
BENCH_SHARD_CRS ?= 3000

# The example operators that ship as an image and config/default: `make image deploy EXAMPLE=horizon IMG=...`.
EXAMPLE ?= quickstart
IMG ?= $(EXAMPLE):dev
IMAGES := quickstart horizon keystone katalog
IMAGE_PKG_quickstart := ./examples/quickstart/cmd
IMAGE_PKG_horizon := ./examples/horizon/cmd
IMAGE_PKG_keystone := ./examples/keystone/cmd
IMAGE_PKG_katalog := ./cmd/katalog
IMAGE_REVISION := $(shell git rev-parse HEAD 2>/dev/null)$(shell git diff --quiet HEAD 2>/dev/null || echo -dirty)
IMAGE_FLAGS ?=
# CHECK_EXAMPLE stops a recipe at once when EXAMPLE names no example operator.
CHECK_EXAMPLE = test -n "$(IMAGE_PKG_$(EXAMPLE))" || { echo "EXAMPLE=$(EXAMPLE): want one of $(IMAGES)" >&2; exit 2; }

.PHONY: all test fuzz envtest lint fmt vet golangci-lint bench demo katalog-demo downstream tidy help generate verify-generate api image images deploy undeploy

all: lint test

help: ## Show the targets.
	@grep -E '^[a-zA-Z_-]+:.*## ' $(MAKEFILE_LIST) | awk -F':.*## ' '{printf "  %-14s %s\n", $$1, $$2}'

envtest: ## Print (and if needed build) the envtest binaries directory.
	@hack/envtest.sh

test: ## Run every test, including the envtest suites, on a real kube-apiserver + etcd (installs chromium as root).
	@hack/testdeps.sh
	@assets="$$(hack/envtest.sh)"; \
	echo "KUBEBUILDER_ASSETS=$$assets"; \
	KUBEBUILDER_ASSETS="$$assets" $(GO) test -count=1 $(RACE) $(TESTFLAGS) ./...

api: ## Write docs/api.txt, the exported API of every package (TestAPIFileIsCurrent fails when it is stale).
	$(GO) run ./hack/api -o docs/api.txt

image: ## Build EXAMPLE's image (quickstart|horizon|keystone|katalog) as IMG (default EXAMPLE:dev): bin/images/EXAMPLE/ (OCI layout) and bin/images/EXAMPLE.tar (docker load, kind load image-archive); IMAGE_FLAGS=-push also pushes IMG.
	@$(CHECK_EXAMPLE)
	@mkdir -p bin/images
	$(GO) run ./cmd/reconciler-sdk image -t $(IMG) -o bin/images/$(EXAMPLE) -tar bin/images/$(EXAMPLE).tar \
		-source https://github.com/c5c3/reconciler-sdk -revision '$(IMAGE_REVISION)' -title $(EXAMPLE) \
		$(IMAGE_FLAGS) $(IMAGE_PKG_$(EXAMPLE))

images: ## Build the images of the three example operators and katalog (see image), each as <name>:dev.
	@for e in $(IMAGES); do $(MAKE) --no-print-directory image EXAMPLE=$$e IMG=$$e:dev || exit 1; done

DEPLOY_FLAGS ?=
UNDEPLOY_FLAGS ?=
deploy: ## Deploy examples/EXAMPLE/config/default with the manager image IMG to $KUBECONFIG's cluster (server-side apply as reconciler-sdk-deploy, CRDs first; DEPLOY_FLAGS=-force-conflicts; horizon/keystone need cert-manager).
	@$(CHECK_EXAMPLE)
	$(GO) run ./cmd/reconciler-sdk deploy -img $(IMG) $(DEPLOY_FLAGS) examples/$(EXAMPLE)/config/default

undeploy: ## Delete what make deploy applied for EXAMPLE and wait until it is gone (objects it did not apply stay, and are listed).
	@$(CHECK_EXAMPLE)
	$(GO) run ./cmd/reconciler-sdk undeploy -wait $(UNDEPLOY_FLAGS) examples/$(EXAMPLE)/config/default

fuzz: ## Run every fuzz target for FUZZTIME (20s) each.
	@FUZZTIME=$(FUZZTIME) hack/fuzz.sh

bench: ## Run the benchmarks, then the side-by-side report: docs/bench.md, docs/bench.png, the README's table.
	@assets="$$(hack/envtest.sh)"; \
	KUBEBUILDER_ASSETS="$$assets" BENCH_OWNERS="$(BENCH_OWNERS)" $(GO) test -timeout 60m $(BENCHFLAGS) ./...; \
	KUBEBUILDER_ASSETS="$$assets" BENCH_OWNERS="$(BENCH_OWNERS)" BENCH_PASSES="$(BENCH_PASSES)" BENCH_CONVERGE_RUNS="$(BENCH_CONVERGE_RUNS)" BENCH_UNRELATED="$(BENCH_UNRELATED)" BENCH_SHARD_CRS="$(BENCH_SHARD_CRS)" \
		$(GO) test ./bench -run '^TestReport$$' -count=1 -timeout 60m -v -args -report

demo: ## Show the SDK at work against a local control plane (DEMO_FLAGS=-scene=horizon|keystone|all).
	@assets="$$(hack/envtest.sh)"; \
	KUBEBUILDER_ASSETS="$$assets" $(GO) run ./hack/demo $(DEMO_FLAGS)

katalog-demo: ## Run the example Katalogs (examples/katalog) with the inspector on a local control plane (KATALOG_DEMO_FLAGS=-exit-when-ready).
	@assets="$$(hack/envtest.sh)"; \
	KUBEBUILDER_ASSETS="$$assets" $(GO) run ./hack/katalog-demo $(KATALOG_DEMO_FLAGS)

downstream: ## Prove the test kit and apply from a module that imports the SDK.
	@hack/downstream-check.sh

fmt: ## Check gofmt.
	@out="$$(gofmt -l $$(git ls-files '*.go'; git ls-files --others --exclude-standard '*.go'))"; \
	if [ -n "$$out" ]; then echo "gofmt would change:"; echo "$$out"; exit 1; fi

vet: ## Run go vet.
	$(GO) vet ./...

$(GOLANGCI_LINT):
	@mkdir -p $(TOOLS_BIN)
	GOBIN=$(TOOLS_BIN) $(GO) install github.com/golangci/golangci-lint/v2/cmd/golangci-lint@$(GOLANGCI_LINT_VERSION)
	@mv $(TOOLS_BIN)/golangci-lint $(GOLANGCI_LINT)

golangci-lint: $(GOLANGCI_LINT) ## Run golangci-lint v2 (installed from the Go module proxy into bin/).
	$(GOLANGCI_LINT) run ./...

lint: fmt vet golangci-lint ## gofmt, go vet and golangci-lint.

$(CONTROLLER_GEN):
	@mkdir -p $(TOOLS_BIN)
	GOBIN=$(TOOLS_BIN) $(GO) install sigs.k8s.io/controller-tools/cmd/controller-gen@$(CONTROLLER_TOOLS_VERSION)
	@mv $(TOOLS_BIN)/controller-gen $(CONTROLLER_GEN)

generate: $(CONTROLLER_GEN) ## Generate deepcopy functions, the api/v1 test CRD, the rbac/ ClusterRoles, examples/quickstart's CRD and ClusterRole and examples/horizon's and examples/keystone's CRDs, ClusterRoles and webhook configurations with controller-gen.
	$(CONTROLLER_GEN) object paths=./api/... paths=./secrets/eso/... paths=./examples/quickstart/api/... paths=./examples/horizon/api/... paths=./examples/keystone/api/...
	@# controller-gen sometimes writes a redundant import alias (runtime "k8s.io/.../runtime"),
	@# depending on the state of the build cache: normalise it so the output is deterministic.
	@find api secrets/eso examples/quickstart/api examples/horizon/api examples/keystone/api -name 'zz_generated*.go' -exec sed -i -E 's#^\t([A-Za-z0-9_]+) "(.+/)\1"$$#\t"\2\1"#' {} +
	$(CONTROLLER_GEN) crd paths=./api/v1/internal/testcrd/... output:crd:dir=./api/v1/internal/testcrd/crds
	@# One ClusterRole per package (least privilege for operators that use a few packages)
	@# and one with every rule (reconciler-sdk) for operators that use them all.
	@for p in $(RBAC_PACKAGES); do \
		$(CONTROLLER_GEN) rbac:roleName=reconciler-sdk-$$p paths=./$$p output:rbac:dir=./rbac/$$p || exit 1; \
	done
	$(CONTROLLER_GEN) rbac:roleName=reconciler-sdk $(foreach p,$(RBAC_PACKAGES),paths=./$(p)) output:rbac:dir=./rbac
	@# The quick-start operator: its CRD and its ClusterRole (markers on its controller and main.go).
	$(CONTROLLER_GEN) crd paths=./examples/quickstart/api/... output:crd:dir=./examples/quickstart/config/crd/bases
	$(CONTROLLER_GEN) rbac:roleName=memo-operator paths=./examples/quickstart/... output:rbac:dir=./examples/quickstart/config/rbac
	@# The Horizon example operator's CRD, its ClusterRole and its admission webhook configurations.
	$(CONTROLLER_GEN) crd paths=./examples/horizon/api/... output:crd:dir=./examples/horizon/config/crd/bases
	@# The Keystone example operator's CRDs, its ClusterRole and its admission webhook configurations.
	$(CONTROLLER_GEN) crd paths=./examples/keystone/api/... output:crd:dir=./examples/keystone/config/crd/bases
	$(CONTROLLER_GEN) rbac:roleName=keystone-operator paths=./examples/keystone/keystone/... paths=./examples/keystone/identitybackend/... output:rbac:dir=./examples/keystone/config/rbac
	$(CONTROLLER_GEN) rbac:roleName=horizon-operator paths=./examples/horizon/controller/... output:rbac:dir=./examples/horizon/config/rbac
	$(CONTROLLER_GEN) webhook paths=./examples/horizon/webhook/... output:webhook:dir=./examples/horizon/config/webhook
	$(CONTROLLER_GEN) webhook paths=./examples/keystone/webhook/... output:webhook:dir=./examples/keystone/config/webhook

verify-generate: generate ## Fail when the generated files are stale (regenerates, then diffs).
	@if ! git diff --exit-code -- $(GENERATED) || [ -n "$$(git ls-files --others --exclude-standard -- $(GENERATED))" ]; then \
		echo "generated files are stale or uncommitted: run 'make generate' and commit the result"; exit 1; fi

tidy: ## go mod tidy, keeping the pinned versions.
	$(GO) mod tidy
