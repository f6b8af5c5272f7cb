//go:build devnet

package devnet

import (
	"context"
	"crypto/ed25519"
	"crypto/sha256"
	"encoding/binary"
	"fmt"
	"os"
	"os/exec"
	"regexp"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/ttld-dev/ttld/client"
	"github.com/ttld-dev/ttld/drive"
	"github.com/ttld-dev/ttld/node"
	"github.com/ttld-dev/ttld/protocol"
)

// The upgrade test's figures.
const (
	upgradeDeadline = 14 * time.Minute
	// oldImage is make image-old's: a binary that implements protocol versions up to
	// 13 only, as one released before 14.
	oldImage = "ttld:local-13"
	// switchWithin bounds the wait for the switch once every validator signals 14 or later:
	// the epoch they all signal in, the epoch that decides, and the change after it.
	switchWithin = 4 * epochLengthS * time.Second
	// storyTTLS is the ttl of the stories written on 14, and the network's lowered
	// minimum (ttld testnet --local-min-ttl): short enough that they expire and are
	// cleaned up on 14, which the chain leaves an epoch after it switched to it.
	storyTTLS = 20
	// sessionTTLS is the ttl of version 15's sessions: a minute, long enough for the
	// session to be renewed and replaced well before it expires.
	sessionTTLS = 60
	// exitUpgradeNeeded is the exit code of a node stopped by a switch to a version its
	// binary does not implement (ttld start's).
	exitUpgradeNeeded = 3
)

