# ttld: the two commands a new user needs are `make devnet` and `make test`.

GO ?= $(shell command -v go 2>/dev/null || echo /usr/local/go/bin/go)
BIN := bin/ttld
DEVNET_HOME ?= $(HOME)/.ttld
SIM_BLOCKS ?= 20000
SIM_SEED ?= 1
# What ttld version prints and the image's labels carry.
VERSION ?= $(shell git describe --always --dirty 2>/dev/null || echo dev)
COMMIT ?= $(shell git rev-parse HEAD 2>/dev/null)
# PROTOCOL_NEWEST, when set, builds binaries that implement no protocol version after it
# (protocol.newestLimit): what a binary released before the later versions is, which
# stops where the chain moves past it. The upgrade test runs one (image-old).
PROTOCOL_NEWEST ?=
LDFLAGS = -X main.version=$(VERSION) -X main.commit=$(COMMIT) $(if $(PROTOCOL_NEWEST),-X github.com/ttld-dev/ttld/protocol.newestLimit=$(PROTOCOL_NEWEST))

.PHONY: all build devnet test bench fuzz sim clean web-wasm

all: build

## build: the ttld binary in bin/ (static, CGO off)
build: web-wasm
	CGO_ENABLED=0 $(GO) build -trimpath -ldflags "$(LDFLAGS)" -o $(BIN) ./cmd/ttld

## web-wasm: the web view's proof check as WebAssembly (gzipped) and Go's wasm_exec.js, in web/static, which the binary embeds
WASM := web/static/verify.wasm.gz
# WASM_TAGS: force64bit has curve25519-voi use its 64-bit field arithmetic; the others
# change nothing the check does. grpcnotrace leaves gRPC's request tracing out
# (golang.org/x/net/trace and the html/template it renders with, whose reflective
# method calls make the linker keep every exported method of every type linked);
# testify_yaml_fail leaves testify's YAML comparisons out (go.yaml.in/yaml/v3). Both
# come only with CometBFT's types, which the check needs; docs/BENCHMARKS.md ("The web
# view") has what each dependency costs.
WASM_TAGS := force64bit,grpcnotrace,testify_yaml_fail
web-wasm: $(WASM) web/static/wasm_exec.js
$(WASM): $(shell find web/verify web/check proofs query drive protocol feeschedule -name '*.go' -not -name '*_test.go') go.mod go.sum Makefile
	GOOS=js GOARCH=wasm $(GO) build -tags $(WASM_TAGS) -trimpath -ldflags=-s -o web/static/verify.wasm ./web/verify
	gzip -9 -n -f web/static/verify.wasm
web/static/wasm_exec.js:
	cp "$$($(GO) env GOROOT)/lib/wasm/wasm_exec.js" $@

## devnet: a one-validator local chain on embedded goleveldb, RPC on 127.0.0.1:26657
devnet: build
	./$(BIN) devnet --home $(DEVNET_HOME)

## test: the web view's WebAssembly check (which only some packages' files may reach), vet, then every test (unit, datadriven scenarios, fuzz seeds, a short simulation, end to end against in-process nodes at test speed), in four minutes or less on two cores (docs/TESTING.md)
test: web-wasm
	$(GO) vet ./...
	$(GO) test -count=1 -p 4 -parallel 4 -timeout 10m ./...

## bench: transfers/s through FinalizeBlock+Commit, proofs generated and verified per second; an epoch-change block against an empty one; document creates/s and proven 50-document queries over 10k and 1M documents (about 8 minutes: the million is written first). BENCH_COUNT samples of each (-count), for benchstat. The transfers and the proofs run in separate processes: a proof benchmark run after the transfers' chains shares their heap with the garbage collector and measured up to 2.4 times slower (docs/BENCHMARKS.md)
BENCH_COUNT ?= 1
bench:
	@echo "cores: $$(nproc)"
	$(GO) test -run '^$$' -bench '^BenchmarkCreditTransfers$$' -benchtime 20000x -count=$(BENCH_COUNT) ./abci/
	$(GO) test -run '^$$' -bench '^(BenchmarkProofGenerate|BenchmarkProofVerify|BenchmarkRangeProof)$$' -benchtime 20000x -count=$(BENCH_COUNT) ./abci/
	$(GO) test -run '^$$' -bench '^BenchmarkEpochChange$$' -benchtime 20x -count=$(BENCH_COUNT) ./abci/
	$(GO) test -run '^$$' -bench '^BenchmarkDocuments$$' -benchtime 1000x -count=$(BENCH_COUNT) -timeout 30m ./abci/

