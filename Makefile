# The README's two commands are `make demo` and `make test`; everything they
# need is installed by the targets below, so a fresh machine needs nothing else.

GO ?= go

.PHONY: demo test deps vet

demo:
	$(GO) run ./cmd/zarlog demo

# deps installs what the tests need beyond Go (Debian packages). It is a no-op
# when they are present.
deps:
	./.ci/deps

vet:
	$(GO) vet ./...

test: deps vet
	$(GO) test ./...