// TestDevnetUpgrade upgrades a running devnet in place (docs/STATE.md, "Protocol
// upgrades"): four validators and a full node start on protocol version 13, every
// validator holding back (signal_version 13) and the full node running a binary that
// implements 13 only. A contract with documents is written; then, while transfers and
// document writes go on, the validators are restarted one by one signalling the newest
// version their binary implements, which counts for 14 ("the next version or a later
// one"). An epoch change decides on 14 and the next one switches: the headers carry app
// version 14 from the block after, a contract with a ttl registers and its documents
// expire and are cleaned up. The full node stops at the
// switch with its one line and exit code 3, stores intact; started again on the new
// binary, it executes the switch block and catches up. On 14, what 15 brings is still
// refused; the epoch change that switched to 14 decided on 15, and the next one
// switches, in place, and a session type renewed by its replaces registers and renews
// on every node. Every node agrees on every block and app hash, and ttld replay
// re-executes a validator's and the full node's stores across both switches with the
// same app hashes.
//
// The test takes three epochs, three minutes at the protocol's least epoch length,
// and a few seconds: the restarts take the first seconds of epoch 0, whose end decides
// on 14 (three quarters of its blocks signalled); epoch 1's end switches to 14 and
// decides on 15; epoch 2's end switches to 15. Restarts slow enough to leave more than
// a quarter of epoch 0's blocks unsignalled cost an epoch more.
func TestDevnetUpgrade(t *testing.T) {
	ctx, cancel := context.WithTimeout(context.Background(), upgradeDeadline)
	defer cancel()
	n := newNetwork(t)
	if _, err := n.run(ctx, exec.Command("docker", "image", "inspect", oldImage)); err != nil {
		t.Fatalf("no image %s: run make e2e-upgrade (or make image-old) first: %v", oldImage, err)
	}
	n.files = append(n.files, "docker-compose.fullnodes.yml")
	n.env = append(n.env, "TTLD_FULL_IMAGE="+oldImage)
	n.generate(ctx, 1, "--protocol-version", "13", "--signal-version", "13", "--local-min-ttl", strconv.Itoa(storyTTLS))
	full := n.full[0]
	n.up(ctx)
	n.waitAll(ctx, 3, startTimeout)
	if err := n.waitNodes(ctx, 3, startTimeout, full); err != nil {
		t.Fatal(err)
	}
	p := n.protocolOf(ctx, n.nodes[0], 0)
	if p.Version != protocol.V13 || p.Next != 0 || len(p.Current.Counts) != 0 {
		t.Fatalf("at the start: %+v, want version 13, no signal", p)
	}
	t.Logf("network up on protocol version 13, every validator holding back; %s runs %s", full.name, oldImage)

	// A contract and documents on 13, and the load's signers.
	w := n.newWriter(ctx)
	notes := w.contract(ctx, `{"documentSchemas":{"note":{"type":"object","properties":{"text":{"type":"string","maxLength":40,"position":0}},"additionalProperties":false}}}`)
	var before []protocol.DocumentID
	for i := range 3 {
		before = append(before, w.document(ctx, notes, "note", fmt.Sprintf(`{"text":"on 13, number %d"}`, i)))
	}

	// Transfers and document writes go on while the validators restart, one by one,
	// signalling the newest version they implement.
	stop := make(chan struct{})
	var wg sync.WaitGroup
	wg.Add(1)
	var load loadRecord
	go func() {
		defer wg.Done()
		load = w.load(ctx, stop, notes)
	}()
	for _, m := range n.nodes {
		n.signalNewest(ctx, m)
	}
	restarted := n.height(ctx)
	t.Logf("every validator signals %d from height %d", protocol.Newest(), restarted)

	// The decision and the switch.
	decided := n.waitProtocol(ctx, "the decision on 14", func(p client.ProtocolState) bool { return p.Next == protocol.V14 || p.Version == protocol.V14 })
	if decided.Last != nil {
		t.Logf("decided by height %d: next version %d, epoch %d's blocks signalling 14 or later: %d of %d", decided.Height, decided.Next, decided.LastEpoch, decided.Last.AtLeast(protocol.V14), decided.Last.Blocks)
	}
	switched := n.waitProtocol(ctx, "the switch to 14", func(p client.ProtocolState) bool { return p.Version == protocol.V14 })
	at := n.switchHeight(ctx, switched.Height)
	t.Logf("switched to 14 at height %d (seen at %d)", at, switched.Height)
	n.appVersions(ctx, at)
	if _, err := n.nodes[0].client.WaitForHeight(ctx, at+3); err != nil {
		t.Fatal(err)
	}
	close(stop)
	wg.Wait()
	if load.err != nil {
		t.Fatal(load.err)
	}
	load.check(t, restarted, at)
	w.refusedBefore15(ctx)

	// A contract with a ttl registers on 14, and its documents are written: they expire
	// while the full node comes back.
	stories := w.contract(ctx, fmt.Sprintf(`{"documentSchemas":{"story":{"type":"object","ttl":%d,"properties":{"caption":{"type":"string","maxLength":40,"position":0}},"required":["$createdAt"],"additionalProperties":false}}}`, storyTTLS))
	var ttlDocs []protocol.DocumentID
	var created int64
	for i := range 2 {
		id, h := w.documentAt(ctx, stories, "story", fmt.Sprintf(`{"caption":"for a moment, number %d"}`, i))
		ttlDocs, created = append(ttlDocs, id), h
	}

	// The full node on the old binary stopped at the switch, and catches up on the new.
	n.oldStopped(ctx, full, at)
	n.replaceImage(ctx, full)
	final := n.waitAll(ctx, n.height(ctx), catchUp)
	if err := n.waitNodes(ctx, final, catchUp, full); err != nil {
		t.Fatal(err)
	}
	n.nodes = append(n.nodes, full) // agreement, the notes and the stories' cleanup, on all five
	n.agree(ctx, final)
	n.notesProven(ctx, notes, append(before, load.documents...), final-1)
	t.Logf("%d notes written on 13 and across the switch present and proven on every node at %d", len(before)+len(load.documents), final-1)

	// The stories expire and are cleaned up, on 14.
	n.expire(ctx, stories, ttlDocs, created)

	// On to 15 in place: the validators' binaries signalled it all along, so the epoch
	// change that switched to 14 decided on 15 from the epoch it ended, and the next one
	// switches.
	final = w.renewOn15(ctx)

	// Replay across the switches.
	if _, err := n.run(ctx, n.composeCmd("stop", "-t", "30")); err != nil {
		t.Fatal(err)
	}
	n.replay(ctx, final, n.nodes[0], full)
}