## bench-web: the web view's pages and their JSON form on a node of 100,000 documents (BenchmarkPages: about six minutes, the documents written first), and what CometBFT's index writes for a transaction (BenchmarkIndexCost)
.PHONY: bench-web
bench-web: web-wasm
	@echo "cores: $$(nproc)"
	$(GO) test -run '^$$' -bench '^BenchmarkPages$$' -benchtime 5x -timeout 30m ./web/
	$(GO) test -run '^$$' -bench '^BenchmarkIndexCost$$' -benchtime 1x ./abci/

## bench-ttl: document time to live: expire_documents at 128 documents a block (1 and 3 indexes, 10k and 1M live documents) against an empty block and the owners' deletes of the same types; a steady flood of one-hour documents at 100, 128 and 1,000 a block for three hours of block time (about 10 minutes: the million is written first)
.PHONY: bench-ttl
bench-ttl:
	@echo "cores: $$(nproc)"
	$(GO) test -run '^$$' -bench '^BenchmarkExpireDocuments$$' -benchtime 4x -count=1 -timeout 30m ./abci/
	$(GO) test -run '^$$' -bench '^BenchmarkTTLFlood$$' -benchtime 1x -count=2 -timeout 30m ./abci/

## bench-renewal: renewable ttl (protocol version 15): a steady flood of one-hour sessions, 64 a block, each renewed 0, 3 and 6 times 20 minutes apart before it is left to expire, for five hours of two-minute blocks: the live sessions' plateau, the cleanup keeping up, block time and the fees of a create and a renewal (about 3 minutes; CSV into $(BENCH_CSV) with TTLD_BENCH_CSV set)
.PHONY: bench-renewal
bench-renewal:
	@echo "cores: $$(nproc), $$(uptime)"
	$(GO) test -run '^$$' -bench '^BenchmarkRenewalFlood$$' -benchtime 1x -count=2 -timeout 30m ./abci/

## bench-snapshot: state sync: a snapshot taken and restored at 100,000 and 1,000,000 documents, its time and size (10 – 20 minutes: the million is written first)
.PHONY: bench-snapshot
bench-snapshot:
	@echo "cores: $$(nproc)"
	$(GO) test -run '^$$' -bench '^BenchmarkSnapshot$$' -benchtime 1x -count=1 -timeout 60m ./abci/

## fuzz: the transaction, document and range-answer decoders, the validator set's records, document data, the contract and query parsers, every query path's request data, whole blocks of transitions and snapshot chunks, 30 s each (FUZZTIME)
FUZZTIME ?= 30s
fuzz:
	$(GO) test -run '^$$' -fuzz '^FuzzDecode$$' -fuzztime $(FUZZTIME) ./protocol/
	$(GO) test -run '^$$' -fuzz '^FuzzDecodeDocument$$' -fuzztime $(FUZZTIME) ./protocol/
	$(GO) test -run '^$$' -fuzz '^FuzzParseDocumentData$$' -fuzztime $(FUZZTIME) ./protocol/
	$(GO) test -run '^$$' -fuzz '^FuzzParseContract$$' -fuzztime $(FUZZTIME) ./protocol/
	$(GO) test -run '^$$' -fuzz '^FuzzParseQuery$$' -fuzztime $(FUZZTIME) ./query/
	$(GO) test -run '^$$' -fuzz '^FuzzDecodeEntries$$' -fuzztime $(FUZZTIME) ./proofs/
	$(GO) test -run '^$$' -fuzz '^FuzzValidatorRecords$$' -fuzztime $(FUZZTIME) ./drive/
	$(GO) test -run '^$$' -fuzz '^FuzzQueryPaths$$' -fuzztime $(FUZZTIME) ./abci/
	$(GO) test -run '^$$' -fuzz '^FuzzAPI$$' -fuzztime $(FUZZTIME) ./web/
	$(GO) test -run '^$$' -fuzz '^FuzzBlocks$$' -fuzztime $(FUZZTIME) ./sim/
	$(GO) test -run '^$$' -fuzz '^FuzzApply$$' -fuzztime $(FUZZTIME) ./snapshot/
	$(GO) test -run '^$$' -fuzz '^FuzzDecodeManifest$$' -fuzztime $(FUZZTIME) ./snapshot/

