package main

import (
	"runtime"
	"strings"
	"testing"

	"github.com/ttld-dev/ttld/protocol"
)

func TestVersionCommand(t *testing.T) {
	defer func(v, c string) { version, commit = v, c }(version, commit)
	version, commit = "v1.2.3-4-gabcdef", "abcdef0"

	out, err := runCLI(t, "version", "-o", "json")
	if err != nil {
		t.Fatal(err)
	}
	got := decodeJSON[versionOutput](t, out)
	if got.Version != version || got.Commit != commit || got.GoVersion != runtime.Version() || got.Latest != uint32(protocol.Latest) {
		t.Fatalf("version -o json = %+v", got)
	}
	if len(got.Protocols) == 0 {
		t.Fatal("no protocol versions listed")
	}
	for i, p := range got.Protocols {
		if !protocol.Known(protocol.Version(p)) || (i > 0 && p <= got.Protocols[i-1]) {
			t.Fatalf("protocol versions %v: not known, or not ascending", got.Protocols)
		}
	}
	if got.Protocols[len(got.Protocols)-1] < got.Latest {
		t.Fatalf("latest %d is not supported: %v", got.Latest, got.Protocols)
	}

	text, err := runCLI(t, "version")
	if err != nil {
		t.Fatal(err)
	}
	for _, want := range []string{version, commit, runtime.Version()} {
		if !strings.Contains(text, want) {
			t.Errorf("text output lacks %q:\n%s", want, text)
		}
	}
}