// notesProven requires every note of ids present and verified at height on every node.
func (n *network) notesProven(ctx context.Context, notes protocol.ContractID, ids []protocol.DocumentID, height int64) {
	if err := atOnce(len(n.nodes), func(i int) error {
		m := n.nodes[i]
		for _, id := range ids {
			st, err := m.client.Document(ctx, notes, "note", id, height, true)
			if err != nil || !st.Present || !st.Verified {
				return fmt.Errorf("%s: note %s at %d: %+v %v", m.name, id, height, st, err)
			}
		}
		return nil
	}); err != nil {
		n.t.Fatal(err)
	}
}

// refusedBefore15 checks, by dry runs on 14, that what version 15 brings is refused
// before it: a type declaring renewOnReplace by 14's meta-schema (JsonSchemaError,
// 10101) and a renew action by the decoder (TxDecode).
func (w *writer) refusedBefore15(ctx context.Context) {
	t, n := w.n.t, w.n
	session := &protocol.DataContractCreate{Identity: w.identity, Nonce: w.nonce + 1, Definition: []byte(sessionContract)}
	renew := &protocol.DocumentsBatch{Identity: w.identity, Nonce: w.nonce + 1, Contract: protocol.ContractID{1}, Actions: []protocol.DocumentAction{
		{Kind: protocol.ActionRenew, Type: "session", ID: protocol.DocumentID{1}, Revision: 2},
	}}
	for _, c := range []struct {
		what string
		tx   protocol.Transition
		want protocol.Code
	}{{"a renewOnReplace type", session, protocol.CodeJSONSchema}, {"a renewal", renew, protocol.CodeTxDecode}} {
		res, err := n.nodes[0].client.DryRun(ctx, protocol.Sign(chainID, c.tx, n.dev.Priv))
		if err != nil || res.Code != c.want {
			t.Fatalf("%s on 14: %+v %v, want code %d", c.what, res, err, c.want)
		}
	}
	if p := n.protocolOf(ctx, n.nodes[0], 0); p.Version != protocol.V14 {
		t.Fatalf("the refusals were judged on %d, not 14: the epoch after the switch passed first", p.Version)
	}
	t.Log("on 14: a renewOnReplace type is refused by the meta-schema (10101), a renewal does not decode")
}

// sessionContract is version 15's session: a ttl of sessionTTLS, renewed by every
// replace.
var sessionContract = fmt.Sprintf(`{"documentSchemas":{"session":{"type":"object","ttl":%d,"renewOnReplace":true,"properties":{"user":{"type":"string","maxLength":20,"position":0},"page":{"type":"string","maxLength":20,"position":1}},"required":["$createdAt","user"],"additionalProperties":false}}}`, sessionTTLS)

// renewOn15 waits for the switch to 15, registers the session type, creates a session,
// renews it, replaces it (which renews it again), and requires every node, once level,
// to agree on every block and to prove the session renewed at the replace's block time
// with its expiry a ttl later. It returns the height every node reached.
func (w *writer) renewOn15(ctx context.Context) int64 {
	t, n := w.n.t, w.n
	switched := n.waitProtocol(ctx, "the switch to 15", func(p client.ProtocolState) bool { return p.Version == protocol.V15 })
	t.Logf("on 15 by height %d", switched.Height)
	sessions := w.contract(ctx, sessionContract)
	id := w.document(ctx, sessions, "session", `{"user":"ada"}`)
	var seen int64 // the height by which the last change was seen committed
	for _, a := range []protocol.DocumentAction{
		{Kind: protocol.ActionRenew, Type: "session", ID: id, Revision: 2},
		{Kind: protocol.ActionReplace, Type: "session", ID: id, Revision: 3, Data: []byte(`{"user":"ada","page":"cart"}`)},
	} {
		w.nonce++
		b := &protocol.DocumentsBatch{Identity: w.identity, Nonce: w.nonce, Contract: sessions, Actions: []protocol.DocumentAction{a}}
		seen = n.commit(ctx, protocol.Sign(chainID, b, n.dev.Priv), func(ctx context.Context, c *client.Client) (bool, error) {
			st, err := c.Document(ctx, sessions, "session", id, 0, false)
			return st.Present && st.Revision == a.Revision, err
		})
	}
	final := n.waitAll(ctx, seen+1, catchUp) // state final-1 holds the replace
	n.agree(ctx, final)
	for _, m := range n.nodes {
		st, err := m.client.Document(ctx, sessions, "session", id, final-1, true)
		if err != nil || !st.Present || !st.Verified || st.Revision != 3 || st.RenewedAt <= st.CreatedAt || st.RenewedAt != st.UpdatedAt ||
			st.ExpiresAtMs != st.RenewedAt+uint64(sessionTTLS)*1000 {
			t.Fatalf("%s: the session at %d: %+v %v", m.name, final-1, st, err)
		}
	}
	t.Logf("on 15: a session renewed, then renewed by a replace, proven alike on every node at %d", final-1)
	return final
}

