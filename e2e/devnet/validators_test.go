//go:build devnet

package devnet

import (
	"bytes"
	"context"
	"crypto/ed25519"
	"encoding/hex"
	"errors"
	"fmt"
	"io"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/cometbft/cometbft/p2p"
	"github.com/cometbft/cometbft/privval"
	cmttypes "github.com/cometbft/cometbft/types"

	"github.com/ttld-dev/ttld/client"
	"github.com/ttld-dev/ttld/drive"
	"github.com/ttld-dev/ttld/keyring"
	"github.com/ttld-dev/ttld/node"
	"github.com/ttld-dev/ttld/proofs"
	"github.com/ttld-dev/ttld/protocol"
	"github.com/ttld-dev/ttld/web/check"
)

// The validators test's figures.
const (
	validatorsDeadline = 12 * time.Minute
	// switchHeight is where genesis schedules the switch to 16 (ttld testnet
	// --protocol-upgrade), a few seconds into the network at its pace.
	switchHeight = 40
	// changeWithin bounds every wait for a change of the set to show, in state and at
	// CometBFT: its block, two more, a restart's catching up.
	changeWithin = 90 * time.Second
)

// TestDevnetValidators changes a running network's validators by its own rules
// (docs/STATE.md, "Validators"): four validators of power 10 and a full node start on
// protocol version 15, and genesis switches the chain to 16 in place, which makes the
// genesis set state. The operators, the validators' payout identities whose keys are in
// the client home only, then vote the full node in as a fifth validator (power 5) and
// it signs blocks; rotate node3's consensus key, after which node3 restarts with the new
// key and signs again; remove node2, which is then stopped while the network goes on;
// and a twin of node1, a second node run with its key, makes it sign conflicting votes,
// whose evidence, committed by the network, removes node1 at once. After
// every change the set in state, read by ttld query validators --prove (CometBFT's
// light client from the client home's genesis, with witnesses) and by the browser's
// check of a web view's bundle (a trace of headers from the pinned genesis set),
// verifies and is the one CometBFT runs. At the end every node agrees on every block
// and app hash, and ttld replay re-executes a validator's and the new validator's
// stores with the same app hashes.
func TestDevnetValidators(t *testing.T) {
	ctx, cancel := context.WithTimeout(context.Background(), validatorsDeadline)
	defer cancel()
	n := newNetwork(t)
	n.files = append(n.files, "docker-compose.fullnodes.yml")
	n.generate(ctx, 1, "--protocol-version", "15", "--protocol-upgrade", fmt.Sprintf("16@%d", switchHeight))
	full := n.full[0]
	n.up(ctx)
	n.waitAll(ctx, 3, startTimeout)
	if err := n.waitNodes(ctx, switchHeight+2, startTimeout, append([]*member{full}, n.nodes...)...); err != nil {
		t.Fatal(err)
	}
	n.followSet()
	v := n.validatorsOf(ctx)
	if v.Total != 40 || len(v.List) != 4 {
		t.Fatalf("after the switch to 16: %d validators of power %d, want the genesis set, 4 of 40", len(v.List), v.Total)
	}
	t.Logf("on 16 by height %d: the genesis set is state, 4 validators of power 10, verified by the light client", v.Height)

	// The operators pay fees; the dev key makes an identity to operate the full node.
	for _, m := range n.nodes {
		n.commitDev(ctx, &protocol.IdentityTopUp{PubKey: n.dev.Pub, Identity: m.payout, Amount: 1_000_000_000})
	}
	create := &protocol.IdentityCreate{PubKey: n.dev.Pub, Amount: 1_000_000_000, Keys: []ed25519.PublicKey{n.dev.Pub}}
	n.commitDev(ctx, create)
	fullOperator := protocol.NewIdentityID(n.dev.Address(), create.Nonce)

	// The full node, voted in: 10 (node0's proposal), 20, then 30 of 40 pass it.
	fullKey := n.consensusKey(full.home)
	id := n.propose(ctx, 0, protocol.ValidatorChange{Kind: protocol.ValidatorAdd, PubKey: fullKey, Power: 5, Operator: fullOperator})
	n.approve(ctx, 1, id, false)
	applied := n.approve(ctx, 2, id, true)
	n.setIs(ctx, applied, map[*member]uint64{n.nodes[0]: 10, n.nodes[1]: 10, n.nodes[2]: 10, n.nodes[3]: 10, full: 5})
	n.signs(ctx, full, protocol.ConsensusAddressOf(fullKey), applied)
	t.Logf("%s voted in at height %d with power 5, and signs blocks", full.name, applied)

	// node3's key, rotated: 35 of 45 approve (the full node's operator among them);
	// node3, restarted with its new key, signs again.
	keyDir := t.TempDir()
	newKey := n.newConsensusKey(keyDir)
	id = n.propose(ctx, 3, protocol.ValidatorChange{Kind: protocol.ValidatorRotate, Validator: protocol.ConsensusAddress(n.nodes[3].validator), PubKey: newKey.Key.PubKey.Bytes()})
	n.approve(ctx, 0, id, false)
	n.approve(ctx, 1, id, false)
	applied = n.approveAs(ctx, n.dev.Priv, fullOperator, id, true)
	n.setIs(ctx, applied, map[*member]uint64{n.nodes[0]: 10, n.nodes[1]: 10, n.nodes[2]: 10, full: 5}, newKey)
	n.rekey(ctx, n.nodes[3], newKey, keyDir)
	n.signs(ctx, n.nodes[3], protocol.ConsensusAddress(newKey.Key.PubKey.Address()), applied)
	t.Logf("node3 rotated to %X at height %d; restarted on it, it signs", newKey.Key.PubKey.Address(), applied)

	// node2, removed by the others' 35 of 45, then stopped: the network goes on.
	id = n.propose(ctx, 0, protocol.ValidatorChange{Kind: protocol.ValidatorRemove, Validator: protocol.ConsensusAddress(n.nodes[2].validator)})
	n.approve(ctx, 1, id, false)
	n.approve(ctx, 3, id, false)
	applied = n.approveAs(ctx, n.dev.Priv, fullOperator, id, true)
	n.setIs(ctx, applied, map[*member]uint64{n.nodes[0]: 10, n.nodes[1]: 10, full: 5}, newKey)
	if _, err := n.run(ctx, n.composeCmd("stop", "-t", "10", n.nodes[2].name)); err != nil {
		t.Fatal(err)
	}
	running := []*member{n.nodes[0], n.nodes[1], n.nodes[3], full}
	after := n.nodes[0].latest(ctx) + 20
	if err := n.waitNodes(ctx, after, changeWithin, running...); err != nil {
		t.Fatal(err)
	}
	t.Logf("node2 removed at height %d and stopped; the others reached height %d", applied, after)

	// node1 equivocates: a twin runs with its key, prevoting nil where node1 prevotes
	// the block. The evidence, committed, removes node1 at once and is recorded.
	twin := n.startTwin(ctx, n.nodes[1])
	v = n.waitSet(ctx, func(v client.ValidatorSetState) bool { return v.Total == 25 })
	var caught *drive.Misbehavior
	for i, m := range v.Misbehavior {
		if bytes.Equal(m.Validator[:], n.nodes[1].validator) && m.Kind == protocol.MisbehaviorDuplicateVote && m.Removed && m.Power == 10 {
			caught = &v.Misbehavior[i]
		}
	}
	if caught == nil {
		t.Fatalf("no record of node1's duplicate vote: %+v", v.Misbehavior)
	}
	if _, err := n.run(ctx, n.composeCmd("stop", "-t", "5", twin)); err != nil {
		t.Fatal(err)
	}
	n.setIs(ctx, v.Height, map[*member]uint64{n.nodes[0]: 10, full: 5}, newKey)
	t.Logf("node1 and its twin signed conflicting votes at height %d: the evidence, handled at height %d, removed node1", caught.Height, caught.RecordedAt)

	// Every running node agrees on every block; the CLI and the browser's check read
	// the final set verified; replay matches.
	final := n.nodes[0].latest(ctx)
	if err := n.waitNodes(ctx, final, changeWithin, running...); err != nil {
		t.Fatal(err)
	}
	n.agreeAmong(ctx, running, 1, final)
	if _, err := n.run(ctx, n.composeCmd("stop", "-t", "30")); err != nil {
		t.Fatal(err)
	}
	n.replay(ctx, final, n.nodes[0], full)
}

