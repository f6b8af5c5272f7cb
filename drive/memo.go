package drive

// Memo serves the values of a KV that does not change (a saved version) from memory
// once it has read them: the check state's base, which CheckTx, every recheck and the
// dry run read again and again (the rules, the epoch's pool, the same signers) until
// the next commit replaces it. Iterations go to the parent; writes are refused. A Memo
// is not safe for concurrent use: the check state is used under its lock.
type Memo struct {
	parent KV
	values map[string][]byte // nil value: read and absent
}

// NewMemo reads through to parent, which must not change while the Memo is in use.
func NewMemo(parent KV) *Memo { return &Memo{parent: parent, values: map[string][]byte{}} }

// Get returns key's value, from memory after its first read.
func (m *Memo) Get(key []byte) ([]byte, error) {
	if v, ok := m.values[string(key)]; ok {
		return v, nil
	}
	v, err := m.parent.Get(key)
	if err != nil {
		return nil, err
	}
	m.values[string(key)] = v
	return v, nil
}

func (m *Memo) Set([]byte, []byte) error { return ErrReadOnly }
func (m *Memo) Delete([]byte) error      { return ErrReadOnly }

// Iterate reads the parent's range.
func (m *Memo) Iterate(start, end []byte, fn func(key, value []byte) (bool, error)) error {
	return m.parent.Iterate(start, end, fn)
}
