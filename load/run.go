package load

import (
	"context"
	"crypto/rand"
	"fmt"
	"io"
	"time"

	rpchttp "github.com/cometbft/cometbft/rpc/client/http"
	"github.com/gofrs/uuid"
	"golang.org/x/sync/errgroup"

	"github.com/ttld-dev/ttld/client"
	"github.com/ttld-dev/ttld/protocol"
)

// RunID names a run: the loadtime payloads' id, a UUID's 16 bytes.
type RunID [16]byte

// NewRunID returns a random run id.
func NewRunID() RunID {
	var r RunID
	rand.Read(r[:])
	return r
}

func (r RunID) String() string { return uuid.UUID(r).String() }

// RunConfig configure Run. Every run is bounded: Count transactions per connection,
// Time seconds of sending, Drain of waiting for the mempool to empty.
type RunConfig struct {
	// Node is the node's RPC URL, such as http://127.0.0.1:26657.
	Node     string
	Workload Workload
	// Like is, for KVStore, the ttld workload whose transaction size the kvstore
	// transactions have (unless Size says otherwise) and whose name the results carry.
	Like Workload
	// Size is, for KVStore, the transaction size; 0: Like's.
	Size int
	// Seed and Signers name the ttld workloads' signers: 0..Signers-1 of Seed, funded
	// in genesis (AddSigners).
	Seed    []byte
	Signers int
	// Contract is the document workloads' contract; nil: Setup registers a new one.
	Contract *protocol.ContractID
	// Transport is how the transactions reach the node: WebSocket or HTTP.
	Transport Transport
	// Connections, Rate (broadcasts per second per connection, retries included), Time
	// (seconds of sending fresh transactions) and Count (the most fresh transactions
	// each connection sends; 0: Rate × Time) shape the load, and Broadcast ("sync" or
	// "async") is the broadcast_tx method it is sent with.
	//
	// NB: the node reads a websocket's requests one at a time, each after its CheckTx,
	// so a Rate above what it takes in fills the connection's socket buffers and the
	// writes wait; an HTTP connection has one request in flight, so its rate is also
	// bounded by the node's answers. Either way the node is offered what it takes.
	Connections, Rate, Time, Count int
	Broadcast                      string
	// Drain bounds two waits: after the sending time, for the transactions a full
	// mempool refused to be taken when sent again (and for the answers still due); then
	// for the node's mempool to empty: what is still in it counts as not committed.
	Drain time.Duration
	// NodePID, when not 0, is the node's process on this machine, whose CPU time over
	// the load and the drain Run reads (ProcessCPU).
	NodePID int
	// Log is where Run says what it is doing; nil: nowhere.
	Log io.Writer
}

// Result is what a run sent and what the node committed of it.
type Result struct {
	Run    RunID
	System string
	// Workload is the run's workload; for a KVStore run, the ttld workload whose size
	// its transactions have (RunConfig.Like).
	Workload Workload
	TxSize   int
	// Transport, Broadcast, Connections and Rate are the load's shape; Signers the ttld
	// workloads' signers (0 for kvstore); Contract the documents' contract.
	Transport         Transport
	Broadcast         string
	Connections, Rate int
	Signers           int
	Contract          *protocol.ContractID
	// TxIndex is the node's transaction indexer as its status says: "on" or "off".
	TxIndex string
	// Sent counts the transactions generated and sent (each once, however many times
	// it was sent again); Sending how the node answered them; NotCommitted those no
	// block included by the end of the drain (refused by CheckTx, refused by a full
	// mempool at their last try, dropped, or still in the mempool); Left the mempool's
	// transactions then.
	Sent, NotCommitted, Left int
	Sending
	Summary
	// Blocks are the blocks from the one before First to the one after Last.
	Blocks []Block
	// Wall is the time of the load and the drain; NodeCPU (when NodeMeasured) and
	// ToolCPU the CPU time the node and this process used meanwhile.
	Wall         time.Duration
	NodeCPU      time.Duration
	NodeMeasured bool
	ToolCPU      time.Duration
	// NodePeakRSS (when NodeMeasured) is the node's largest resident set since it
	// started, in bytes.
	NodePeakRSS int64
}

