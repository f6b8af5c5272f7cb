package drive

import (
	"bytes"
	"errors"
	"sort"

	"github.com/ttld-dev/ttld/feeschedule"
)

// KV is the view of the tree that block execution reads and writes through: the working
// tree, the check state, or a staging Cache over either.
type KV interface {
	// Get returns the value of key, or nil when it is absent.
	Get(key []byte) ([]byte, error)
	Set(key, value []byte) error
	Delete(key []byte) error
	// Iterate calls fn for every key in [start, end) in ascending order (end nil: no
	// upper bound) until fn returns stop.
	Iterate(start, end []byte, fn func(key, value []byte) (stop bool, err error)) error
}

// ErrEmptyValue: IAVL stores no empty values, so neither does any KV here.
var ErrEmptyValue = errors.New("drive: empty value")

// ErrReadOnly: a write reached a saved version.
var ErrReadOnly = errors.New("drive: saved versions are read-only")

type op struct {
	key, value []byte // value nil: delete
}

// Cache stages writes over a parent KV, reads its own writes, counts the operations it
// serves, and writes through to the parent in the order the writes were made (IAVL's
// root depends on insertion order) on Flush. Discarding it changes nothing.
type Cache struct {
	parent  KV
	pending map[string]int // key -> index of its latest op
	ops     []op
	meter   feeschedule.Operations
}

// NewCache stages over parent.
func NewCache(parent KV) *Cache {
	return &Cache{parent: parent, pending: map[string]int{}}
}

// Operations returns what the cache has counted so far.
func (c *Cache) Operations() feeschedule.Operations { return c.meter }

// Get reads key: a staged write if there is one, else the parent's value (one seek and
// the bytes loaded are counted).
func (c *Cache) Get(key []byte) ([]byte, error) {
	if i, ok := c.pending[string(key)]; ok {
		return c.ops[i].value, nil
	}
	v, err := c.parent.Get(key)
	if err != nil {
		return nil, err
	}
	c.meter.Seeks++
	c.meter.BytesLoaded += uint64(len(key) + len(v))
	if v == nil {
		c.meter.AbsentReads++
	}
	return v, nil
}

// Set stages key = value and counts its bytes and the hash of the new leaf.
func (c *Cache) Set(key, value []byte) error {
	if len(value) == 0 {
		return ErrEmptyValue
	}
	c.stage(key, append([]byte(nil), value...))
	c.meter = c.meter.Add(SetCost(key, len(value)))
	return nil
}

// SetCost is what writing a value of valueLen bytes at key counts: its bytes, and one
// hash call over the new leaf. A caller that must price a write before making it (a fee
// that pays for its own balance write) uses it.
func SetCost(key []byte, valueLen int) feeschedule.Operations {
	n := len(key) + valueLen
	return feeschedule.Operations{
		BytesWritten: uint64(n),
		HashCalls:    1,
		HashBlocks:   feeschedule.HashBlocksOf(n),
	}
}

// Delete stages the removal of key and counts its bytes.
func (c *Cache) Delete(key []byte) error {
	c.stage(key, nil)
	c.meter.BytesWritten += uint64(len(key))
	return nil
}

func (c *Cache) stage(key, value []byte) {
	k := append([]byte(nil), key...)
	c.pending[string(k)] = len(c.ops)
	c.ops = append(c.ops, op{key: k, value: value})
}

// Iterate merges the staged writes into the parent's keys. It counts one seek, and the
// bytes of every pair it hands to fn as loaded.
func (c *Cache) Iterate(start, end []byte, visit func(key, value []byte) (bool, error)) error {
	c.meter.Seeks++
	fn := func(k, v []byte) (bool, error) {
		c.meter.BytesLoaded += uint64(len(k) + len(v))
		return visit(k, v)
	}
	var staged []string
	for k := range c.pending {
		if inRange([]byte(k), start, end) {
			staged = append(staged, k)
		}
	}
	sort.Strings(staged)
	i := 0
	// emit sends the staged keys below limit (all of them when limit is nil).
	emit := func(limit []byte) (bool, error) {
		for ; i < len(staged); i++ {
			k := []byte(staged[i])
			if limit != nil && bytes.Compare(k, limit) >= 0 {
				return false, nil
			}
			v := c.ops[c.pending[staged[i]]].value
			if v == nil {
				continue
			}
			if stop, err := fn(k, v); stop || err != nil {
				return true, err
			}
		}
		return false, nil
	}
	stopped := false
	err := c.parent.Iterate(start, end, func(k, v []byte) (bool, error) {
		if stop, err := emit(k); stop || err != nil {
			stopped = true
			return true, err
		}
		if idx, ok := c.pending[string(k)]; ok {
			i++ // the staged op for k replaces the parent's entry
			if nv := c.ops[idx].value; nv != nil {
				stop, err := fn(k, nv)
				stopped = stop
				return stop, err
			}
			return false, nil
		}
		stop, err := fn(k, v)
		stopped = stop
		return stop, err
	})
	if err != nil || stopped {
		return err
	}
	_, err = emit(nil)
	return err
}

func inRange(k, start, end []byte) bool {
	return (start == nil || bytes.Compare(k, start) >= 0) && (end == nil || bytes.Compare(k, end) < 0)
}

// Flush writes the staged operations to the parent in the order they were made, and
// empties the cache. A key written twice is written twice: the order of writes is what
// the block made, and the tree sees exactly that.
func (c *Cache) Flush() error {
	for _, o := range c.ops {
		var err error
		if o.value == nil {
			err = c.parent.Delete(o.key)
		} else {
			err = c.parent.Set(o.key, o.value)
		}
		if err != nil {
			return err
		}
	}
	c.Discard()
	return nil
}

// Charge adds ops to the counts, for work done outside the cache.
func (c *Cache) Charge(ops feeschedule.Operations) { c.meter = c.meter.Add(ops) }

// Unmetered runs fn on the cache without counting what it reads and writes: work the
// platform does that nobody pays for (a time-range drain). Its writes are staged as
// any others.
func (c *Cache) Unmetered(fn func() error) error {
	kept := c.meter
	err := fn()
	c.meter = kept
	return err
}

// Discard drops the staged operations and the counts.
func (c *Cache) Discard() {
	c.pending = map[string]int{}
	c.ops = nil
	c.meter = feeschedule.Operations{}
}