## sim: the determinism simulation at depth (SIM_BLOCKS blocks, seed SIM_SEED; make test runs 800 blocks of seed 1)
sim:
	$(GO) test -count=1 -timeout 0 -run '^(TestDeterminism|TestBlocksProperty)$$' ./sim/ -v -sim.blocks $(SIM_BLOCKS) -sim.seed $(SIM_SEED)

clean:
	rm -rf bin

# The four-validator docker-compose devnet (docker-compose.yml). COMPOSE is Debian's
# docker-compose 1.x where it exists, the docker CLI's plugin otherwise. The variables
# below are passed to compose, whose own defaults (.env) are the same, so that a plain
# `docker-compose up -d` starts the network devnet-up does.
COMPOSE ?= $(shell command -v docker-compose >/dev/null 2>&1 && echo docker-compose || echo docker compose)
IMAGE ?= ttld:local
DEVNET_DIR ?= .devnet
DEVNET_PROJECT ?= ttld
DEVNET_PORTS ?= $(or $(TTLD_DEVNET_PORTS),26)
DEVNET_NET ?= $(or $(TTLD_DEVNET_NET),172.28.0)
# FULL_NODES=1 adds docker-compose.fullnodes.yml's full node (full0); with STATE_SYNC=1
# it joins by state sync (README, "Joining a network by state sync").
FULL_NODES ?= 0
STATE_SYNC ?= 0
# TESTNET_FLAGS are more flags of the ttld testnet that writes a new chain's homes, such
# as --protocol-version 13 --signal-version 13 --epoch-length 60 (README, "Upgrading a
# devnet in place").
TESTNET_FLAGS ?=
# The nodes run as you, so that what they write in the homes is yours; when you are
# root, as 1000:1000 (never root), and devnet-up hands the node homes to that user.
DEVNET_UID ?= $(shell [ "$$(id -u)" = 0 ] && echo 1000 || id -u)
DEVNET_GID ?= $(shell [ "$$(id -u)" = 0 ] && echo 1000 || id -g)
DEVNET_FILES = -f docker-compose.yml $(if $(filter-out 0,$(FULL_NODES)),-f docker-compose.fullnodes.yml)
DEVNET_ENV = TTLD_DEVNET_DIR=$(abspath $(DEVNET_DIR)) TTLD_DEVNET_PORTS=$(DEVNET_PORTS) TTLD_DEVNET_NET=$(DEVNET_NET) TTLD_UID=$(DEVNET_UID) TTLD_GID=$(DEVNET_GID)
DEVNET_COMPOSE = $(DEVNET_ENV) $(COMPOSE) -p $(DEVNET_PROJECT) $(DEVNET_FILES)

.PHONY: image image-binary image-old devnet-up devnet-down devnet-reset e2e-devnet e2e-upgrade e2e-validators e2e-statesync e2e-web web-screenshots chromium

# The image's binary: Linux on the Docker engine's architecture (whatever the host is),
# static, stripped; apart from bin/ttld, which runs on the host.
IMAGE_BIN := bin/linux/ttld
DOCKER_ARCH ?= $(shell docker version -f '{{.Server.Arch}}' 2>/dev/null)

## image-binary: $(IMAGE_BIN), for linux on the Docker engine's architecture
image-binary: web-wasm
	@test -n "$(DOCKER_ARCH)" || { echo "no Docker engine answers (docker version): cannot tell its architecture; set DOCKER_ARCH=amd64 or arm64" >&2; exit 1; }
	CGO_ENABLED=0 GOOS=linux GOARCH=$(DOCKER_ARCH) $(GO) build -trimpath -ldflags "-s -w $(LDFLAGS)" -o $(IMAGE_BIN) ./cmd/ttld