// followSet gives every member a client that follows the validator set with CometBFT's
// light client from the genesis set (in memory), the other validators its witnesses.
func (n *network) followSet() {
	all := append(append([]*member(nil), n.nodes...), n.full...)
	for i, m := range all {
		var witnesses []string
		for j, w := range n.nodes {
			if j != i && len(witnesses) < 2 {
				witnesses = append(witnesses, w.rpc)
			}
		}
		c, err := client.Dial(m.rpc, client.Options{ChainID: chainID, Light: &client.LightOptions{Genesis: n.trusted, InitialHeight: 1, Witnesses: witnesses}})
		if err != nil {
			n.t.Fatal(err)
		}
		n.t.Cleanup(func() { _ = c.Close() })
		m.client = c
	}
}

// validatorsOf reads the set at node0's latest state, verified.
func (n *network) validatorsOf(ctx context.Context) client.ValidatorSetState {
	n.t.Helper()
	cctx, cancel := context.WithTimeout(ctx, 10*callTimeout)
	defer cancel()
	v, err := n.nodes[0].client.Validators(cctx, 0, true)
	if err != nil || !v.Verified {
		n.t.Fatalf("validators: %+v %v", v, err)
	}
	return v
}

// waitSet waits until node0's verified set satisfies ok.
func (n *network) waitSet(ctx context.Context, ok func(client.ValidatorSetState) bool) client.ValidatorSetState {
	n.t.Helper()
	ctx, cancel := context.WithTimeout(ctx, changeWithin)
	defer cancel()
	for {
		cctx, ccancel := context.WithTimeout(ctx, 10*callTimeout)
		v, err := n.nodes[0].client.Validators(cctx, 0, true)
		ccancel()
		if err == nil && ok(v) {
			return v
		}
		select {
		case <-ctx.Done():
			n.t.Fatalf("waiting for the set: %+v %v", v, err)
		case <-time.After(poll):
		}
	}
}

