package abci

import (
	"context"
	"encoding/binary"
	"fmt"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/cockroachdb/datadriven"
	abcitypes "github.com/cometbft/cometbft/abci/types"
	"github.com/cosmos/iavl"

	"github.com/ttld-dev/ttld/drive"
	"github.com/ttld-dev/ttld/genesis"
	"github.com/ttld-dev/ttld/proofs"
	"github.com/ttld-dev/ttld/protocol"
)

// TestScenarios runs the block scenarios in testdata/. Commands:
//
//	genesis                      input: "address NAME BALANCE" / "identity NAME BALANCE KEY[,KEY]"
//	block time=DURATION          input: one transaction per line (see harness.tx); the
//	                             time is since genesis; prints each result and the events
//	check-tx                     input: one transaction; runs CheckTx on the check state
//	state names=A,B identities=I,J   balances and nonces, fees, and the supply check
//	query path=address name=A [height=H]   a proven read, verified against the root
//	query path=identity name=I [height=H]
//	changes name=A since=H       the address's balance changes since H, proven complete
//
// Regenerate with: go test ./abci -run TestScenarios -rewrite (commit a rewrite only
// when you understand its diff).
func TestScenarios(t *testing.T) {
	datadriven.Walk(t, "testdata", func(t *testing.T, path string) {
		h := newHarness(t)
		datadriven.RunTest(t, path, func(t *testing.T, d *datadriven.TestData) string {
			h.t = t
			return h.run(d)
		})
	})
}

func (h *harness) run(d *datadriven.TestData) string {
	m := map[string]string{}
	for _, a := range d.CmdArgs {
		m[a.Key] = strings.Join(a.Vals, ",")
	}
	var out strings.Builder
	switch d.Cmd {
	case "genesis":
		var st genesis.AppState
		for _, line := range strings.Split(strings.TrimSpace(d.Input), "\n") {
			f := strings.Fields(line)
			switch {
			case len(f) == 3 && f[0] == "address":
				st.Addresses = append(st.Addresses, genesis.Address{Address: addr(f[1]).String(), Balance: h.u64(map[string]string{"b": f[2]}, "b")})
			case len(f) == 4 && f[0] == "identity":
				var keys []string
				for _, k := range strings.Split(f[3], ",") {
					keys = append(keys, fmt.Sprintf("%x", []byte(pub(k))))
				}
				st.Identities = append(st.Identities, genesis.Identity{ID: genesisIdentityID(f[1]).String(), Balance: h.u64(map[string]string{"b": f[2]}, "b"), Keys: keys})
			default:
				h.t.Fatalf("bad genesis line %q", line)
			}
		}
		h.initChain(st)
		fmt.Fprintf(&out, "genesis: %d addresses, %d identities\n", len(st.Addresses), len(st.Identities))
	case "block":
		at := genesisTime
		if m["time"] != "" {
			dur, err := time.ParseDuration(m["time"])
			if err != nil {
				h.t.Fatal(err)
			}
			at = at.Add(dur)
		}
		var txs [][]byte
		for _, line := range strings.Split(strings.TrimSpace(d.Input), "\n") {
			if strings.TrimSpace(line) != "" {
				txs = append(txs, h.tx(line))
			}
		}
		res := h.block(at, txs)
		fmt.Fprintf(&out, "height %d\n", h.height)
		for i, tr := range res.TxResults {
			fmt.Fprintf(&out, "tx %d: %s fee=%d\n", i, codeName(tr.Code), tr.GasUsed)
		}
		for _, e := range res.Events {
			fmt.Fprintf(&out, "event %s", e.Type)
			for _, a := range e.Attributes {
				fmt.Fprintf(&out, " %s=%s", a.Key, a.Value)
			}
			out.WriteString("\n")
		}
	case "check-tx":
		res, err := h.app.CheckTx(context.Background(), &abcitypes.RequestCheckTx{Tx: h.tx(strings.TrimSpace(d.Input))})
		if err != nil {
			h.t.Fatal(err)
		}
		if res.Codespace != "" {
			fmt.Fprintf(&out, "codespace %s code %d\n", res.Codespace, res.Code)
			break
		}
		fmt.Fprintf(&out, "%s fee=%d\n", codeName(res.Code), res.GasWanted)
	case "process-proposal":
		var txs [][]byte
		for _, line := range strings.Split(strings.TrimSpace(d.Input), "\n") {
			if strings.TrimSpace(line) != "" {
				txs = append(txs, h.tx(line))
			}
		}
		res, err := h.app.ProcessProposal(context.Background(), &abcitypes.RequestProcessProposal{Txs: txs, Height: h.height + 1, Time: genesisTime})
		if err != nil {
			h.t.Fatal(err)
		}
		fmt.Fprintf(&out, "%s\n", res.Status)
	case "state":
		kv, err := h.store.Saved(0)
		if err != nil {
			h.t.Fatal(err)
		}
		for _, n := range splitList(m["names"]) {
			st, ok, _ := drive.GetAddress(kv, addr(n))
			if !ok {
				fmt.Fprintf(&out, "address %s: absent\n", n)
				continue
			}
			fmt.Fprintf(&out, "address %s: balance=%d nonce=%s\n", n, st.Balance, nonceString(st.Nonce))
		}
		for _, n := range splitList(m["identities"]) {
			id := h.identity(n)
			bal, ok, _ := drive.GetIdentityBalance(kv, id)
			if !ok {
				fmt.Fprintf(&out, "identity %s: absent\n", n)
				continue
			}
			nonce, _ := drive.GetIdentityNonce(kv, id)
			fmt.Fprintf(&out, "identity %s: balance=%d nonce=%s\n", n, bal, nonceString(nonce))
		}
		fees, _ := drive.GetProcessingFees(kv)
		fmt.Fprintf(&out, "fees collected: %d\n", fees)
		if err := h.supplyCheck(); err != nil {
			fmt.Fprintf(&out, "supply: BROKEN: %v\n", err)
		} else {
			out.WriteString("supply: conserved\n")
		}
	case "query":
		var path string
		var data []byte
		switch m["path"] {
		case "address":
			a := addr(m["name"])
			path, data = proofs.PathAddress, a[:]
		case "identity":
			id := h.identity(m["name"])
			path, data = proofs.PathIdentity, id[:]
		default:
			h.t.Fatalf("unknown query path %q", m["path"])
		}
		var height int64
		if m["height"] != "" {
			height = int64(h.u64(m, "height"))
		}
		res := h.query(path, data, height)
		if res.Code != 0 {
			fmt.Fprintf(&out, "query code %d\n", res.Code)
			break
		}
		out.WriteString(h.verified(path, data, res))
	case "changes":
		a := addr(m["name"])
		since := binary.BigEndian.AppendUint64(nil, h.u64(m, "since"))
		for _, path := range []string{proofs.PathAddressChangesCompacted, proofs.PathAddressChangesBlocks} {
			res := h.query(path, since, 0)
			entries, err := h.verifyRange(path, since, res)
			if err != nil {
				h.t.Fatalf("%s: %v", path, err)
			}
			for _, e := range entries {
				changes, err := drive.DecodeBalanceChanges(e.Value)
				if err != nil {
					h.t.Fatal(err)
				}
				for _, c := range changes {
					if c.Address == a {
						fmt.Fprintf(&out, "%s %x: balance=%d\n", strings.TrimPrefix(path, "/address-changes/"), e.Key[2:], c.Balance)
					}
				}
			}
		}
		fmt.Fprintf(&out, "verified complete at height %d\n", h.height)
	default:
		h.t.Fatalf("unknown command %q", d.Cmd)
	}
	return out.String()
}