## image: the image $(IMAGE), FROM scratch, holding only $(IMAGE_BIN); labelled with VERSION and COMMIT
image: image-binary
	docker build --build-arg TTLD_BINARY=$(IMAGE_BIN) --build-arg VERSION=$(VERSION) --build-arg COMMIT=$(COMMIT) -t $(IMAGE) .

## devnet-up: four validators in docker-compose (homes in $(DEVNET_DIR), written if missing; FULL_NODES=1 adds a full node, STATE_SYNC=1 has it join by state sync); RPC on 127.0.0.1:26657, 26757, 26857, 26957
devnet-up: build image
	@case "$(FULL_NODES)" in 0|1) ;; *) echo "FULL_NODES=$(FULL_NODES): docker-compose.fullnodes.yml holds one full node; use 0 or 1" >&2; exit 1;; esac
	@case "$(STATE_SYNC)$(FULL_NODES)" in 10) echo "STATE_SYNC=1 needs FULL_NODES=1: the full node is the one that joins by state sync" >&2; exit 1;; esac
	@test -d $(DEVNET_DIR)/node0 || ./$(BIN) testnet --validators 4 --full-nodes $(FULL_NODES) $(if $(filter 1,$(STATE_SYNC)),--state-sync) --output $(DEVNET_DIR) --subnet-base $(DEVNET_NET).10 --host-ports $(DEVNET_PORTS) $(TESTNET_FLAGS)
	@test "$(FULL_NODES)" = 0 || test -d $(DEVNET_DIR)/full0 || { echo "$(DEVNET_DIR) holds a chain written without a full node: make devnet-reset, then make devnet-up FULL_NODES=1" >&2; exit 1; }
	@test "$$(id -u)" != 0 || for d in $(DEVNET_DIR)/node* $(DEVNET_DIR)/full*; do test ! -d "$$d" || chown -R $(DEVNET_UID):$(DEVNET_GID) "$$d"; done
	$(DEVNET_COMPOSE) up -d node0 node1 node2 node3
	@# A full node that joins by state sync trusts a header read from a running validator
	@# first (ttld statesync-config); it then waits for a snapshot, one every 100 blocks.
	@if test "$(FULL_NODES)" = 1 && grep -q '^trust_hash = ""' $(DEVNET_DIR)/full0/config/config.toml && sed -n '/^\[statesync\]/,/^\[/p' $(DEVNET_DIR)/full0/config/config.toml | grep -q '^enable = true'; then \
		./$(BIN) --home $(DEVNET_DIR)/full0 --node http://127.0.0.1:$(DEVNET_PORTS)657 statesync-config --wait 60s && \
		{ test "$$(id -u)" != 0 || chown -R $(DEVNET_UID):$(DEVNET_GID) $(DEVNET_DIR)/full0; }; \
	fi
	@test "$(FULL_NODES)" = 0 || $(DEVNET_COMPOSE) up -d full0
	@p=$(DEVNET_PORTS); echo "devnet up, homes in $(DEVNET_DIR): RPC http://127.0.0.1:$${p}657 $${p}757 $${p}857 $${p}957, metrics $${p}660 $${p}760 $${p}860 $${p}960"
	@test "$(FULL_NODES)" = 0 || echo "full node full0: RPC http://127.0.0.1:$(DEVNET_PORTS)557, metrics $(DEVNET_PORTS)560"
	@echo "health: $(COMPOSE) -p $(DEVNET_PROJECT) ps; keys: ./bin/ttld --home $(DEVNET_DIR)/client keys show dev"
	@echo "try: ./bin/ttld --home $(DEVNET_DIR)/client --node http://127.0.0.1:$(DEVNET_PORTS)757 tx address transfer --from dev --to 0000000000000000000000000000000000000002 --amount 5 --commit"

## devnet-down: stop the docker-compose devnet (full node included), keeping its chain in $(DEVNET_DIR)
devnet-down:
	$(DEVNET_ENV) $(COMPOSE) -p $(DEVNET_PROJECT) -f docker-compose.yml -f docker-compose.fullnodes.yml down --remove-orphans

