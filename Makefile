# Rosetta: the two commands a fresh machine needs are `make run` and `make test`.
SHELL := bash
.SHELLFLAGS := -eu -o pipefail -c
MAKEFLAGS += --warn-undefined-variables --no-builtin-rules
.DEFAULT_GOAL := help

GO        ?= go
PKGS      := ./...
FUZZTIME  ?= 5s
BENCHTIME ?= 1s
CONFIG    ?=
VERSION   := $(shell git describe --tags --always --dirty 2>/dev/null || echo dev)
LDFLAGS   := -s -w -X main.version=$(VERSION)

help: ## list the targets
	@grep -hE '^[a-zA-Z_-]+:.*## ' $(MAKEFILE_LIST) | awk -F':.*## ' '{printf "  %-14s %s\n", $$1, $$2}'

# run starts the built binary, not `go run`: go run exits 1 when interrupted, whatever its
# child's status. On a terminal, job control (set -m) makes the gateway the terminal's
# foreground process group, so that Ctrl-C reaches the gateway alone: it drains, exits 0, and
# so does make (make itself, when interrupted, ends by SIGINT whatever its child did). Ctrl-Z
# stops the gateway alone too: the loop then stops make's own group, so the shell gets the
# terminal back as usual, and `fg` hands it to the gateway again.
run: build ## start the gateway on its embedded default (demo channel, printed key); CONFIG=rosetta.yaml for a file
	@if ! [ -t 0 ]; then exec ./bin/rosetta serve $(RUN_ARGS); fi; \
	  set -m; status=0; ./bin/rosetta serve $(RUN_ARGS) || status=$$?; \
	  while [ $$status -eq 148 ] && jobs %1 >/dev/null 2>&1; do \
	    kill -STOP 0; status=0; fg %1 >/dev/null || status=$$?; \
	  done; exit $$status

RUN_ARGS = $(if $(CONFIG),-config $(CONFIG),)

build: ## build bin/rosetta
	$(GO) build -ldflags "$(LDFLAGS)" -o bin/rosetta ./cmd/rosetta

test: deps vet ## everything CI runs: vet, all tests with -race, the tests without it (allocations, all splits), a short fuzz of every target
	$(GO) test -race -shuffle=on -count=1 $(PKGS)
	$(MAKE) --no-print-directory allocs
	$(GO) test -count=1 -tags purego ./codec/... # the portable build: its word loads are bounds-checked, so a read past a slice's end fails here
	$(MAKE) --no-print-directory fuzz FUZZTIME=$(FUZZTIME) FUZZPARALLEL=1

deps: ## install the Debian packages the tests need (PostgreSQL, Chromium, Firefox) when missing
	./scripts/test-deps.sh

allocs: ## the tests built without the race detector: zero allocations (it allocates), every read split of the pair streams (it is 20× slower)
	$(GO) test -count=1 -run 'Alloc|AllSplits' $(PKGS)

vet: ## gofmt check and go vet
	@out=$$(gofmt -l $$(git ls-files '*.go' 2>/dev/null || find . -name '*.go')); \
	  if [ -n "$$out" ]; then echo "gofmt needed:"; echo "$$out"; exit 1; fi
	$(GO) vet $(PKGS)
	$(GO) vet -tags purego ./codec/... # the *_other.go files, which amd64 builds leave out

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