// protocolOf reads m's protocol state at height (0: the latest), proven.
func (n *network) protocolOf(ctx context.Context, m *member, height int64) client.ProtocolState {
	n.t.Helper()
	ctx, cancel := context.WithTimeout(ctx, 8*callTimeout)
	defer cancel()
	p, err := m.client.Protocol(ctx, height, true)
	if err != nil || !p.Verified {
		n.t.Fatalf("%s: protocol at %d: %+v %v", m.name, height, p, err)
	}
	return p
}

// waitProtocol waits until node0's proven protocol state satisfies ok, and returns it.
func (n *network) waitProtocol(ctx context.Context, what string, ok func(client.ProtocolState) bool) client.ProtocolState {
	n.t.Helper()
	ctx, cancel := context.WithTimeout(ctx, switchWithin)
	defer cancel()
	for {
		cctx, ccancel := context.WithTimeout(ctx, 8*callTimeout)
		p, err := n.nodes[0].client.Protocol(cctx, 0, true)
		ccancel()
		if err == nil && ok(p) {
			return p
		}
		select {
		case <-ctx.Done():
			n.t.Fatalf("waiting for %s: last %+v %v: %v", what, p, err, ctx.Err())
		case <-time.After(poll):
		}
	}
}

// switchHeight is the height of the block that switched to 14, read proven from state
// at height: the record of the height version 14 began at.
func (n *network) switchHeight(ctx context.Context, height int64) int64 {
	n.t.Helper()
	v, err := n.nodes[0].key(ctx, drive.VersionActivatedKey(protocol.V14), height)
	if err != nil || len(v) != 8 {
		n.t.Fatalf("the height 14 began at, at %d: %x %v", height, v, err)
	}
	return int64(binary.BigEndian.Uint64(v))
}

// appVersions checks the headers' app version around the switch at height at: 13
// until the switch block, 14 from the one after (CometBFT's consensus params follow
// FinalizeBlock's update from the next height on).
func (n *network) appVersions(ctx context.Context, at int64) {
	n.t.Helper()
	if _, err := n.nodes[0].client.WaitForHeight(ctx, at+1); err != nil {
		n.t.Fatal(err)
	}
	hdrs := n.headers(ctx, at+1)
	for h := int64(1); h <= at+1; h++ {
		want := uint64(protocol.V13)
		if h > at {
			want = uint64(protocol.V14)
		}
		if got := hdrs[h].Version.App; got != want {
			n.t.Fatalf("header %d carries app version %d, want %d (switch at %d)", h, got, want, at)
		}
	}
	n.t.Logf("headers 1..%d carry app version 13, header %d carries 14", at, at+1)
}

// signalNewest restarts validator m signalling the newest version its binary implements
// (app.toml's signal_version 0), and waits until it is back at the network's height.
func (n *network) signalNewest(ctx context.Context, m *member) {
	t := n.t
	path := node.AppConfigFile(m.home)
	raw, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	re := regexp.MustCompile(`(?m)^signal_version = \d+$`)
	if !re.Match(raw) {
		t.Fatalf("%s's app.toml has no signal_version:\n%s", m.name, raw)
	}
	if err := os.WriteFile(path, re.ReplaceAll(raw, []byte("signal_version = 0")), 0o644); err != nil {
		t.Fatal(err)
	}
	if _, err := n.run(ctx, n.composeCmd("restart", "-t", "20", m.name)); err != nil {
		t.Fatal(err)
	}
	h := n.height(ctx)
	if err := n.waitNodes(ctx, h+2, catchUp, m); err != nil {
		t.Fatal(err)
	}
	t.Logf("%s restarted signalling %d, back at height %d", m.name, protocol.Newest(), m.latest(ctx))
}

