# The README's two commands are `make demo` and `make test`. A fresh machine
# needs Go (and make); `make test` installs the rest (.ci/deps).

SHELL := bash
GO ?= go
# A package's tests may take longer than go test's default 10 minutes on a
# loaded 2-core machine (the publisher's browser tests under -race); a hang
# still fails well inside CI's limit.
TEST_TIMEOUT ?= 20m

# The packages where concurrency lives run under the race detector; the
# others run without it (it would cost time and find nothing).
RACE_PKGS := ./ledger/... ./internal/serve ./internal/demo ./sdk/... ./publisher ./witness \
	./follow ./mirror ./audit ./internal/httpserve ./storage ./bucket ./internal/litewitness \
	./internal/sigsumwitness ./internal/toolproc ./merkle
# The packages that import sync but run without it, and why (TestRacePackages
# keeps these two lists covering every package that imports sync):
#   cmd/zarlog: its tests run the built binaries, which -race would not instrument
#   events/drand: a sync.Once around the pinned chains, no goroutines
#   internal/bench: the measurements, tested from one goroutine
#   internal/workload: a sync.OnceValue around the bench's drand chain key, no
#     goroutines; internal/bench's and the ledger's tests use it
#   internal/testlog, internal/testonly: test support, run under -race by the
#     packages using them
#   rules: a sync.Pool of the move generator's buffers, no goroutines; the
#     ledger's tests check moves with it under -race
#   internal/faults: the fault harness; its test runs the built binaries in
#     network namespaces, which -race would not instrument
RACE_EXEMPT := ./cmd/zarlog ./events/drand ./rules ./internal/bench ./internal/workload ./internal/testlog ./internal/testonly ./internal/faults

.PHONY: demo test deps vet lint

# demo builds zarlog (saying so: the first build takes a minute) and runs
# `zarlog demo`: add flags with ARGS="--games 20 --exit". The binary, not
# `go run`, so that Ctrl-C reaches the demo itself, which stops cleanly and
# exits 0. `set -m` makes the demo the terminal's foreground job, in a
# process group of its own, so that Ctrl-C reaches it alone: make, which
# dies of a SIGINT once its child has exited (status 130 in the shell),
# never gets one. (`|| exit` keeps bash from exec'ing the demo in place of
# itself, which would leave it in make's group; TestMakeDemoCtrlC.)
#
# The binary is static (CGO_ENABLED=0), as deploy/build-image.sh builds the
# image's: the memory bound of docs/OPERATIONS.md §9 is measured on such a
# build (TestServeRSS; the tests build the binaries so, TestShippedBuilds).
demo:
	@echo "building zarlog into bin/ (the first build downloads and compiles for a minute or so)..."
	@CGO_ENABLED=0 $(GO) build -o bin/zarlog ./cmd/zarlog
	@set -m; ./bin/zarlog demo $(ARGS) || exit $$?

# deps installs what the tests need beyond Go (Debian packages: Chromium,
# GNU Backgammon, Python 3). It does nothing when they are present.
deps:
	./.ci/deps

vet:
	$(GO) vet ./...

# lint runs staticcheck, pinned by go.mod's tool directive (v0.8.2).
lint:
	$(GO) tool staticcheck ./...

test: deps vet lint
	$(GO) test -race -timeout $(TEST_TIMEOUT) $(RACE_PKGS)
	$(GO) test -timeout $(TEST_TIMEOUT) $$($(GO) list ./... | grep -vxF -f <($(GO) list $(RACE_PKGS)))
