# onekube build, test and packaging entry points. `make help` lists them.

GO          ?= go
VERSION     ?= $(shell git describe --tags --always --dirty 2>/dev/null || echo 0.0.0-dev)
LDFLAGS     := -s -w -X github.com/onekube/onekube/cmd/internal/version.Version=$(VERSION)
BIN         := $(CURDIR)/bin
TOOLS       := $(CURDIR)/.tools

# The real Kubernetes programs of the test bed and the kubeadm test oracle,
# built once from the Go module proxy into a version-keyed cache. The tag
# must match the k8s.io/kubernetes pin in go.mod: kubeadm v1.N only accepts
# kubernetesVersion >= v1.(N-1).0.
KUBEADM_TAG   ?= v1.37.2
ONEKUBE_CACHE ?= $(HOME)/.cache/onekube
TESTBED_BIN   ?= $(ONEKUBE_CACHE)/testbed-$(KUBEADM_TAG)
KUBEADM       ?= $(TESTBED_BIN)/kubeadm
# The release a cluster of the upgrade tests starts from (issue 21): the bed
# builds it too, into its own version-keyed directory.
UPGRADE_FROM_TAG ?= v1.36.3
TESTBED_FROM_BIN ?= $(ONEKUBE_CACHE)/testbed-$(UPGRADE_FROM_TAG)

.PHONY: help build test golden-update bench bench-report bench-readme demo fuzz testbed kubeadm-oracle e2e-real package clean

help:
	@grep -E '^[a-z-]+:.*## ' $(MAKEFILE_LIST) | sed 's/:.*## /\t/'

build: ## build onekube-flow, onekube-agent and onekubed into bin/
	CGO_ENABLED=0 $(GO) build -trimpath -ldflags '$(LDFLAGS)' -o $(BIN)/ ./cmd/onekube-flow ./cmd/onekube-agent ./cmd/onekubed

test: ## the full test suite, as CI runs it (race detector on)
	$(GO) vet ./...
	@test -z "$$(gofmt -l $$(git ls-files '*.go'))" || { echo 'gofmt needed:'; gofmt -l $$(git ls-files '*.go'); exit 1; }
	KUBEADM=$$( [ -x '$(KUBEADM)' ] && echo '$(KUBEADM)' ) ONEKUBE_TESTBED_BIN='$(TESTBED_BIN)' $(GO) test -race -count=1 ./...

# The packages that keep golden files (each defines an -update flag).
GOLDEN_PKGS := ./flow ./flow/register ./flow/status ./agent/kubeadm ./context/onegatesim ./appliance/marketplace

golden-update: ## rewrite golden files from the current renderers
	$(GO) test $(GOLDEN_PKGS) -count=1 -update

bench: ## the micro-benchmarks quoted in the README
	$(GO) test -run '^$$' -bench . -benchmem ./...

# 1 master + N workers (10, 100, 500; both deployments) in-process on a
# virtual clock with production settings (docs/bench.md); about a minute on
# 2 cores. BENCH_FLAGS=-short runs N = 10 and 50, as CI does through
# TestBenchReportShort.
bench-report: ## time to ready and OneGate cost at N = 10/100/500 (virtual clock), one table
	$(GO) run ./agent/internal/benchreport $(BENCH_FLAGS)

bench-readme: ## bench-report, written into docs/measured.md
	$(GO) run ./agent/internal/benchreport -readme docs/measured.md $(BENCH_FLAGS)

# agent/testbed/build.sh: a scratch module requiring k8s.io/kubernetes at the
# tag with upstream's staging replaces pinned to the matching v0.x tags, one
# go build of kubeadm, kube-apiserver, kube-controller-manager,
# kube-scheduler and kubectl with the version stamped (kubeadm's skew checks
# read it), and the etcd release the tag requires. Existing binaries are
# kept: 12 min cold per release on 2 shared cores (docs/measured.md), 0 s
# when present. Both releases: the pin, and the one upgrades start from.
testbed: ## build the real Kubernetes binaries of the test bed into $(TESTBED_BIN) and $(TESTBED_FROM_BIN)
	GO='$(GO)' agent/testbed/build.sh $(KUBEADM_TAG) '$(TESTBED_BIN)'
	GO='$(GO)' agent/testbed/build.sh $(UPGRADE_FROM_TAG) '$(TESTBED_FROM_BIN)'

