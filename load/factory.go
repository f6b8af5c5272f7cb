package load

import (
	"crypto/sha256"
	"encoding/binary"
	"fmt"
	"math/rand/v2"
	"sync"
	"time"

	"github.com/ttld-dev/ttld/protocol"
)

// Factory makes the transaction generators of one run: every Client it makes (one per
// connection, in the order the connections open) generates the run's transactions
// and records when it generated each, by hash.
type Factory struct {
	workload Workload
	b        builder
	// signers are every funded signer: the ttld workloads' recipients, and split
	// between the clients as their senders.
	signers []Signer
	// nonces[i] is the next nonce of signers[i], as the node answered before the run.
	nonces []uint64
	// kvstoreSize is the size of KVStore transactions.
	kvstoreSize int

	mu      sync.Mutex
	clients []*Client
}

// Shape is how a run's load is spread: Connections clients, each sending
// transactions of Size bytes, at most Count fresh ones (0: no bound).
type Shape struct {
	Connections, Size, Count int
}

// FactoryOptions configure NewFactory.
type FactoryOptions struct {
	Workload Workload
	Run      RunID
	// ChainID signs the ttld workloads' transactions.
	ChainID string
	// Contract is the document workloads' contract (Setup).
	Contract protocol.ContractID
	// Signers and Nonces (the next nonce of each, from the node) are the ttld
	// workloads' senders; at least two, and one per connection.
	Signers []Signer
	Nonces  []uint64
	// KVStoreSize is the size of KVStore's transactions, MinKVStoreSize at least.
	KVStoreSize int
}

// NewFactory returns the factory of a run.
func NewFactory(o FactoryOptions) (*Factory, error) {
	switch {
	case o.Workload == KVStore && o.KVStoreSize < MinKVStoreSize:
		return nil, fmt.Errorf("load: kvstore transactions of %d bytes: want at least %d (a unique key, '=' and a value)", o.KVStoreSize, MinKVStoreSize)
	case o.Workload != KVStore && len(o.Signers) < 2:
		return nil, fmt.Errorf("load: %d signers: a transfer needs another signer to send to", len(o.Signers))
	case len(o.Nonces) != len(o.Signers):
		return nil, fmt.Errorf("load: %d nonces for %d signers", len(o.Nonces), len(o.Signers))
	}
	return &Factory{
		workload:    o.Workload,
		b:           builder{workload: o.Workload, chainID: o.ChainID, contract: o.Contract, run: o.Run},
		signers:     o.Signers,
		nonces:      o.Nonces,
		kvstoreSize: o.KVStoreSize,
	}, nil
}

// ValidateConfig checks that s's connections can each own a signer and that s's size
// is the size the workload's transactions have.
func (f *Factory) ValidateConfig(s Shape) error {
	n := s.Connections
	if f.workload == KVStore {
		if n > 0xffff {
			return fmt.Errorf("%d connections: kvstore keys number at most 65,535 clients", n)
		}
		if s.Size != f.kvstoreSize {
			return fmt.Errorf("size %d: this run's kvstore transactions are %d bytes", s.Size, f.kvstoreSize)
		}
		return nil
	}
	if n > len(f.signers) {
		return fmt.Errorf("%d connections for %d signers: each connection owns at least one signer", n, len(f.signers))
	}
	size, err := TxSize(f.workload)
	if err != nil {
		return err
	}
	if s.Size != size {
		return fmt.Errorf("size %d: %s transactions are %d bytes", s.Size, f.workload, size)
	}
	return nil
}

// sentPrealloc bounds the send times a client makes room for up front: a run's count
// can be far above what a saturated node lets it send.
const sentPrealloc = 1 << 16

// NewClient makes the client of the next connection. Client k of n owns the signers
// [k·S/n, (k+1)·S/n) of the S signers, so no two clients share a signer (and a nonce).
func (f *Factory) NewClient(s Shape) (*Client, error) {
	f.mu.Lock()
	defer f.mu.Unlock()
	n, k := s.Connections, len(f.clients)
	if k >= n {
		return nil, fmt.Errorf("load: client %d of a run of %d connections", k+1, n)
	}
	c := &Client{f: f, index: k, sent: make(map[[32]byte]int64, prealloc(s.Count))}
	if f.workload == KVStore {
		var seed [32]byte
		copy(seed[:], f.b.run[:])
		binary.BigEndian.PutUint64(seed[16:], uint64(k))
		c.rng = rand.NewChaCha8(seed)
	} else {
		lo, hi := k*len(f.signers)/n, (k+1)*len(f.signers)/n
		for i := lo; i < hi; i++ {
			c.own = append(c.own, i)
			c.nonces = append(c.nonces, f.nonces[i])
		}
	}
	f.clients = append(f.clients, c)
	return c, nil
}

// prealloc is the room for send times a client of count transactions makes up front.
func prealloc(count int) int {
	if count <= 0 {
		return sentPrealloc
	}
	return min(count, sentPrealloc)
}

// Sent returns the send time (Unix nanoseconds) of every transaction the clients
// generated, by hash (CometBFT's: sha256 of the bytes). Call it once the sending has
// ended: the clients are not locked.
func (f *Factory) Sent() map[[32]byte]int64 {
	f.mu.Lock()
	defer f.mu.Unlock()
	n := 0
	for _, c := range f.clients {
		n += len(c.sent)
	}
	out := make(map[[32]byte]int64, n)
	for _, c := range f.clients {
		for h, at := range c.sent {
			out[h] = at
		}
	}
	return out
}

// Client generates one connection's transactions. Only the connection's one sending
// goroutine calls GenerateTx, so the client needs no lock.
type Client struct {
	f     *Factory
	index int
	// own are the indexes in f.signers of the client's signers; nonces[i] is the next
	// nonce of own[i]; next is the one that signs the next transaction.
	own    []int
	nonces []uint64
	next   int
	// seq numbers the client's kvstore transactions; rng fills their values.
	seq uint64
	rng *rand.ChaCha8
	// sent is when each generated transaction was generated, by hash.
	sent map[[32]byte]int64
}

// GenerateTx returns the next transaction: for a ttld workload, signed by the next of
// the client's signers in turn with its next nonce, so each signer's nonces increase
// by one from what the node answered; for KVStore the next unique key.
func (c *Client) GenerateTx() ([]byte, error) {
	var tx []byte
	if c.f.workload == KVStore {
		tx = kvstoreTx(c.f.b.run, c.index, c.seq, c.f.kvstoreSize, c.rng)
		c.seq++
	} else {
		i := c.next
		c.next = (c.next + 1) % len(c.own)
		s := c.own[i]
		tx = c.f.b.tx(c.f.signers[s], c.f.signers[(s+1)%len(c.f.signers)], c.nonces[i])
		c.nonces[i]++
	}
	c.sent[sha256.Sum256(tx)] = time.Now().UnixNano()
	return tx, nil
}