// commitDev sends tr signed by the dev key (its next nonce) and waits for its block.
func (n *network) commitDev(ctx context.Context, tr protocol.Transition) int64 {
	n.t.Helper()
	return n.commitSigned(ctx, tr, n.dev.Priv).Height
}

// commitSigned sends tr signed by key, through node0, and returns its committed result,
// which must be code 0.
func (n *network) commitSigned(ctx context.Context, tr protocol.Transition, key ed25519.PrivateKey) client.BroadcastResult {
	n.t.Helper()
	cctx, cancel := context.WithTimeout(ctx, commitTimeout)
	defer cancel()
	c := n.nodes[0].client
	tx, err := c.Sign(cctx, tr, key)
	if err != nil {
		n.t.Fatal(err)
	}
	res, err := c.Broadcast(cctx, tx, true)
	if err != nil || res.Code != 0 || !res.Committed {
		n.t.Fatalf("%s: %+v %v", tr.Type(), res, err)
	}
	return res
}

// payoutKey is validator i's operator key, from the client home.
func (n *network) payoutKey(i int) ed25519.PrivateKey {
	k, err := keyring.Open(n.client).Get(node.PayoutKeyName(n.nodes[i].name))
	if err != nil {
		n.t.Fatal(err)
	}
	return k.Priv
}

// propose has validator i's operator propose c, and returns the proposal's number.
func (n *network) propose(ctx context.Context, i int, c protocol.ValidatorChange) uint64 {
	n.t.Helper()
	res := n.commitSigned(ctx, &protocol.ValidatorSetProposal{Identity: n.nodes[i].payout, Change: c}, n.payoutKey(i))
	id, err := strconv.ParseUint(attrOf(res, protocol.EventValidatorApproval, protocol.AttrProposal), 10, 64)
	if err != nil {
		n.t.Fatalf("proposal %s: no number in %+v", c.Kind, res.Events)
	}
	return id
}

// approve has validator i's operator approve proposal id; passes says whether the
// approval must pass it. It returns the height of its block.
func (n *network) approve(ctx context.Context, i int, id uint64, passes bool) int64 {
	n.t.Helper()
	return n.approveAs(ctx, n.payoutKey(i), n.nodes[i].payout, id, passes)
}

// approveAs is approve by operator, signing with key.
func (n *network) approveAs(ctx context.Context, key ed25519.PrivateKey, operator protocol.IdentityID, id uint64, passes bool) int64 {
	n.t.Helper()
	res := n.commitSigned(ctx, &protocol.ValidatorSetApproval{Identity: operator, Proposal: id}, key)
	if got := attrOf(res, protocol.EventValidatorApproval, protocol.AttrPassed); got != strconv.FormatBool(passes) {
		n.t.Fatalf("approval of %d: passed %q, want %v", id, got, passes)
	}
	return res.Height
}

// attrOf is the value of attribute key of the first event of type typ of res.
func attrOf(res client.BroadcastResult, typ, key string) string {
	v, _ := res.Attr(typ, key)
	return v
}

