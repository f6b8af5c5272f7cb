package main

import (
	"errors"
	"strings"
	"testing"

	"github.com/ttld-dev/ttld/client"
	"github.com/ttld-dev/ttld/e2e"
)

// TestQueryMaxAge: --max-age bounds how old the signed header of a latest-state answer
// may be; 0 lifts the bound, and an explicit --height is never bounded.
func TestQueryMaxAge(t *testing.T) {
	t.Parallel()
	env := e2e.StartNode(t)
	c := cli{t: t, env: env}
	dev := env.Dev.Address().String()

	_, err := c.run("query", "address", dev, "--prove", "--max-age", "1ns")
	var ve errVerification
	var stale client.ErrStale
	if !errors.As(err, &ve) || !errors.As(err, &stale) || stale.MaxAge != 1 || stale.Age <= 0 {
		t.Fatalf("query --prove --max-age 1ns: %v, want a verification failure with ErrStale", err)
	}
	for _, args := range [][]string{
		{"--max-age", "0"},
		{"--max-age", "1ns", "--height", "1"},
		{}, // the default bound, a minute, holds on a live chain
	} {
		out, err := c.run(append([]string{"query", "address", dev, "--prove"}, args...)...)
		if err != nil || !strings.Contains(out, "VERIFIED presence") {
			t.Fatalf("query --prove %s: %q %v", strings.Join(args, " "), out, err)
		}
	}
	if _, err := c.run("query", "address", dev, "--prove", "--max-age", "-1s"); err == nil {
		t.Fatal("a negative --max-age is accepted")
	}
}