## devnet-reset: stop the devnet and delete $(DEVNET_DIR): the next devnet-up starts a new chain
devnet-reset: devnet-down
	rm -rf $(DEVNET_DIR)

## e2e-devnet: the fault test: four validators in docker-compose, load, kill/pause/disconnect, agreement, proofs, replay
e2e-devnet: build image
	$(GO) test -tags devnet -count=1 -timeout 20m -v -run TestDevnetFaults ./e2e/devnet/

# The upgrade test's old binary: protocol versions up to OLD_PROTOCOL only.
OLD_PROTOCOL ?= 13
OLD_IMAGE ?= ttld:local-$(OLD_PROTOCOL)

## image-old: the image $(OLD_IMAGE), of a ttld binary built to implement protocol versions up to $(OLD_PROTOCOL) only (PROTOCOL_NEWEST), as one released before the later versions
image-old:
	$(MAKE) image PROTOCOL_NEWEST=$(OLD_PROTOCOL) IMAGE=$(OLD_IMAGE) IMAGE_BIN=bin/linux/ttld-$(OLD_PROTOCOL)

## e2e-upgrade: the upgrade in place: a four-validator devnet on 13 moves to 14 as its validators restart signalling it, under load; a full node left on $(OLD_IMAGE) stops at the switch and catches up on the new image; agreement, ttl documents expiring on 14; then on to 15, where sessions renew on every node; replay across the switches
e2e-upgrade: build image image-old
	$(GO) test -tags devnet -count=1 -timeout 25m -v -run TestDevnetUpgrade ./e2e/devnet/

## e2e-validators: the validators change by vote on a devnet switched to 16 in place: a full node voted in, a key rotated, a validator removed, an equivocation's evidence; the CLI's and the browser's checks verified across every change; agreement, replay
e2e-validators: build image
	$(GO) test -tags devnet -count=1 -timeout 20m -v -run TestDevnetValidators ./e2e/devnet/

## e2e-statesync: state sync: a devnet with a history of thousands of blocks and documents; one full node joins by state sync, another by executing every block; agreement, proofs, ttl documents from the snapshot deleted alike, replay from the snapshot
e2e-statesync: build image
	$(GO) test -tags devnet -count=1 -timeout 20m -v -run TestDevnetStateSync ./e2e/devnet/

## e2e-web: the web view in headless Chromium against an in-process node (installs Debian's chromium when it is missing)
e2e-web: chromium web-wasm
	$(GO) test -tags web -count=1 -timeout 10m -v ./e2e/web/

## web-screenshots: e2e-web, saving a screenshot of each page into docs/web for the README
web-screenshots: chromium web-wasm
	TTLD_SCREENSHOTS=$(CURDIR)/docs/web $(GO) test -tags web -count=1 -timeout 10m ./e2e/web/

# chromium: Debian's chromium, installed when missing (as root, or through sudo).
chromium:
	@command -v chromium >/dev/null 2>&1 || { \
		SUDO=$$( [ "$$(id -u)" = 0 ] || echo sudo ); \
		$$SUDO apt-get update -qq && DEBIAN_FRONTEND=noninteractive $$SUDO apt-get install -y -qq chromium >/dev/null; }

# Load: a throwaway ttld chain under load (scripts/load.sh), and ttld against CometBFT's
# kvstore at saturation (scripts/bench-compare.sh); bin/ttld-load is the load client
# both use, over websockets or keep-alive HTTP connections.
LOAD_BIN := bin/ttld-load
LOAD_WORKLOAD ?= transfers
LOAD_CLIENT ?= ws
LOAD_TIME ?= 30
LOAD_RATE ?= 500
LOAD_CONNECTIONS ?= 2
LOAD_SIGNERS ?= 1000
LOAD_CSV ?=
BENCH_TIME ?= 30
BENCH_CLIENTS ?= ws,http
BENCH_INDEXERS ?= kv,null
BENCH_SIGNER_COUNTS ?= 1000,10000

.PHONY: load-build load bench-compare