// setIs checks, once CometBFT runs the set a change applied at height applied made
// (from applied+2), that the set in state, verified, is want: each member's consensus
// address (or the rotated keys' given) with its power; and that CometBFT's set at the
// same height and the CLI's and the browser's verified reads say the same.
func (n *network) setIs(ctx context.Context, applied int64, want map[*member]uint64, rotated ...*privval.FilePV) {
	n.t.Helper()
	if err := n.waitNodes(ctx, applied+3, changeWithin, n.nodes[0]); err != nil {
		n.t.Fatal(err)
	}
	wantSet := map[string]uint64{}
	var total uint64
	for m, p := range want {
		a := m.validator
		if a == nil {
			ca := protocol.ConsensusAddressOf(n.consensusKey(m.home))
			a = ca[:]
		}
		wantSet[strings.ToUpper(hex.EncodeToString(a))] = p
		total += p
	}
	for _, pv := range rotated {
		wantSet[strings.ToUpper(hex.EncodeToString(pv.Key.Address))] = 10
		total += 10
	}
	v := n.validatorsOf(ctx)
	got := map[string]uint64{}
	for _, val := range v.List {
		got[strings.ToUpper(val.Address.String())] = val.Power
	}
	if fmt.Sprint(got) != fmt.Sprint(wantSet) || v.Total != total {
		n.t.Fatalf("the set in state at %d: %v, want %v", v.Height, got, wantSet)
	}
	h := v.Height + 1
	cctx, cancel := context.WithTimeout(ctx, callTimeout)
	vals, err := n.nodes[0].raw.Validators(cctx, &h, nil, nil)
	cancel()
	if err != nil {
		n.t.Fatal(err)
	}
	comet := map[string]uint64{}
	for _, val := range vals.Validators {
		comet[strings.ToUpper(hex.EncodeToString(val.Address))] = uint64(val.VotingPower)
	}
	if fmt.Sprint(comet) != fmt.Sprint(wantSet) {
		n.t.Fatalf("CometBFT's set at %d: %v, want %v", h, comet, wantSet)
	}
	n.cliVerifies(ctx, total)
	n.browserVerifies(ctx)
}

// cliVerifies runs ttld query validators --prove with the client home, node0 its node
// and node1 a witness: VERIFIED, with the total power.
func (n *network) cliVerifies(ctx context.Context, total uint64) {
	n.t.Helper()
	out, err := n.run(ctx, exec.Command(filepath.Join(n.root, "bin", "ttld"), "--home", n.client, "--node", n.nodes[0].rpc,
		"query", "validators", "--prove", "--witness", n.nodes[1].rpc))
	if err != nil || !strings.Contains(out, fmt.Sprintf("total power %d\n", total)) || !strings.Contains(out, "VERIFIED presence") {
		n.t.Fatalf("ttld query validators --prove: %v\n%s", err, out)
	}
}

// browserVerifies checks node0's web view's bundles of the validators page (the set,
// the proposals, the evidence, at one height) as the browser's check does, from the
// pinned genesis set: VERIFIED, through each bundle's trace once the set has changed.
func (n *network) browserVerifies(ctx context.Context) {
	n.t.Helper()
	var bundles []check.Bundle
	for i, path := range []string{proofs.PathValidators, proofs.PathValidatorProposals, proofs.PathMisbehavior} {
		url := fmt.Sprintf("http://127.0.0.1:%s%d/proof?path=%s", portPrefix, node.TestnetHostWebPort, path)
		if i > 0 {
			url += fmt.Sprintf("&height=%d", bundles[0].Response.Height)
		}
		req, err := http.NewRequestWithContext(ctx, http.MethodGet, url, nil)
		if err != nil {
			n.t.Fatal(err)
		}
		res, err := http.DefaultClient.Do(req)
		if err != nil {
			n.t.Fatal(err)
		}
		raw, err := io.ReadAll(res.Body)
		res.Body.Close()
		if err != nil || res.StatusCode != http.StatusOK {
			n.t.Fatalf("%s: %d %v %.300s", url, res.StatusCode, err, raw)
		}
		b, err := check.DecodeBundle(raw)
		if err != nil {
			n.t.Fatal(err)
		}
		bundles = append(bundles, b)
	}
	v, err := check.Verify(bundles, check.Pin{ChainID: chainID, Validators: n.trusted}, time.Now(), -1, "", nil)
	var shown check.ErrShown
	if err != nil && !errors.As(err, &shown) {
		n.t.Fatalf("the browser's check of node0's validators bundles: %v", err)
	}
	n.t.Logf("the browser's check: verified at height %d, following %d headers from the genesis set (%s)", v.Height, v.Followed, v.Figures["validators"])
}

