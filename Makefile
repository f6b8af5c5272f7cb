# ttld: the two commands a new user needs are `make devnet` and `make test`.

GO ?= $(shell command -v go 2>/dev/null || echo /usr/local/go/bin/go)
BIN := bin/ttld
DEVNET_HOME ?= $(HOME)/.ttld
SIM_BLOCKS ?= 20000
SIM_SEED ?= 1
# What ttld version prints and the image's labels carry.
VERSION ?= $(shell git describe --always --dirty 2>/dev/null || echo dev)
COMMIT ?= $(shell git rev-parse HEAD 2>/dev/null)
LDFLAGS = -X main.version=$(VERSION) -X main.commit=$(COMMIT)

.PHONY: all build devnet test bench fuzz sim clean

all: build

## build: the ttld binary in bin/ (static, CGO off)
build:
	CGO_ENABLED=0 $(GO) build -trimpath -ldflags "$(LDFLAGS)" -o $(BIN) ./cmd/ttld

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

# The four-validator docker-compose devnet (docker-compose.yml). COMPOSE is Debian's
# docker-compose 1.x where it exists, the docker CLI's plugin otherwise.
COMPOSE ?= $(shell command -v docker-compose >/dev/null 2>&1 && echo docker-compose || echo docker compose)
IMAGE ?= ttld:local
DEVNET_DIR ?= .devnet
DEVNET_PROJECT ?= ttld
DEVNET_COMPOSE = TTLD_DEVNET_DIR=$(abspath $(DEVNET_DIR)) TTLD_UID=$$(id -u) TTLD_GID=$$(id -g) $(COMPOSE) -p $(DEVNET_PROJECT) -f docker-compose.yml

.PHONY: image image-binary devnet-up devnet-down devnet-reset e2e-devnet

# The image's binary: Linux on the Docker engine's architecture (whatever the host is),
# static, stripped; apart from bin/ttld, which runs on the host.
IMAGE_BIN := bin/linux/ttld
DOCKER_ARCH ?= $(shell docker version -f '{{.Server.Arch}}' 2>/dev/null)

## image-binary: $(IMAGE_BIN), for linux on the Docker engine's architecture
image-binary:
	@test -n "$(DOCKER_ARCH)" || { echo "no Docker engine answers (docker version): cannot tell its architecture; set DOCKER_ARCH=amd64 or arm64" >&2; exit 1; }
	CGO_ENABLED=0 GOOS=linux GOARCH=$(DOCKER_ARCH) $(GO) build -trimpath -ldflags "-s -w $(LDFLAGS)" -o $(IMAGE_BIN) ./cmd/ttld

## image: the image $(IMAGE), FROM scratch, holding only $(IMAGE_BIN); labelled with VERSION and COMMIT
image: image-binary
	docker build --build-arg TTLD_BINARY=$(IMAGE_BIN) --build-arg VERSION=$(VERSION) --build-arg COMMIT=$(COMMIT) -t $(IMAGE) .

## devnet-up: four validators in docker-compose (homes in $(DEVNET_DIR), written if missing); RPC on 127.0.0.1:26657, 26757, 26857, 26957
devnet-up: build image
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
e2e-devnet: build image
	$(GO) test -tags devnet -count=1 -timeout 20m -v ./e2e/devnet/
