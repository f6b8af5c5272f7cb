package proofs

import (
	"bytes"
	"encoding/binary"
	"errors"
	"fmt"
	"sort"

	"github.com/ttld-dev/ttld/drive"
)

// KV is one key/value of a range answer.
type KV struct{ Key, Value []byte }

// EncodeEntries is the deterministic encoding of a range answer, which travels in
// ResponseQuery.Value: the number of entries, then for each entry its key and its
// value, each length-prefixed; every number is a uvarint. entries must be in strictly
// increasing key order for DecodeEntries to accept the result.
func EncodeEntries(entries []KV) []byte {
	size := binary.MaxVarintLen64
	for _, e := range entries {
		size += 2*binary.MaxVarintLen64 + len(e.Key) + len(e.Value)
	}
	out := make([]byte, 0, size)
	out = binary.AppendUvarint(out, uint64(len(entries)))
	for _, e := range entries {
		out = binary.AppendUvarint(out, uint64(len(e.Key)))
		out = append(out, e.Key...)
		out = binary.AppendUvarint(out, uint64(len(e.Value)))
		out = append(out, e.Value...)
	}
	return out
}

// DecodeEntries decodes EncodeEntries' output. It accepts exactly the bytes
// EncodeEntries produces for entries in strictly increasing key order: it rejects
// truncation, trailing bytes, non-minimal numbers, and keys out of order or repeated.
// Decoded keys and values never alias data.
func DecodeEntries(data []byte) ([]KV, error) {
	d := entryDecoder{data: data}
	n, err := d.uvarint()
	if err != nil {
		return nil, err
	}
	// NB: n comes from the wire; a count larger than the bytes left cannot be
	// honest (every entry takes at least two bytes), so refuse it before allocating.
	if n > uint64(len(data)-d.off)/2 {
		return nil, d.fail("%d entries cannot fit in %d bytes", n, len(data)-d.off)
	}
	entries := make([]KV, 0, n)
	for i := uint64(0); i < n; i++ {
		at := d.off
		key, err := d.bytes()
		if err != nil {
			return nil, err
		}
		value, err := d.bytes()
		if err != nil {
			return nil, err
		}
		if i > 0 && bytes.Compare(entries[i-1].Key, key) >= 0 {
			return nil, ErrDecodeEntries{Offset: at, Reason: fmt.Sprintf("key %X does not follow key %X", key, entries[i-1].Key)}
		}
		entries = append(entries, KV{Key: key, Value: value})
	}
	if d.off != len(data) {
		return nil, d.fail("%d trailing bytes", len(data)-d.off)
	}
	return entries, nil
}

type entryDecoder struct {
	data []byte
	off  int
}

func (d *entryDecoder) fail(format string, args ...any) error {
	return ErrDecodeEntries{Offset: d.off, Reason: fmt.Sprintf(format, args...)}
}

func (d *entryDecoder) uvarint() (uint64, error) {
	v, n := binary.Uvarint(d.data[d.off:])
	switch {
	case n == 0:
		return 0, d.fail("truncated number")
	case n < 0:
		return 0, d.fail("number overflows 64 bits")
	case n != len(binary.AppendUvarint(nil, v)):
		return 0, d.fail("non-minimal number")
	}
	d.off += n
	return v, nil
}

func (d *entryDecoder) bytes() ([]byte, error) {
	l, err := d.uvarint()
	if err != nil {
		return nil, err
	}
	if l > uint64(len(d.data)-d.off) {
		return nil, d.fail("length %d exceeds the %d bytes left", l, len(d.data)-d.off)
	}
	b := bytes.Clone(d.data[d.off : d.off+int(l)])
	d.off += int(l)
	return nonNil(b), nil
}

// EntriesKV is a read-only drive.KV over the entries of a range answer, in key order,
// so that drive's own readers decode an answer as they decode state.
type EntriesKV []KV

// errReadOnly: an answer's entries are read, never written.
var errReadOnly = errors.New("proofs: an answer's entries are read only")

var _ drive.KV = EntriesKV(nil)

func (a EntriesKV) Get(key []byte) ([]byte, error) {
	i := sort.Search(len(a), func(i int) bool { return bytes.Compare(a[i].Key, key) >= 0 })
	if i < len(a) && bytes.Equal(a[i].Key, key) {
		return a[i].Value, nil
	}
	return nil, nil
}

func (EntriesKV) Set([]byte, []byte) error { return errReadOnly }
func (EntriesKV) Delete([]byte) error      { return errReadOnly }

func (a EntriesKV) Iterate(start, end []byte, fn func(key, value []byte) (bool, error)) error {
	for _, e := range a {
		if bytes.Compare(e.Key, start) < 0 || (end != nil && bytes.Compare(e.Key, end) >= 0) {
			continue
		}
		stop, err := fn(e.Key, e.Value)
		if err != nil || stop {
			return err
		}
	}
	return nil
}

// SingleKV is the EntriesKV of a single-key answer: key with value, or nothing when
// value is nil (absent).
func SingleKV(key, value []byte) EntriesKV {
	if value == nil {
		return nil
	}
	return EntriesKV{{Key: key, Value: value}}
}