// oldStopped checks that m, on the binary that stops short of 14, stopped before the
// switch block at: its container exited with exitUpgradeNeeded, and its log has the
// one line naming the version and the height.
func (n *network) oldStopped(ctx context.Context, m *member, at int64) {
	t := n.t
	id, err := n.container(ctx, m.name)
	if err != nil {
		t.Fatal(err)
	}
	want := fmt.Sprintf("the block at height %d runs protocol version 14, and this binary implements versions up to 13", at)
	deadline := time.Now().Add(catchUp)
	for {
		out, err := n.run(ctx, exec.Command("docker", "inspect", "-f", "{{.State.ExitCode}} {{.RestartCount}}", id))
		// NB: docker logs writes the container's stderr, where the node logs, to its own.
		raw, lerr := exec.CommandContext(ctx, "docker", "logs", id).CombinedOutput()
		logs := string(raw)
		if lerr == nil && err == nil {
			f := strings.Fields(out)
			if strings.Contains(logs, "panic:") {
				t.Fatalf("%s panicked:\n%s", m.name, logs[max(0, strings.Index(logs, "panic:")-2000):])
			}
			if len(f) == 2 && f[0] == strconv.Itoa(exitUpgradeNeeded) && strings.Contains(logs, want) {
				t.Logf("%s stopped at the switch: exit code %s, restarts %s, logged %q", m.name, f[0], f[1], want)
				if h := m.latest(ctx); h >= at {
					t.Fatalf("%s answers height %d, past the switch block %d", m.name, h, at)
				}
				return
			}
		}
		if time.Now().After(deadline) {
			t.Fatalf("%s did not stop at the switch with exit code %d and %q: inspect %q %v", m.name, exitUpgradeNeeded, want, out, err)
		}
		time.Sleep(time.Second)
	}
}

// replaceImage starts m again on the image of the newest binary, on the same home.
func (n *network) replaceImage(ctx context.Context, m *member) {
	t := n.t
	env := append(append([]string(nil), n.env...), "TTLD_FULL_IMAGE="+image)
	cmd := n.composeCmd("up", "-d", "--no-deps", m.name)
	c := exec.CommandContext(ctx, cmd.Path, cmd.Args[1:]...)
	c.Dir, c.Env = n.root, env
	if out, err := c.CombinedOutput(); err != nil {
		t.Fatalf("%s on %s: %v\n%s", m.name, image, err, out)
	}
	n.mu.Lock()
	delete(n.containers, m.name)
	n.mu.Unlock()
	t.Logf("%s started again on %s", m.name, image)
}