// Run sends cfg's load to the node (sendAll, over cfg.Transport), sending again what a
// full mempool refused, waits for the mempool to drain, then reads the blocks the
// run's transactions went into and summarises them. Ending ctx ends the sending early, and the run with ctx's
// error.
func Run(ctx context.Context, cfg RunConfig) (Result, error) {
	logf := func(format string, args ...any) {
		if cfg.Log != nil {
			fmt.Fprintf(cfg.Log, format+"\n", args...)
		}
	}
	method, err := broadcastMethod(cfg.Broadcast)
	if err != nil {
		return Result{}, err
	}
	if cfg.Connections < 1 || cfg.Rate < 1 || cfg.Time < 1 || cfg.Count < 0 {
		return Result{}, fmt.Errorf("load: %d connections × %d tx/s for %d s, count %d: want at least one of each", cfg.Connections, cfg.Rate, cfg.Time, cfg.Count)
	}
	rpc, err := rpchttp.NewWithClient(cfg.Node, "/websocket", httpClient())
	if err != nil {
		return Result{}, fmt.Errorf("load: RPC client of %s: %w", cfg.Node, err)
	}
	st, err := rpc.Status(ctx)
	if err != nil {
		return Result{}, fmt.Errorf("load: status of %s: %w", cfg.Node, err)
	}
	c := client.New(rpc, client.Options{ChainID: st.NodeInfo.Network})
	// Queries read a saved state, and the span of the run starts at a block before it.
	// NB: block 2, not 1: CometBFT stores a block before the application commits it, so
	// at height 1 the application may have no saved state yet (a query of the latest
	// one then fails with "version 0 is not kept", seen once in CI).
	if _, err := c.WaitForHeight(ctx, 2); err != nil {
		return Result{}, fmt.Errorf("load: wait for the first block: %w", err)
	}
	res, opts, err := plan(ctx, c, cfg, st.NodeInfo.Network, logf)
	if err != nil {
		return Result{}, err
	}
	f, err := NewFactory(opts)
	if err != nil {
		return Result{}, err
	}
	res.Transport, res.Broadcast, res.TxIndex = cfg.Transport, cfg.Broadcast, st.NodeInfo.Other.TxIndex
	shape := Shape{Connections: cfg.Connections, Size: res.TxSize, Count: cfg.Count}
	if shape.Count == 0 {
		shape.Count = cfg.Rate * cfg.Time
	}
	if err := f.ValidateConfig(shape); err != nil {
		return Result{}, fmt.Errorf("load: %w", err)
	}
	clients := make([]*Client, cfg.Connections)
	for i := range clients {
		if clients[i], err = f.NewClient(shape); err != nil {
			return Result{}, err
		}
	}
	before, err := c.LatestHeight(ctx)
	if err != nil {
		return Result{}, fmt.Errorf("load: latest height: %w", err)
	}

	logf("sending %s for %d s over %s: %d connections × %d tx/s, broadcast_tx_%s, %d-byte transactions (run %s)", cfg.Workload.Describe(), cfg.Time, cfg.Transport, cfg.Connections, cfg.Rate, cfg.Broadcast, res.TxSize, res.Run)
	cpu, err := startCPU(cfg.NodePID)
	if err != nil {
		return Result{}, err
	}
	start := time.Now()
	end := start.Add(time.Duration(cfg.Time) * time.Second)
	sc := sendConfig{node: cfg.Node, transport: cfg.Transport, method: method, rate: cfg.Rate, count: shape.Count, end: end, retryEnd: end.Add(cfg.Drain)}
	if res.Sending, err = sendAll(ctx, sc, clients); err != nil {
		return Result{}, err
	}
	logf("sent; waiting up to %s for the mempool to drain", cfg.Drain)
	if res.Left, err = drain(ctx, rpc, c, cfg.Drain); err != nil {
		return Result{}, err
	}
	res.Wall = time.Since(start)
	if err := cpu.stop(&res); err != nil {
		return Result{}, err
	}

	top, err := c.LatestHeight(ctx)
	if err != nil {
		return Result{}, fmt.Errorf("load: latest height: %w", err)
	}
	// The block after the last one read dates it (Summarise).
	if _, err := c.WaitForHeight(ctx, top+1); err != nil {
		return Result{}, fmt.Errorf("load: wait for block %d: %w", top+1, err)
	}
	sent := f.Sent()
	res.Sent = len(sent)
	if n := res.Sending.total(); n != res.Sent {
		return Result{}, fmt.Errorf("load: %d transactions generated, %d answered or given up", res.Sent, n)
	}
	logf("reading blocks %d to %d", before, top+1)
	blocks, err := Collect(ctx, rpc, before, top+1, sent, Payloads{Run: res.Run, Connections: uint64(cfg.Connections), Rate: uint64(cfg.Rate), Size: uint64(res.TxSize)})
	if err != nil {
		return Result{}, err
	}
	if res.Summary, err = Summarise(blocks, res.Run); err != nil {
		return Result{}, err
	}
	res.NotCommitted = res.Sent - res.Committed - res.Refused
	res.Blocks = blocks[res.First-1-before : res.Last+2-before]
	return res, nil
}

