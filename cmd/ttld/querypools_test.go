package main

import (
	"encoding/hex"
	"strconv"
	"strings"
	"testing"

	"github.com/ttld-dev/ttld/e2e"
	"github.com/ttld-dev/ttld/keyring"
	"github.com/ttld-dev/ttld/node"
	"github.com/ttld-dev/ttld/protocol"
)

// The pool queries against a real node, verified: the node stays in epoch 0 (an hour
// long), whose fees grow by each transaction's fee and whose proposer is the node's
// validator; the pools hold no storage fee and no refund; the total equals the supply.
func TestPoolQueryCommands(t *testing.T) {
	t.Parallel()
	env := e2e.StartNode(t)
	c := cli{t: t, env: env}
	bob, err := keyring.Open(env.Home).Add("bob")
	if err != nil {
		t.Fatal(err)
	}
	var tx txOutput
	if err := c.json(&tx, "tx", "address", "transfer", "--to", bob.Address().String(), "--amount", "1000", "--from", node.DevKeyName, "--commit"); err != nil || tx.Code != 0 {
		t.Fatalf("transfer: %+v %v", tx, err)
	}
	h := strconv.FormatInt(tx.Height, 10)
	before := strconv.FormatInt(tx.Height-1, 10)

	type verifiedEpoch struct {
		Answer   epochJSON `json:"answer"`
		Verified string    `json:"verified"`
		Height   int64     `json:"height"`
	}
	var at, prev verifiedEpoch
	if err := c.json(&at, "query", "epoch", "0", "--prove", "--height", h); err != nil {
		t.Fatal(err)
	}
	if err := c.json(&prev, "query", "epoch", "0", "--prove", "--height", before); err != nil {
		t.Fatal(err)
	}
	validator := hex.EncodeToString(env.Trusted.Validators[0].Address)
	if at.Verified != "presence" || at.Height != tx.Height || at.Answer.Epoch != 0 || at.Answer.Current || at.Answer.LengthS != 3600 ||
		at.Answer.ProcessingFees != prev.Answer.ProcessingFees+*tx.Fee || at.Answer.Paid ||
		len(at.Answer.Proposers) != 1 || at.Answer.Proposers[0].Address != validator || at.Answer.Proposers[0].Blocks != uint64(tx.Height) {
		t.Fatalf("epoch 0 at %d: %+v; at %d: %+v; fee %d, validator %s", tx.Height, at, tx.Height-1, prev, *tx.Fee, validator)
	}

	// The current epoch, as JSON and as text; the start is the genesis time.
	var cur verifiedEpoch
	if err := c.json(&cur, "query", "epoch", "--prove"); err != nil {
		t.Fatal(err)
	}
	if !cur.Answer.Current || cur.Answer.Epoch != 0 || cur.Answer.StartMs != at.Answer.StartMs || cur.Height < tx.Height ||
		cur.Answer.ProcessingFees < at.Answer.ProcessingFees {
		t.Fatalf("current epoch: %+v, epoch 0 at %d: %+v", cur, tx.Height, at)
	}
	out, err := c.run("query", "epoch", "--prove")
	if err != nil || !strings.Contains(out, "epoch: 0 (current)\n") || !strings.Contains(out, "proposer "+validator+": ") ||
		!strings.Contains(out, "paid: no\n") || !strings.Contains(out, "VERIFIED presence at height ") {
		t.Fatalf("query epoch --prove: %q %v", out, err)
	}
	// An epoch to come holds nothing, proven.
	out, err = c.run("query", "epoch", "40", "--prove")
	if err != nil || !strings.Contains(out, "proposers: none\n") || !strings.Contains(out, "VERIFIED absence at height ") {
		t.Fatalf("query epoch 40 --prove: %q %v", out, err)
	}

	var pools struct {
		Answer   poolsJSON `json:"answer"`
		Verified string    `json:"verified"`
	}
	if err := c.json(&pools, "query", "pools", "--prove", "--height", h); err != nil {
		t.Fatal(err)
	}
	if p := pools.Answer; pools.Verified != "presence" || !p.Started || p.CurrentEpoch != 0 || p.CurrentEpochFirstHeight != 1 ||
		p.StoragePool != 0 || p.OldestUnpaidEpoch != 0 || len(p.PendingRefunds) != 0 || p.PendingRefunded != 0 || p.Height != tx.Height {
		t.Fatalf("pools: %+v", pools)
	}
	out, err = c.run("query", "pools")
	if err != nil || !strings.Contains(out, "storage distribution pool: 0\n") || !strings.Contains(out, "oldest unpaid epoch: 0\n") {
		t.Fatalf("query pools: %q %v", out, err)
	}

	var total struct {
		Answer   totalCreditsJSON `json:"answer"`
		Verified string           `json:"verified"`
	}
	if err := c.json(&total, "query", "total-credits", "--prove"); err != nil {
		t.Fatal(err)
	}
	if a := total.Answer; total.Verified != "presence" || !a.Conserved || a.Total != a.Supply || a.Supply < e2e.DevBalance {
		t.Fatalf("total credits: %+v", total)
	}
	out, err = c.run("query", "total-credits", "--prove")
	if err != nil || !strings.Contains(out, "conserved: yes\n") || !strings.Contains(out, "VERIFIED presence at height ") {
		t.Fatalf("query total-credits --prove: %q %v", out, err)
	}

	// The protocol: the chain runs the newest version, so no block signals and nothing
	// is decided; proven.
	var proto struct {
		Answer   protocolJSON `json:"answer"`
		Verified string       `json:"verified"`
	}
	if err := c.json(&proto, "query", "protocol", "--prove", "--height", h); err != nil {
		t.Fatal(err)
	}
	if p := proto.Answer; proto.Verified != "presence" || p.Version != uint32(protocol.Newest()) || p.Next != 0 || p.ThresholdPercent != 75 ||
		p.Current == nil || p.Current.Epoch != 0 || p.Current.Blocks != uint64(tx.Height) || len(p.Current.Signals) != 0 || p.Last != nil || p.Height != tx.Height {
		t.Fatalf("protocol: %+v", proto)
	}
	out, err = c.run("query", "protocol", "--prove")
	if err != nil || !strings.Contains(out, "next version: none decided\n") || !strings.Contains(out, "threshold: 75% ") || !strings.Contains(out, "VERIFIED presence at height ") {
		t.Fatalf("query protocol --prove: %q %v", out, err)
	}
}
