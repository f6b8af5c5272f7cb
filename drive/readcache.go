//go:build !js

package drive

import lru "github.com/hashicorp/golang-lru/v2"

// DefaultReadCacheSize is a Store's read cache, in values.
const DefaultReadCacheSize = 200_000

// readCache holds values of the last saved version by key, so that a read finds its
// value without walking the tree's ~20 levels through IAVL's node cache. It is safe for
// concurrent use. It holds the last saved version and nothing else: a Store adds a value
// only while that version is the last saved one (under its tree lock, or on the one
// goroutine that commits), and the commit that saves the next version records every key
// it wrote, under the tree's write lock, before any reader of the new version comes.
type readCache struct {
	values *lru.Cache[string, []byte] // nil value: the key is absent
}

func newReadCache(size int) (*readCache, error) {
	values, err := lru.New[string, []byte](size)
	if err != nil {
		return nil, err
	}
	return &readCache{values: values}, nil
}

// get returns key's value (nil when absent) and whether the cache holds it.
func (c *readCache) get(key []byte) ([]byte, bool) { return c.values.Get(string(key)) }

// add records key's value in the last saved version; nil: absent.
func (c *readCache) add(key, value []byte) { c.values.Add(string(key), value) }

// purge drops every value.
func (c *readCache) purge() { c.values.Purge() }