// consensusKey is the consensus public key in a node home.
func (n *network) consensusKey(home string) ed25519.PublicKey {
	pv := privval.LoadFilePVEmptyState(filepath.Join(home, "config", "priv_validator_key.json"), "")
	return pv.Key.PubKey.Bytes()
}

// newConsensusKey makes a consensus key and saves it in dir.
func (n *network) newConsensusKey(dir string) *privval.FilePV {
	pv := privval.GenFilePV(filepath.Join(dir, "priv_validator_key.json"), filepath.Join(dir, "priv_validator_state.json"))
	pv.Save()
	return pv
}

// rekey stops m, gives its home the key newConsensusKey saved in dir and starts it
// again.
func (n *network) rekey(ctx context.Context, m *member, pv *privval.FilePV, dir string) {
	n.t.Helper()
	if _, err := n.run(ctx, n.composeCmd("stop", "-t", "10", m.name)); err != nil {
		n.t.Fatal(err)
	}
	raw, err := os.ReadFile(filepath.Join(dir, "priv_validator_key.json"))
	if err != nil {
		n.t.Fatal(err)
	}
	path := filepath.Join(m.home, "config", "priv_validator_key.json")
	if err := os.WriteFile(path, raw, 0o600); err != nil {
		n.t.Fatal(err)
	}
	if os.Getuid() == 0 {
		if err := os.Chown(path, n.uid, n.gid); err != nil {
			n.t.Fatal(err)
		}
	}
	n.start(ctx, m.name)
	m.validator = pv.Key.Address
}

// signs waits until a block after height from carries a's signature in its last commit,
// as node m reports it.
func (n *network) signs(ctx context.Context, m *member, a protocol.ConsensusAddress, from int64) {
	n.t.Helper()
	ctx, cancel := context.WithTimeout(ctx, changeWithin)
	defer cancel()
	for {
		h := m.latest(ctx)
		if h > from+2 {
			cctx, ccancel := context.WithTimeout(ctx, callTimeout)
			c, err := n.nodes[0].raw.Commit(cctx, &h)
			ccancel()
			if err == nil {
				for _, s := range c.Commit.Signatures {
					if s.BlockIDFlag == cmttypes.BlockIDFlagCommit && bytes.Equal(s.ValidatorAddress, a[:]) {
						return
					}
				}
			}
		}
		select {
		case <-ctx.Done():
			n.t.Fatalf("%s (%s): no commit signed by it after height %d", m.name, a, from)
		case <-time.After(poll):
		}
	}
}

// startTwin starts, beside m, a node run with m's validator key (e2e/devnet/twin.yml):
// a copy of m's configuration with a node key of its own, an empty sign state, and a
// proposal timeout of a millisecond, so that it prevotes nil before a proposal reaches
// it while m prevotes the block. It returns the twin's service name.
func (n *network) startTwin(ctx context.Context, m *member) string {
	n.t.Helper()
	twin := filepath.Join(n.dir, "twin")
	for _, dir := range []string{"config", "data"} {
		if err := os.MkdirAll(filepath.Join(twin, dir), 0o755); err != nil {
			n.t.Fatal(err)
		}
	}
	for _, f := range []string{"genesis.json", "config.toml", "app.toml", "priv_validator_key.json"} {
		raw, err := os.ReadFile(filepath.Join(m.home, "config", f))
		if err != nil {
			n.t.Fatal(err)
		}
		if err := os.WriteFile(filepath.Join(twin, "config", f), raw, 0o600); err != nil {
			n.t.Fatal(err)
		}
	}
	pv := privval.LoadFilePVEmptyState(filepath.Join(twin, "config", "priv_validator_key.json"), filepath.Join(twin, "data", "priv_validator_state.json"))
	pv.Save()
	if _, err := p2p.LoadOrGenNodeKey(filepath.Join(twin, "config", "node_key.json")); err != nil {
		n.t.Fatal(err)
	}
	editConfig(n.t, twin, regexp.MustCompile(`(?m)^timeout_propose = .*$`), `timeout_propose = "1ms"`)
	editConfig(n.t, twin, regexp.MustCompile(`(?m)^moniker = .*$`), `moniker = "twin"`)
	if os.Getuid() == 0 {
		chownAll(n.t, twin, n.uid, n.gid)
	}
	n.files = append(n.files, filepath.Join("e2e", "devnet", "twin.yml"))
	n.start(ctx, "twin")
	return "twin"
}
