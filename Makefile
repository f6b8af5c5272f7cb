# ttld: the two commands a new user needs are `make devnet` and `make test`.

GO ?= $(shell command -v go 2>/dev/null || echo /usr/local/go/bin/go)
BIN := bin/ttld
DEVNET_HOME ?= $(HOME)/.ttld
SIM_BLOCKS ?= 20000
SIM_SEED ?= 1

.PHONY: all build devnet test bench fuzz sim clean

all: build

## build: the ttld binary in bin/ (static, CGO off)
build:
	CGO_ENABLED=0 $(GO) build -trimpath -o $(BIN) ./cmd/ttld

## devnet: a one-validator local chain on embedded goleveldb, RPC on 127.0.0.1:26657
devnet: build
	./$(BIN) devnet --home $(DEVNET_HOME)

## test: vet, then every test (unit, datadriven scenarios, determinism, end to end)
test:
	$(GO) vet ./...
	$(GO) test -count=1 -timeout 14m ./...

## bench: transfers/s through FinalizeBlock+Commit, proofs generated and verified per second
bench:
	@echo "cores: $$(nproc)"
	$(GO) test -run '^$$' -bench . -benchtime 20000x -count=1 ./abci/

## fuzz: the transaction and range-answer decoders, 30 s each
fuzz:
	$(GO) test -run '^$$' -fuzz '^FuzzDecode$$' -fuzztime 30s ./protocol/
	$(GO) test -run '^$$' -fuzz '^FuzzDecodeEntries$$' -fuzztime 30s ./proofs/

## sim: a longer determinism simulation (SIM_BLOCKS blocks, seed SIM_SEED)
sim:
	$(GO) test -count=1 -timeout 0 -run '^TestDeterminism$$' ./sim/ -v -sim.blocks $(SIM_BLOCKS) -sim.seed $(SIM_SEED)

clean:
	rm -rf bin
