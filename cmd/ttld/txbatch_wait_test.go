package main

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"net/http/httputil"
	"net/url"
	"strings"
	"sync"
	"testing"

	"github.com/ttld-dev/ttld/e2e"
	"github.com/ttld-dev/ttld/node"
	"github.com/ttld-dev/ttld/protocol"
)

// failingBroadcasts is an RPC proxy to a node that fails every broadcast from the
// failFrom-th on (counting from 1), as a node that goes away mid-run does; every other
// call goes through.
type failingBroadcasts struct {
	mu       sync.Mutex
	sent     int
	failFrom int
	next     http.Handler
}

func (f *failingBroadcasts) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	body, err := io.ReadAll(r.Body)
	if err != nil {
		http.Error(w, err.Error(), http.StatusBadRequest)
		return
	}
	var call struct{ Method string }
	_ = json.Unmarshal(body, &call)
	if strings.HasPrefix(call.Method, "broadcast_tx") {
		f.mu.Lock()
		f.sent++
		fail := f.sent >= f.failFrom
		f.mu.Unlock()
		if fail {
			http.Error(w, "the node went away", http.StatusBadGateway)
			return
		}
	}
	r.Body = io.NopCloser(bytes.NewReader(body))
	f.next.ServeHTTP(w, r)
}

// TestBatchReportsEachTransaction: `tx document batch --split` without --commit sends
// its transactions under consecutive nonces, then waits for their blocks and reports
// each one: committed with its height and fee, refused with its code, or of unknown
// fate, and the actions not sent; it exits non-zero unless every transaction was
// committed with code 0. A run whose RPC fails mid-way reports the transaction it was
// sending as of unknown fate and the rest as not sent, and fails; with --wait 0 it
// reports the transactions accepted and not committed.
func TestBatchReportsEachTransaction(t *testing.T) {
	t.Parallel()
	env := e2e.StartNode(t)
	b := batchEnv{cli{t: t, env: env}}
	owner := b.newIdentity()
	notes := b.contract("../../docs/examples/note.json", owner)
	signer := []string{"--identity", owner, "--from", node.DevKeyName, "--split"}
	lim, _ := protocol.LimitsFor(protocol.Latest)
	seq := 0
	// file is a file of n notes of the contract; bad, if at least 0, makes that action
	// a replace of a note that does not exist.
	file := func(n, bad int) string {
		var lines []string
		for i := range n {
			seq++
			line := fmt.Sprintf(`{"action":"create","contract":"%s","type":"note","data":{"text":"note %d"}}`, notes, seq)
			if i == bad {
				line = `{"action":"replace","contract":"` + notes + `","type":"note","id":"` + strings.Repeat("ee", 32) + `","data":{"text":"x"},"revision":2}`
			}
			lines = append(lines, line)
		}
		return batchFile(t, lines...)
	}
	n := 2*lim.MaxDocumentActions + 5

	before, _ := b.nonces(owner)
	out, err := b.batch(file(n, -1), signer...)
	if err != nil || len(out.Sent) != 3 || len(out.NotSent) != 0 {
		t.Fatalf("a run of three: %+v %v", out, err)
	}
	for k, s := range out.Sent {
		if s.Status != txCommitted || !s.Committed || s.Code != 0 || s.Height == 0 || s.Fee == nil || *s.Fee == 0 || s.Nonce != before+1+uint64(k) {
			t.Fatalf("transaction %d of a run of three: %+v", k+1, s.txOutput)
		}
	}
	if after, pending := b.nonces(owner); after != before+3 || pending != after {
		t.Fatalf("nonce %d -> %d (pending %d), want three transactions committed", before, after, pending)
	}

	// The second transaction is refused by CheckTx: the run stops there, reports the
	// first committed, the second refused with its code and the third not sent, and
	// fails.
	out, err = b.batch(file(n, lim.MaxDocumentActions+4), signer...)
	var incomplete errBatchNotCommitted
	var refused errRefused
	if !errors.As(err, &incomplete) || incomplete.Committed != 1 || incomplete.Refused != 1 || !errors.As(err, &refused) || refused.Code != protocol.CodeDocumentNotFound {
		t.Fatalf("a run with a refusal: err = %v", err)
	}
	if len(out.Sent) != 2 || out.Sent[0].Status != txCommitted || out.Sent[1].Status != txRefused || out.Sent[1].Code != uint32(protocol.CodeDocumentNotFound) || len(out.NotSent) != 5 {
		t.Fatalf("a run with a refusal: %+v", out)
	}

	// The node's RPC fails at the second broadcast. The run waits for the fate of the
	// transaction it could not send (--wait) as for any other: a few seconds, which
	// the first transaction's block takes a fraction of.
	proxy := &failingBroadcasts{failFrom: 2}
	target, err := url.Parse(env.RPC)
	if err != nil {
		t.Fatal(err)
	}
	proxy.next = httputil.NewSingleHostReverseProxy(target)
	srv := httptest.NewServer(proxy)
	defer srv.Close()
	through := *env
	through.RPC = srv.URL
	cut := batchEnv{cli{t: t, env: &through}}
	out, err = cut.batch(file(n, -1), append([]string{"--wait", "3s"}, signer...)...)
	if !errors.As(err, &incomplete) || incomplete.Committed != 1 || incomplete.Unknown != 1 {
		t.Fatalf("a run whose RPC fails mid-way: err = %v", err)
	}
	if len(out.Sent) != 2 || out.Sent[0].Status != txCommitted || out.Sent[1].Status != txSendFailed || len(out.NotSent) != 5 {
		t.Fatalf("a run whose RPC fails mid-way: %+v", out)
	}

	// Not waiting: accepted, not committed, and said so.
	text, err := b.run(append([]string{"tx", "document", "batch", file(n, -1), "--wait", "0"}, signer...)...)
	if err != nil || strings.Count(text, "status: accepted") != 3 || !strings.Contains(text, "accepted, not committed") {
		t.Fatalf("--wait 0: %v\n%s", err, text)
	}
}