// expire waits for the stories ids of a ttl contract, created by height created, to
// expire and be cleaned up, and checks on every node, proven, that none is left and
// nothing is due, on 14.
func (n *network) expire(ctx context.Context, contract protocol.ContractID, ids []protocol.DocumentID, created int64) {
	t := n.t
	c := n.nodes[0].client
	var expiresAt uint64
	for _, id := range ids {
		st, err := c.Document(ctx, contract, "story", id, created, true)
		if err != nil || !st.Present || st.ExpiresAtMs == 0 {
			t.Fatalf("story %s at %d: %+v %v", id, created, st, err)
		}
		expiresAt = max(expiresAt, st.ExpiresAtMs)
	}
	wait := max(time.Until(time.UnixMilli(int64(expiresAt))), 0)
	t.Logf("the stories expire in %s", wait.Round(time.Second))
	select {
	case <-ctx.Done():
		t.Fatal(ctx.Err())
	case <-time.After(wait):
	}
	deadline := time.Now().Add(catchUp)
	for {
		h := n.lowest(ctx) - 1 // the state after h is proven with header h+1, which every node has
		bt, err := c.BlockTime(ctx, h, true)
		if h > 0 && err == nil && bt > expiresAt {
			gone := true
			for _, m := range n.nodes {
				for _, id := range ids {
					st, err := m.client.Document(ctx, contract, "story", id, h, true)
					if err != nil || !st.Verified {
						t.Fatalf("%s: story %s at %d: %+v %v", m.name, id, h, st, err)
					}
					gone = gone && !st.Present
				}
				due, err := m.client.Expirations(ctx, bt, h, true)
				if err != nil || !due.Verified {
					t.Fatalf("%s: expirations at %d: %+v %v", m.name, h, due, err)
				}
				gone = gone && len(due.Entries) == 0
			}
			if gone {
				if p := n.protocolOf(ctx, n.nodes[0], h); p.Version != protocol.V14 {
					t.Fatalf("the stories were cleaned up by height %d, on version %d: not on 14", h, p.Version)
				}
				t.Logf("the stories expired and were cleaned up on 14: absent and nothing due at height %d on every node (%d), proven", h, len(n.nodes))
				return
			}
		}
		if time.Now().After(deadline) {
			t.Fatalf("the stories were not cleaned up by height %d", h)
		}
		select {
		case <-ctx.Done():
			t.Fatal(ctx.Err())
		case <-time.After(poll):
		}
	}
}

// writer writes for the test: the dev key funds a transfer signer and creates an
// identity (the dev key is its key), which registers contracts and writes documents.
type writer struct {
	n        *network
	signer   ed25519.PrivateKey // the transfers' address key
	identity protocol.IdentityID
	nonce    uint64 // the identity's last nonce used
	docs     int
}

func (n *network) newWriter(ctx context.Context) *writer {
	t := n.t
	w := &writer{n: n, signer: n.nodes[0].load.Priv}
	fund := protocol.Sign(chainID, &protocol.AddressFundsTransfer{PubKey: n.dev.Pub, Nonce: 1, Recipient: n.nodes[0].load.Address(), Amount: loadFunds}, n.dev.Priv)
	create := &protocol.IdentityCreate{PubKey: n.dev.Pub, Nonce: 2, Amount: loadFunds, Keys: []ed25519.PublicKey{n.dev.Pub}}
	w.identity = protocol.NewIdentityID(n.dev.Address(), create.Nonce)
	for i, tx := range [][]byte{fund, protocol.Sign(chainID, create, n.dev.Priv)} {
		nonce := uint64(i + 1)
		n.commit(ctx, tx, func(ctx context.Context, c *client.Client) (bool, error) {
			st, err := c.Address(ctx, n.dev.Address(), 0, false)
			return len(unused([]uint64{nonce}, st)) == 0, err
		})
	}
	t.Logf("writer: identity %s, transfers from %s", w.identity, n.nodes[0].load.Address())
	return w
}

// commit sends tx to the validators in turn (the next one when one does not answer or
// refuses) until done reports it committed, sending it again after resendAfter, and
// returns the latest height then.
func (n *network) commit(ctx context.Context, tx []byte, done func(context.Context, *client.Client) (bool, error)) int64 {
	t := n.t
	for round := 0; ; round++ {
		for try := range n.nodes {
			if n.send(ctx, n.nodes[(round+try)%len(n.nodes)], [][]byte{tx}) {
				break
			}
		}
		deadline := time.Now().Add(resendAfter)
		for time.Now().Before(deadline) {
			for _, m := range n.nodes {
				cctx, cancel := context.WithTimeout(ctx, callTimeout)
				ok, err := done(cctx, m.client)
				cancel()
				if err == nil && ok {
					return m.latest(ctx)
				}
			}
			select {
			case <-ctx.Done():
				t.Fatalf("a transaction not committed: %v", ctx.Err())
			case <-time.After(poll):
			}
		}
	}
}

// contract registers a contract of the writer's identity and returns its id.
func (w *writer) contract(ctx context.Context, definition string) protocol.ContractID {
	w.nonce++
	cc := &protocol.DataContractCreate{Identity: w.identity, Nonce: w.nonce, Definition: []byte(definition)}
	id := protocol.NewContractID(w.identity, cc.Nonce)
	h := w.n.commit(ctx, protocol.Sign(chainID, cc, w.n.dev.Priv), func(ctx context.Context, c *client.Client) (bool, error) {
		st, err := c.Contract(ctx, id, 0, false)
		return st.Present, err
	})
	w.n.t.Logf("contract %s registered by height %d", id, h)
	return id
}