// plan is what a run sends: its result's description and its factory's options. For
// a ttld workload it registers the documents' contract (unless cfg names one) and
// reads every signer's next nonce from the node.
func plan(ctx context.Context, c *client.Client, cfg RunConfig, chainID string, logf func(string, ...any)) (Result, FactoryOptions, error) {
	res := Result{Run: NewRunID(), System: cfg.Workload.System(), Workload: cfg.Workload, Connections: cfg.Connections, Rate: cfg.Rate}
	if cfg.Workload != KVStore {
		res.Signers = cfg.Signers
	}
	opts := FactoryOptions{Workload: cfg.Workload, Run: res.Run, ChainID: chainID}
	var err error
	if cfg.Workload == KVStore {
		res.Workload, res.TxSize = cfg.Like, cfg.Size
		if res.TxSize == 0 {
			if res.TxSize, err = TxSize(cfg.Like); err != nil {
				return Result{}, FactoryOptions{}, err
			}
		}
		opts.KVStoreSize = res.TxSize
		return res, opts, nil
	}
	if res.TxSize, err = TxSize(cfg.Workload); err != nil {
		return Result{}, FactoryOptions{}, err
	}
	opts.Signers = DeriveSigners(cfg.Seed, cfg.Signers)
	if len(opts.Signers) < 2 {
		return Result{}, FactoryOptions{}, fmt.Errorf("load: %d signers: a transfer needs another signer to send to", cfg.Signers)
	}
	if cfg.Workload.documents() {
		if res.Contract = cfg.Contract; res.Contract == nil {
			logf("registering the %s contract", cfg.Workload)
			id, err := Setup(ctx, c, opts.Signers[0], cfg.Workload)
			if err != nil {
				return Result{}, FactoryOptions{}, err
			}
			res.Contract = &id
		}
		opts.Contract = *res.Contract
	}
	logf("reading the next nonces of %d signers", len(opts.Signers))
	if opts.Nonces, err = nextNonces(ctx, c, cfg.Workload.signerKind(), opts.Signers); err != nil {
		return Result{}, FactoryOptions{}, err
	}
	return res, opts, nil
}

// nextNonces asks the node for each signer's next nonce as kind (its address's or its
// identity's), eight at a time.
func nextNonces(ctx context.Context, c *client.Client, kind protocol.SignerKind, signers []Signer) ([]uint64, error) {
	out := make([]uint64, len(signers))
	g, ctx := errgroup.WithContext(ctx)
	g.SetLimit(8)
	for i, s := range signers {
		g.Go(func() error {
			var err error
			if kind == protocol.SignerAddress {
				out[i], err = c.NextAddressNonce(ctx, s.Address)
			} else {
				out[i], err = c.NextIdentityNonce(ctx, s.Identity)
			}
			if err != nil {
				return fmt.Errorf("load: next nonce of signer %d: %w", s.Index, err)
			}
			return nil
		})
	}
	return out, g.Wait()
}
