package drive

import "sync"

// memoShards is how many independently locked maps a Memo spreads its values over, so
// that readers on many cores seldom meet on one lock.
const memoShards = 64

// Memo serves the values of a KV that does not change (a saved version) from memory
// once it has read them: the check state's base, which CheckTx, every recheck and the
// dry run read again and again (the rules, the epoch's pool, the same signers) until
// the next commit replaces it. Iterations go to the parent; writes are refused.
//
// A Memo is safe for concurrent use when its parent is (a saved version is): the
// mempool checks transactions on many goroutines at once. Two goroutines that miss the
// same key both read the parent, which gives them the same value.
type Memo struct {
	parent KV
	shards [memoShards]memoShard
}

type memoShard struct {
	mu     sync.RWMutex
	values map[string][]byte // nil value: read and absent
}

// NewMemo reads through to parent, which must not change while the Memo is in use.
func NewMemo(parent KV) *Memo {
	m := &Memo{parent: parent}
	for i := range m.shards {
		m.shards[i].values = map[string][]byte{}
	}
	return m
}

// Get returns key's value, from memory after its first read.
func (m *Memo) Get(key []byte) ([]byte, error) {
	s := &m.shards[memoShardOf(key)]
	s.mu.RLock()
	v, ok := s.values[string(key)]
	s.mu.RUnlock()
	if ok {
		return v, nil
	}
	v, err := m.parent.Get(key)
	if err != nil {
		return nil, err
	}
	s.mu.Lock()
	s.values[string(key)] = v
	s.mu.Unlock()
	return v, nil
}

// memoShardOf spreads keys over the shards by their FNV-1a hash: keys share long
// prefixes and end in hashes, so every byte counts.
func memoShardOf(key []byte) uint32 {
	h := uint32(2166136261)
	for _, b := range key {
		h ^= uint32(b)
		h *= 16777619
	}
	return h % memoShards
}

func (m *Memo) Set([]byte, []byte) error { return ErrReadOnly }
func (m *Memo) Delete([]byte) error      { return ErrReadOnly }

// Iterate reads the parent's range.
func (m *Memo) Iterate(start, end []byte, fn func(key, value []byte) (bool, error)) error {
	return m.parent.Iterate(start, end, fn)
}