// document creates a document of typeName with data and returns its id.
func (w *writer) document(ctx context.Context, contract protocol.ContractID, typeName, data string) protocol.DocumentID {
	id, _ := w.documentAt(ctx, contract, typeName, data)
	return id
}

func (w *writer) documentAt(ctx context.Context, contract protocol.ContractID, typeName, data string) (protocol.DocumentID, int64) {
	w.nonce++
	w.docs++
	a := protocol.DocumentAction{Kind: protocol.ActionCreate, Type: typeName, Data: []byte(data),
		Entropy: sha256.Sum256([]byte(fmt.Sprintf("ttld-e2e-upgrade/%d", w.docs)))}
	b := &protocol.DocumentsBatch{Identity: w.identity, Nonce: w.nonce, Contract: contract, Actions: []protocol.DocumentAction{a}}
	id := b.CreateID(a)
	h := w.n.commit(ctx, protocol.Sign(chainID, b, w.n.dev.Priv), func(ctx context.Context, c *client.Client) (bool, error) {
		st, err := c.Document(ctx, contract, typeName, id, 0, false)
		return st.Present, err
	})
	return id, h
}

// loadRecord is what the load wrote, and the heights by which each write was seen
// committed.
type loadRecord struct {
	transfers []int64
	documents []protocol.DocumentID
	docHeight []int64
	err       error
}

// load writes a transfer, then a note, each committed before the next, every
// loadPace until stop is closed, and once more then: the last pair is committed after
// whatever the caller waited for before it closed stop.
func (w *writer) load(ctx context.Context, stop <-chan struct{}, notes protocol.ContractID) loadRecord {
	var rec loadRecord
	from := protocol.AddressOf(w.signer.Public().(ed25519.PublicKey))
	pace := time.NewTicker(loadPace)
	defer pace.Stop()
	for nonce := uint64(1); ; nonce++ {
		stopped := false
		select {
		case <-stop:
			stopped = true
		case <-ctx.Done():
			rec.err = ctx.Err()
			return rec
		case <-pace.C:
		}
		tr := transferOf(0, nonce)
		tx := protocol.Sign(chainID, &protocol.AddressFundsTransfer{PubKey: w.signer.Public().(ed25519.PublicKey), Nonce: nonce, Recipient: tr.recipient, Amount: tr.amount}, w.signer)
		rec.transfers = append(rec.transfers, w.n.commit(ctx, tx, func(ctx context.Context, c *client.Client) (bool, error) {
			st, err := c.Address(ctx, from, 0, false)
			return len(unused([]uint64{nonce}, st)) == 0, err
		}))
		id, h := w.documentAt(ctx, notes, "note", fmt.Sprintf(`{"text":"load %d"}`, nonce))
		rec.documents, rec.docHeight = append(rec.documents, id), append(rec.docHeight, h)
		if stopped {
			return rec
		}
	}
}

// check: transfers and notes were committed while the validators restarted (before
// restarted) and from the switch block at on.
func (r loadRecord) check(t *testing.T, restarted, at int64) {
	t.Helper()
	count := func(hs []int64, from, to int64) (k int) {
		for _, h := range hs {
			if h >= from && h <= to {
				k++
			}
		}
		return k
	}
	during := [2]int{count(r.transfers, 0, restarted), count(r.docHeight, 0, restarted)}
	after := [2]int{count(r.transfers, at, 1<<62), count(r.docHeight, at, 1<<62)}
	if during[0] == 0 || during[1] == 0 || after[0] == 0 || after[1] == 0 {
		t.Fatalf("load: transfers and notes committed while the validators restarted %v, from the switch at %d on %v", during, at, after)
	}
	t.Logf("load: %d transfers and %d notes, %v of them committed by the last restart and %v from the switch block on", len(r.transfers), len(r.documents), during, after)
}