## load-build: bin/ttld and the load client bin/ttld-load
load-build: build
	CGO_ENABLED=0 $(GO) build -trimpath -o $(LOAD_BIN) ./cmd/ttld-load

## load: LOAD_WORKLOAD (transfers, address-transfers, documents, documents-ttl) for LOAD_TIME s at LOAD_RATE tx/s on each of LOAD_CONNECTIONS connections of LOAD_CLIENT (ws or http) against a throwaway one-validator chain (LOAD_SIGNERS signers in genesis); prints tx/s, latency, retries after a full mempool, not committed; LOAD_CSV appends the per-block throughput
load: load-build
	LOAD_WORKLOAD=$(LOAD_WORKLOAD) LOAD_CLIENT=$(LOAD_CLIENT) LOAD_TIME=$(LOAD_TIME) LOAD_RATE=$(LOAD_RATE) LOAD_CONNECTIONS=$(LOAD_CONNECTIONS) LOAD_SIGNERS=$(LOAD_SIGNERS) LOAD_CSV=$(LOAD_CSV) scripts/load.sh

## bench-compare: ttld against CometBFT's kvstore (cometbft at go.mod's version) at saturation, every workload × indexer (BENCH_INDEXERS: kv,null) × client (BENCH_CLIENTS: ws,http) × ttld signers (BENCH_SIGNER_COUNTS: 1000,10000; kvstore once), BENCH_TIME s each: 48 runs, about 45 minutes by default (90 at most); prints each ttld run beside its kvstore run with the ratio and the nodes' cores; appends docs/bench/clients.csv, clients-cpu.csv and clients-throughput.csv (scripts/bench-compare.sh lists its BENCH_ variables)
bench-compare: load-build
	GO=$(GO) BENCH_TIME=$(BENCH_TIME) BENCH_CLIENTS=$(BENCH_CLIENTS) BENCH_INDEXERS=$(BENCH_INDEXERS) BENCH_SIGNER_COUNTS=$(BENCH_SIGNER_COUNTS) scripts/bench-compare.sh

# The "Performance" issue's figures (docs/BENCHMARKS.md): in-process execution against
# raw IAVL, proofs at 10k and 1M documents, the cleanup and the ttl flood with the
# node's IAVL cache, replay against the chain's block rate. The ttl benchmarks write
# their figures as CSV into BENCH_CSV (TTLD_BENCH_CSV), which make plots draws.
BENCH_CSV ?= docs/bench

.PHONY: bench-perf plots

## bench-perf: execution vs raw IAVL, proofs at 10k and 1M documents, expire_documents at 10k and 1M live documents, the ttl flood (CSV into $(BENCH_CSV)), replay of a loaded in-process chain, likes into time-range indexes (about 32 minutes: two millions are written)
bench-perf:
	@echo "cores: $$(nproc), $$(uptime)"
	@mkdir -p $(BENCH_CSV)
	$(GO) test -run '^$$' -bench '^BenchmarkExecutionVsIAVL$$' -benchtime 20x -count=1 -timeout 30m ./abci/
	$(GO) test -run '^$$' -bench '^BenchmarkProofs$$' -benchtime 2000x -count=1 -timeout 60m ./abci/
	TTLD_BENCH_CSV=$(abspath $(BENCH_CSV)) $(GO) test -run '^$$' -bench '^BenchmarkExpireDocuments$$' -benchtime 4x -count=1 -timeout 60m ./abci/
	TTLD_BENCH_CSV=$(abspath $(BENCH_CSV)) $(GO) test -run '^$$' -bench '^BenchmarkTTLFlood$$' -benchtime 1x -count=1 -timeout 30m ./abci/
	$(GO) test -run '^$$' -bench '^BenchmarkReplay$$' -benchtime 1x -count=1 -timeout 20m ./replay/
	$(GO) test -run '^$$' -bench '^BenchmarkTimeRangeLikes$$' -benchtime 20x -count=1 -timeout 30m ./abci/

## plots: docs/throughput.png, docs/cleanup.png and docs/backlog.png from the CSV files in $(BENCH_CSV) (a missing one is skipped)
plots:
	$(GO) run ./scripts/plot -in $(BENCH_CSV) -out docs
