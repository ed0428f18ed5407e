# Rosetta: the two commands a fresh machine needs are `make run` and `make test`.
SHELL := bash
.SHELLFLAGS := -eu -o pipefail -c
MAKEFLAGS += --warn-undefined-variables --no-builtin-rules
.DEFAULT_GOAL := help

GO        ?= go
PKGS      := ./...
FUZZTIME  ?= 5s
BENCHTIME ?= 1s
VERSION   := $(shell git describe --tags --always --dirty 2>/dev/null || echo dev)
LDFLAGS   := -s -w -X main.version=$(VERSION)

help: ## list the targets
	@grep -hE '^[a-zA-Z_-]+:.*## ' $(MAKEFILE_LIST) | awk -F':.*## ' '{printf "  %-14s %s\n", $$1, $$2}'

run: ## start the gateway on its embedded default (demo channel, printed key)
	$(GO) run -ldflags "$(LDFLAGS)" ./cmd/rosetta serve $(if $(CONFIG),-config $(CONFIG),)

build: ## build bin/rosetta
	$(GO) build -ldflags "$(LDFLAGS)" -o bin/rosetta ./cmd/rosetta

test: deps vet ## everything CI runs: vet, all tests with -race, the tests without it (allocations, all splits), a short fuzz of every target
	$(GO) test -race -shuffle=on -count=1 $(PKGS)
	$(MAKE) --no-print-directory allocs
	$(MAKE) --no-print-directory fuzz FUZZTIME=$(FUZZTIME) FUZZPARALLEL=1

deps: ## install the Debian packages the tests need (PostgreSQL, Chromium, Firefox) when missing
	./scripts/test-deps.sh

allocs: ## the tests built without the race detector: zero allocations (it allocates), every read split of the pair streams (it is 20× slower)
	$(GO) test -count=1 -run 'Alloc|AllSplits' $(PKGS)

vet: ## gofmt check and go vet
	@out=$$(gofmt -l $$(git ls-files '*.go' 2>/dev/null || find . -name '*.go')); \
	  if [ -n "$$out" ]; then echo "gofmt needed:"; echo "$$out"; exit 1; fi
	$(GO) vet $(PKGS)

FUZZPARALLEL ?=
fuzz: ## run every Fuzz target of the module (fuzz/ and the packages' own), each in its package, for FUZZTIME (default 5s; `make fuzz FUZZTIME=10m` for a long run)
	FUZZTIME=$(FUZZTIME) FUZZPARALLEL=$(FUZZPARALLEL) GO=$(GO) ./scripts/fuzz.sh

bench: ## Go micro-benchmarks with allocations, the split-placement self-test, then the load harness
	$(GO) test -run='^$$' -bench=. -benchmem -benchtime=$(BENCHTIME) ./codec/... ./proxy/...
	ROSETTA_BENCH_SPLIT=1 $(GO) test -count=1 -run='^TestSplitPlacement$$' ./bench/
	$(MAKE) --no-print-directory bench-proxy

bench-proxy: ## load harness: gateway vs direct at 16/64/256 connections, stream and not
	$(GO) run ./bench -c 16,64,256

tidy: ## go mod tidy (-e: a test-only dependency of a dependency is refused by the module proxy here)
	$(GO) mod tidy -e

.PHONY: help run build test deps vet allocs fuzz bench bench-proxy tidy