kubeadm-oracle: testbed ## the real kubeadm (test oracle): the test bed's, so CI compiles it once

# The real control plane end to end (needs root for namespaces; under CI=true
# a missing capability fails instead of skipping). One package, run
# sequentially: bed tests must not fight over 2 cores.
e2e-real: testbed ## real kubeadm + control plane: 1 master + 2 workers through OneGate and the agent
	ONEKUBE_TESTBED_BIN='$(TESTBED_BIN)' $(GO) test -tags realbed -count=1 -p 1 -v -timeout 45m ./agent/testbed/e2e/ $(E2E_FLAGS)

clean:
	rm -rf $(BIN) dist

# --- packaging/ and appliance/ -------------------------------------------------
# nfpm and the HCL parser live in packaging/tools/go.mod, away from the main
# module. The tests install their own apt packages (debootstrap, rpm, ...) and
# cache the Debian root under ONEKUBE_CACHE (default ~/.cache/onekube).

.PHONY: package-test appliance-check marketplace appliance-image upgrade-bundle

package: build ## deb and rpm of the three binaries, units, config and docs into dist/
	GO='$(GO)' ONEKUBE_BIN='$(BIN)' packaging/package.sh

package-test: package ## check the packages, install the .deb in a debootstrap root, systemd-analyze verify
	packaging/test.sh

appliance-check: package ## appliance: shellcheck, Packer recipe validation, install steps in a debootstrap root
	GO='$(GO)' appliance/check.sh

marketplace: ## regenerate appliance/marketplace/*.yaml from flow/ (the drift test fails until you do)
	$(GO) test ./appliance/marketplace/... -run Golden -update

appliance-image: package ## build the appliance qcow2 for real with Packer (needs KVM and the internet)
	appliance/build.sh

# The upgrade bundle of one release (issue 21, docs/upgrade-bundle.md): an
# ext4 image labelled ONEKUBE-BUNDLE with kubeadm, kubelet, kubectl and the
# release's images, to register as a DATABLOCK image. Downloads from
# dl.k8s.io and registry.k8s.io (needs curl and skopeo; no root);
# BUNDLE_FROM=DIR builds offline from DIR/bin and DIR/images.
BUNDLE_VERSION ?= $(KUBEADM_TAG)
BUNDLE_OUT     ?= dist/onekube-bundle-$(BUNDLE_VERSION).img
upgrade-bundle: ## the air-gapped upgrade bundle of KUBE_VERSION (default the pin) into dist/
	@mkdir -p $(dir $(BUNDLE_OUT))
	appliance/bundle.sh $(or $(KUBE_VERSION),$(BUNDLE_VERSION)) '$(if $(KUBE_VERSION),dist/onekube-bundle-$(KUBE_VERSION).img,$(BUNDLE_OUT))'

demo: ## a simulated service (1 master + 3 workers) on a virtual clock: timeline, time to ready vs the limit (DEMO_FLAGS=-live: real processes)
	$(GO) run ./agent/internal/demo $(DEMO_FLAGS)

# Fuzzes every Fuzz* target for FUZZTIME each (go test runs only one target
# per -fuzz invocation). `make test` already replays every seed corpus.
FUZZTIME ?= 10s
fuzz: ## run every fuzz target for FUZZTIME (default 10s) each
	@set -e; for pkg in $$($(GO) list ./...); do \
		for f in $$($(GO) test -list '^Fuzz' $$pkg | grep '^Fuzz' || true); do \
			echo "== $$pkg $$f"; \
			$(GO) test $$pkg -run '^$$' -fuzz "^$$f$$" -fuzztime $(FUZZTIME); \
		done; \
	done