func splitList(s string) []string {
	if s == "" {
		return nil
	}
	return strings.Split(s, ",")
}

func (h *harness) query(path string, data []byte, height int64) *abcitypes.ResponseQuery {
	res, err := h.app.Query(context.Background(), &abcitypes.RequestQuery{Path: path, Data: data, Height: height, Prove: true})
	if err != nil {
		h.t.Fatal(err)
	}
	return res
}

// rootAt is the root of saved version v: what header v+1 carries as its app hash.
func (h *harness) rootAt(v int64) []byte {
	var root []byte
	err := h.store.View(v, func(t *iavl.ImmutableTree) error {
		root = t.Hash()
		return nil
	})
	if err != nil {
		h.t.Fatal(err)
	}
	return root
}

// verified checks a single-key or identity answer against the root of its version and
// renders it.
func (h *harness) verified(path string, data []byte, res *abcitypes.ResponseQuery) string {
	root := h.rootAt(res.Height)
	target, err := proofs.TargetOf(path, data)
	if err != nil {
		h.t.Fatal(err)
	}
	if target.Range() {
		entries, err := h.verifyRange(path, data, res)
		if err != nil {
			h.t.Fatal(err)
		}
		var id [32]byte
		copy(id[:], data)
		kvs := make([][2][]byte, len(entries))
		for i, e := range entries {
			kvs[i] = [2][]byte{e.Key, e.Value}
		}
		idn, ok, err := drive.DecodeIdentity(id, kvs)
		if err != nil {
			h.t.Fatal(err)
		}
		if !ok {
			return fmt.Sprintf("verified absence at height %d\n", res.Height)
		}
		return fmt.Sprintf("identity balance=%d nonce=%d keys=%d\nverified presence at height %d\n", idn.Balance, idn.Nonce.Last, len(idn.Keys), res.Height)
	}
	if len(res.Value) == 0 {
		if err := proofs.VerifyAbsence(root, target.Key, res.ProofOps); err != nil {
			h.t.Fatal(err)
		}
		return fmt.Sprintf("absent\nverified absence at height %d\n", res.Height)
	}
	if err := proofs.VerifyPresence(root, target.Key, res.Value, res.ProofOps); err != nil {
		h.t.Fatal(err)
	}
	st, err := drive.DecodeAddressState(res.Value)
	if err != nil {
		h.t.Fatal(err)
	}
	return fmt.Sprintf("balance=%d nonce=%d\nverified presence at height %d\n", st.Balance, st.Nonce.Last, res.Height)
}

func (h *harness) verifyRange(path string, data []byte, res *abcitypes.ResponseQuery) ([]proofs.KV, error) {
	target, err := proofs.TargetOf(path, data)
	if err != nil {
		return nil, err
	}
	entries, err := proofs.DecodeEntries(res.Value)
	if err != nil {
		return nil, err
	}
	return entries, proofs.VerifyRange(h.rootAt(res.Height), target.Start, target.End, entries, res.Info == proofs.InfoMore, res.ProofOps)
}

// nonceString shows a nonce record: the last nonce, and the skipped ones still usable.
func nonceString(s protocol.NonceState) string {
	out := strconv.FormatUint(s.Last, 10)
	var skipped []string
	for _, n := range s.Skipped() {
		skipped = append(skipped, strconv.FormatUint(n, 10))
	}
	if len(skipped) > 0 {
		out += " skipped=" + strings.Join(skipped, ",")
	}
	return out
}
