package client

import (
	"strings"
	"testing"
)

// "Duration strings in the CLI and tooling (30m, 24h, 7d, 1y): a contract file given
// to ttld tx contract create|update may write "ttl": "7d"; the CLI converts it to
// integer seconds before signing".
func TestParseTTL(t *testing.T) {
	for s, want := range map[string]uint64{"30m": 1800, "24h": 86400, "7d": 604800, "1y": 31536000, "3600s": 3600, "2w": 1209600} {
		if got, err := ParseTTL(s); err != nil || got != want {
			t.Errorf("ParseTTL(%q) = %d, %v; want %d", s, got, err, want)
		}
	}
	for _, s := range []string{"", "7", "d", "7x", "-1d", "+1d", "1.5d", "99999999999999999999s"} {
		if _, err := ParseTTL(s); err == nil {
			t.Errorf("ParseTTL(%q) accepted", s)
		}
	}
}

func TestContractDefinitionConvertsTTL(t *testing.T) {
	raw := `{"documentSchemas":{"story":{"type":"object","ttl":"1d","properties":{"caption":{"type":"string","maxLength":200,"position":0}},"required":["$createdAt"],"additionalProperties":false},"note":{"type":"object","ttl":7200,"properties":{}}}}`
	out, err := ContractDefinition([]byte(raw))
	if err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(string(out), `"ttl":86400`) || !strings.Contains(string(out), `"ttl":7200`) || !strings.Contains(string(out), `"maxLength":200`) {
		t.Fatalf("converted: %s", out)
	}
	plain := `{"documentSchemas":{"note":{"ttl":3600}}}`
	if out, err := ContractDefinition([]byte(plain)); err != nil || string(out) != plain {
		t.Fatalf("a definition without a duration changed: %s %v", out, err)
	}
	if _, err := ContractDefinition([]byte(`{"documentSchemas":{"note":{"ttl":"soon"}}}`)); err == nil {
		t.Fatal("a bad duration was sent")
	}
}

// TestContractDefinitionConvertsTimeRanges: a time-range index's range, step, phase
// and ttl may be written as durations ("range": "1h", "ttl": "7d"); numbers stay.
func TestContractDefinitionConvertsTimeRanges(t *testing.T) {
	raw := `{"documentSchemas":{"like":{"indices":[{"name":"trending","properties":[{"post":"asc"}],"timeRange":{"on":"$createdAt","range":"1h","step":"30m","phase":60,"ttl":"7d"}}]}}}`
	out, err := ContractDefinition([]byte(raw))
	if err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(string(out), `"timeRange":{"on":"$createdAt","phase":60,"range":3600,"step":1800,"ttl":604800}`) {
		t.Fatalf("converted: %s", out)
	}
	if _, err := ContractDefinition([]byte(`{"documentSchemas":{"like":{"indices":[{"name":"x","timeRange":{"range":"an hour"}}]}}}`)); err == nil {
		t.Fatal("a bad duration was sent")
	}
}
