package thirdparty

import "testing"

// TestDecodeUpgradesRefuses: an entry that is not an upgrade record as docs/PROOFS.md
// describes it does not decode.
func TestDecodeUpgradesRefuses(t *testing.T) {
	t.Parallel()
	signals := []byte{104, 'P', 's', 0, 0, 0, 1}
	for name, e := range map[string]KV{
		"another key":             {Key: []byte{104, 'P', 'x'}, Value: []byte{0, 0, 0, 15}},
		"a key outside 104 'P'":   {Key: []byte{104, 'Q', 'n'}, Value: []byte{0, 0, 0, 15}},
		"a short next version":    {Key: []byte{104, 'P', 'n'}, Value: []byte{0, 15}},
		"signals without blocks":  {Key: signals, Value: []byte{0, 0, 0, 15}},
		"a count cut short":       {Key: signals, Value: append(make([]byte, 8), 0, 0, 0, 15, 0, 0, 0, 0)},
		"a signals key cut short": {Key: signals[:5], Value: make([]byte, 8)},
	} {
		if u, err := DecodeUpgrades([]KV{e}); err == nil {
			t.Errorf("%s decodes to %+v", name, u)
		}
	}
}
