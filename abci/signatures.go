package abci

import (
	"crypto/ed25519"
	"crypto/sha256"
	"encoding/binary"
	"fmt"
	"runtime"
	"sync"
	"sync/atomic"

	lru "github.com/hashicorp/golang-lru/v2"
	"github.com/prometheus/client_golang/prometheus"

	"github.com/ttld-dev/ttld/protocol"
)

// DefaultVerifiedSignatures is how many passed signature checks the node remembers:
// several full mempools' worth (CometBFT's mempool holds 50,000 transactions by ttld's
// default), at about 100 bytes an entry.
const DefaultVerifiedSignatures = 200_000

// verifiedSignatures is the node's protocol.Verifier. It checks a signature with
// ed25519 once and remembers that it passed, so that a transaction CheckTx verified is
// not verified again by its rechecks after every block, by the proposal checks and by
// FinalizeBlock: one ed25519 verification (about 36 µs here) instead of up to five.
//
// Only passed checks are remembered, under a hash of everything the check reads (the
// public key, the message and the signature), so every answer is ed25519.Verify's: a
// miss (an evicted entry, a transaction this node never saw before its block) simply
// verifies, and no block executes differently on a node whose cache holds something
// else. golang-lru's cache takes its own lock: the mempool and consensus connections
// share it.
type verifiedSignatures struct {
	passed *lru.Cache[[sha256.Size]byte, struct{}]
	// remembered, verified and invalid count the checks by how they were answered.
	remembered, verified, invalid prometheus.Counter
}

func newVerifiedSignatures(size int, m *Metrics) (*verifiedSignatures, error) {
	passed, err := lru.New[[sha256.Size]byte, struct{}](size)
	if err != nil {
		return nil, fmt.Errorf("abci: a cache of %d verified signatures: %w", size, err)
	}
	return &verifiedSignatures{
		passed:     passed,
		remembered: m.SignatureChecks.WithLabelValues("remembered"),
		verified:   m.SignatureChecks.WithLabelValues("verified"),
		invalid:    m.SignatureChecks.WithLabelValues("invalid"),
	}, nil
}

// Verify reports whether sig is pub's signature of message, as ed25519.Verify does.
func (v *verifiedSignatures) Verify(pub ed25519.PublicKey, message, sig []byte) bool {
	key := signatureKey(pub, message, sig)
	if _, ok := v.passed.Get(key); ok {
		v.remembered.Inc()
		return true
	}
	if !ed25519.Verify(pub, message, sig) {
		v.invalid.Inc()
		return false
	}
	v.passed.Add(key, struct{}{})
	v.verified.Inc()
	return true
}

// verifyAhead verifies checks on every core at once, for the cache: a block's
// transactions that did not come through this node's CheckTx (a block of another
// node's mempool, a replay, a node catching up) then find their signatures remembered
// when the block, sequentially, checks them. What fails is not remembered, and the
// block verifies it again and refuses it as usual.
//
// NB: the goroutines live here, outside the deterministic core, and touch nothing but
// the checks' bytes and the cache: the block's execution does not start before they
// end, and what they change is only how fast its checks are answered, never what.
func (v *verifiedSignatures) verifyAhead(checks []protocol.SignatureCheck) {
	workers := runtime.GOMAXPROCS(0)
	if n := len(checks) / minChecksPerWorker; n < workers {
		workers = n
	}
	if workers < 2 {
		return
	}
	onWorkers(len(checks), workers, func(i int) {
		c := checks[i]
		v.Verify(c.PubKey, c.Message, c.Signature)
	})
}

// onWorkers calls fn for every index below n, from workers goroutines that each take
// the next index not taken yet, and returns when every call has.
func onWorkers(n, workers int, fn func(i int)) {
	var next atomic.Int64
	var wg sync.WaitGroup
	for w := 0; w < workers; w++ {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for i := next.Add(1) - 1; i < int64(n); i = next.Add(1) - 1 {
				fn(int(i))
			}
		}()
	}
	wg.Wait()
}

// minChecksPerWorker is the fewest checks worth a goroutine of verifyAhead (a check is
// about 36 µs; starting a goroutine about 1).
const minChecksPerWorker = 8

// signatureKey is the hash a passed check is remembered under: the key and the
// signature, each behind its length, then the message, so that no two different
// checks share their bytes.
func signatureKey(pub ed25519.PublicKey, message, sig []byte) [sha256.Size]byte {
	h := sha256.New()
	var n [2]byte
	binary.BigEndian.PutUint16(n[:], uint16(len(pub)))
	h.Write(n[:])
	h.Write(pub)
	binary.BigEndian.PutUint16(n[:], uint16(len(sig)))
	h.Write(n[:])
	h.Write(sig)
	h.Write(message)
	var key [sha256.Size]byte
	h.Sum(key[:0])
	return key
}
