package web

import (
	"encoding/json"
	"os"
	"sort"
	"strings"
	"testing"
)

// TestOpenAPIDescribesEveryPage: docs/openapi.json has a path for every page kind's
// JSON form, and none besides.
func TestOpenAPIDescribesEveryPage(t *testing.T) {
	raw, err := os.ReadFile("../docs/openapi.json")
	if err != nil {
		t.Fatal(err)
	}
	var doc struct {
		Paths map[string]json.RawMessage `json:"paths"`
	}
	if err := json.Unmarshal(raw, &doc); err != nil {
		t.Fatal(err)
	}
	var served, described []string
	for _, p := range (&Server{}).pageKinds() {
		served = append(served, APIPrefix+strings.TrimSuffix(p.path, "{$}"))
	}
	for p := range doc.Paths {
		described = append(described, p)
	}
	sort.Strings(served)
	sort.Strings(described)
	if strings.Join(served, " ") != strings.Join(described, " ") {
		t.Errorf("served:    %v\ndescribed: %v", served, described)
	}
}
