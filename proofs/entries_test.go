package proofs

import (
	"bytes"
	"errors"
	"testing"
)

func TestEncodeEntries(t *testing.T) {
	for _, c := range []struct {
		name    string
		entries []KV
		want    []byte
	}{
		{"none", nil, []byte{0}},
		{"one", []KV{kv("a", "xy")}, []byte{1, 1, 'a', 2, 'x', 'y'}},
		{"two, empty value", []KV{kv("a", ""), kv("b", "z")}, []byte{2, 1, 'a', 0, 1, 'b', 1, 'z'}},
		{"long value", []KV{{Key: []byte("k"), Value: bytes.Repeat([]byte{7}, 200)}},
			append([]byte{1, 1, 'k', 0xc8, 0x01}, bytes.Repeat([]byte{7}, 200)...)},
	} {
		t.Run(c.name, func(t *testing.T) {
			got := EncodeEntries(c.entries)
			if !bytes.Equal(got, c.want) {
				t.Fatalf("EncodeEntries = %X, want %X", got, c.want)
			}
			back, err := DecodeEntries(got)
			if err != nil {
				t.Fatal(err)
			}
			if !sameEntries(back, c.entries) {
				t.Fatalf("DecodeEntries(EncodeEntries(x)) = %q, want %q", back, c.entries)
			}
		})
	}
}

func TestDecodeEntriesRejects(t *testing.T) {
	for _, c := range []struct {
		name   string
		data   []byte
		offset int
	}{
		{"empty input", nil, 0},
		{"count truncated", []byte{0x80}, 0},
		{"count not minimal", []byte{0x80, 0x00}, 0},
		{"count overflows", bytes.Repeat([]byte{0xff}, 11), 0},
		{"count beyond the bytes", []byte{3, 1, 'a', 0}, 1},
		{"key truncated", []byte{1, 2, 'a'}, 2},
		{"value length missing", []byte{1, 1, 'a'}, 3},
		{"value truncated", []byte{1, 1, 'a', 2, 'x'}, 4},
		{"key length not minimal", []byte{1, 0x81, 0x00, 'a', 0}, 1},
		{"trailing bytes", []byte{1, 1, 'a', 0, 0}, 4},
		{"trailing entry", []byte{1, 1, 'a', 0, 1, 'b', 0}, 4},
		{"out of order", []byte{2, 1, 'b', 0, 1, 'a', 0}, 4},
		{"duplicate key", []byte{2, 1, 'a', 0, 1, 'a', 1, 'x'}, 4},
		{"prefix after its extension", []byte{2, 2, 'a', 'b', 0, 1, 'a', 0}, 5},
	} {
		t.Run(c.name, func(t *testing.T) {
			entries, err := DecodeEntries(c.data)
			var de ErrDecodeEntries
			if !errors.As(err, &de) {
				t.Fatalf("DecodeEntries(%X) = %q, %v; want ErrDecodeEntries", c.data, entries, err)
			}
			if de.Offset != c.offset {
				t.Fatalf("DecodeEntries(%X) stops at byte %d, want %d (%v)", c.data, de.Offset, c.offset, err)
			}
		})
	}
}

// FuzzDecodeEntries: DecodeEntries never panics, and whatever it accepts is in strictly
// increasing key order and re-encodes to exactly the same bytes (the encoding is
// canonical, so an answer has one encoding).
func FuzzDecodeEntries(f *testing.F) {
	f.Add([]byte{0})
	f.Add(EncodeEntries([]KV{kv("a", "1"), kv("b", ""), kv("b\x00", "xyz")}))
	f.Add([]byte{2, 1, 'a', 0, 1, 'a', 0})
	f.Add([]byte{0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0x01})
	f.Add([]byte{1, 0x80, 0x00, 0})
	f.Fuzz(func(t *testing.T, data []byte) {
		entries, err := DecodeEntries(data)
		if err != nil {
			var de ErrDecodeEntries
			if !errors.As(err, &de) || de.Offset < 0 || de.Offset > len(data) {
				t.Fatalf("DecodeEntries(%X) error %v is not an ErrDecodeEntries within the input", data, err)
			}
			return
		}
		for i := 1; i < len(entries); i++ {
			if bytes.Compare(entries[i-1].Key, entries[i].Key) >= 0 {
				t.Fatalf("DecodeEntries(%X) accepts keys out of order: %q", data, entries)
			}
		}
		if again := EncodeEntries(entries); !bytes.Equal(again, data) {
			t.Fatalf("DecodeEntries(%X) = %q re-encodes to %X", data, entries, again)
		}
	})
}
