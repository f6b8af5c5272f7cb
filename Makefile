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

## fuzz: the transaction and range-answer decoders and whole blocks of transitions, 30 s each (FUZZTIME)
FUZZTIME ?= 30s
fuzz:
	$(GO) test -run '^$$' -fuzz '^FuzzDecode$$' -fuzztime $(FUZZTIME) ./protocol/
	$(GO) test -run '^$$' -fuzz '^FuzzDecodeEntries$$' -fuzztime $(FUZZTIME) ./proofs/
	$(GO) test -run '^$$' -fuzz '^FuzzBlocks$$' -fuzztime $(FUZZTIME) ./sim/

## sim: a longer determinism simulation (SIM_BLOCKS blocks, seed SIM_SEED)
sim:
	$(GO) test -count=1 -timeout 0 -run '^(TestDeterminism|TestBlocksProperty)$$' ./sim/ -v -sim.blocks $(SIM_BLOCKS) -sim.seed $(SIM_SEED)

clean:
	rm -rf bin

# The four-validator docker-compose devnet (docker-compose.yml). COMPOSE is Debian's
# docker-compose 1.x where it exists, the docker CLI's plugin otherwise.
COMPOSE ?= $(shell command -v docker-compose >/dev/null 2>&1 && echo docker-compose || echo docker compose)
IMAGE ?= ttld:local
DEVNET_DIR ?= .devnet
DEVNET_PROJECT ?= ttld
DEVNET_COMPOSE = TTLD_DEVNET_DIR=$(abspath $(DEVNET_DIR)) TTLD_UID=$$(id -u) TTLD_GID=$$(id -g) $(COMPOSE) -p $(DEVNET_PROJECT) -f docker-compose.yml

.PHONY: image devnet-up devnet-down devnet-reset e2e-devnet

## image: the static ttld in bin/ and the image $(IMAGE), FROM scratch, holding only it
image: build
	docker build -t $(IMAGE) .

## devnet-up: four validators in docker-compose (homes in $(DEVNET_DIR), written if missing); RPC on 127.0.0.1:26657, 26757, 26857, 26957
devnet-up: image
	@test -d $(DEVNET_DIR)/node0 || ./$(BIN) testnet --validators 4 --output $(DEVNET_DIR) --subnet-base $${TTLD_DEVNET_NET:-172.28.0}.10
	$(DEVNET_COMPOSE) up -d
	@p=$${TTLD_DEVNET_PORTS:-26}; echo "devnet up, homes in $(DEVNET_DIR): RPC http://127.0.0.1:$${p}657 $${p}757 $${p}857 $${p}957, metrics $${p}660 $${p}760 $${p}860 $${p}960"

## devnet-down: stop the docker-compose devnet, keeping its chain in $(DEVNET_DIR)
devnet-down:
	$(DEVNET_COMPOSE) down --remove-orphans

## devnet-reset: stop the devnet and delete $(DEVNET_DIR): the next devnet-up starts a new chain
devnet-reset: devnet-down
	rm -rf $(DEVNET_DIR)

## e2e-devnet: the fault test: four validators in docker-compose, load, kill/pause/disconnect, agreement, proofs, replay
e2e-devnet: image
	$(GO) test -tags devnet -count=1 -timeout 20m -v ./e2e/devnet/
