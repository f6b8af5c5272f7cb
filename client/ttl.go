package client

import (
	"bytes"
	"encoding/json"
	"fmt"
	"math"
	"strconv"
	"strings"
)

// ParseTTL reads a time to live written as a duration: a whole number and one unit, s,
// m, h, d (86,400 s), w (7 d) or y (365 d): "30m", "24h", "7d", "1y". It returns whole
// seconds; the chain's bounds (an hour to a year at protocol version 14) are the
// node's to check.
func ParseTTL(s string) (uint64, error) {
	units := map[byte]uint64{'s': 1, 'm': 60, 'h': 3600, 'd': 86400, 'w': 7 * 86400, 'y': 365 * 86400}
	if len(s) < 2 {
		return 0, fmt.Errorf("ttl %q: want a whole number and a unit (s, m, h, d, w, y), such as 7d", s)
	}
	unit, ok := units[s[len(s)-1]]
	n, err := strconv.ParseUint(s[:len(s)-1], 10, 64)
	if !ok || err != nil || strings.HasPrefix(s, "+") {
		return 0, fmt.Errorf("ttl %q: want a whole number and a unit (s, m, h, d, w, y), such as 7d", s)
	}
	if n > math.MaxUint64/unit {
		return 0, fmt.Errorf("ttl %q: too long", s)
	}
	return n * unit, nil
}

// ContractDefinition returns a contract definition as the node reads it: a document
// type's "ttl", and a time-range index's "range", "step", "phase" and "ttl", written as
// duration strings ("7d", "1h": ParseTTL) become whole seconds; a definition without
// one is returned byte for byte.
func ContractDefinition(raw []byte) ([]byte, error) {
	dec := json.NewDecoder(bytes.NewReader(raw))
	dec.UseNumber()
	var doc map[string]any
	if err := dec.Decode(&doc); err != nil || dec.More() {
		return raw, nil // not one JSON object: the node refuses it with its code
	}
	schemas, _ := doc["documentSchemas"].(map[string]any)
	changed := false
	for name, t := range schemas {
		m, ok := t.(map[string]any)
		if !ok {
			continue
		}
		if s, ok := m["ttl"].(string); ok {
			secs, err := ParseTTL(s)
			if err != nil {
				return nil, fmt.Errorf("document type %q: %w", name, err)
			}
			m["ttl"], changed = secs, true
		}
		indices, _ := m["indices"].([]any)
		for _, x := range indices {
			ix, _ := x.(map[string]any)
			tr, _ := ix["timeRange"].(map[string]any)
			for _, key := range []string{"range", "step", "phase", "ttl"} {
				s, ok := tr[key].(string)
				if !ok {
					continue
				}
				secs, err := ParseTTL(s)
				if err != nil {
					return nil, fmt.Errorf("document type %q, index %v, timeRange %s: %w", name, ix["name"], key, err)
				}
				tr[key], changed = secs, true
			}
		}
	}
	if !changed {
		return raw, nil
	}
	return json.Marshal(doc)
}
