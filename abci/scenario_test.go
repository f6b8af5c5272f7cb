package abci

import (
	"bytes"
	"context"
	"crypto/sha256"
	"encoding/binary"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/cockroachdb/datadriven"
	abcitypes "github.com/cometbft/cometbft/abci/types"
	"github.com/cosmos/iavl"
	"github.com/prometheus/client_golang/prometheus/testutil"

	"github.com/ttld-dev/ttld/app"
	"github.com/ttld-dev/ttld/drive"
	"github.com/ttld-dev/ttld/feeschedule"
	"github.com/ttld-dev/ttld/genesis"
	"github.com/ttld-dev/ttld/proofs"
	"github.com/ttld-dev/ttld/protocol"
)

// TestScenarios runs the block scenarios in testdata/. Commands:
//
//	genesis [epoch=SECONDS]      input: "address NAME BALANCE" / "identity NAME BALANCE
//	                             KEY[,KEY]" / "validator NAME PAYOUT_IDENTITY [POWER]"
//	                             (power 10 unless given)
//	block time=DURATION [proposer=NAME]   input: one transaction per line (see
//	                             harness.tx); the time is since genesis; the proposer
//	                             stays for later blocks; prints each result and the events
//	halting-block time=DURATION [proposer=NAME]   input: transactions; a block this
//	                             binary must halt at (the chain moves past it): prints
//	                             why, and checks that nothing was staged or saved
//	protocol                     the protocol version and upgrade records, proven
//	validators                   the validator set, the pending proposals with their
//	                             approvals and the misbehaviour recorded, proven
//	block ... evidence=NAME@H[,NAME@H]   the block carries evidence of a duplicate vote
//	                             by validator NAME at height H (NAME@H/lca: a light
//	                             client attack)
//	check-tx [recheck=true]      input: one transaction; runs CheckTx on the check state
//	                             (recheck: as CometBFT's recheck after a block)
//	dry-run                      input: one transaction; the node's dry run (code, fee,
//	                             max fee) on the check state
//	mempool margin=MS            CheckTx judges deadlines MS after the next block's
//	                             earliest time (MempoolConfig.MarginMs)
//	prepare-proposal [time=DURATION] [proposer=NAME] [max-bytes=N] [signal=VERSION]
//	                             input: the mempool's transactions; which
//	                             PrepareProposal takes, and the signal it adds (signal:
//	                             the version the node signals, kept for later proposals)
//	process-proposal [time=DURATION] [proposer=NAME] [hash=NAME]   input: transactions;
//	                             ProcessProposal's verdict (time: genesis when unset)
//	block ... hash=NAME          FinalizeBlock of the block with that hash (any name
//	                             stands for a hash), which also prints whether it used
//	                             a block executed before (hit), executed another (miss)
//	                             or none (unprocessed)
//	storage-fee from=A amount=N  a synthetic perpetual storage fee, A to the storage pool
//	refund owner=I fee=N paid-in=E   a synthetic storage refund to identity I, pending
//	epoch index=E                an epoch's pool, proposers and payout, as the next
//	                             block finds them (after storage-fee and refund)
//	pools                        the current epoch, storage pool, pending refunds, totals
//	state names=A,B identities=I,J   balances and nonces, fees, and the supply check
//	query path=address name=A [height=H]   a proven read, verified against the root
//	query path=identity name=I [height=H]
//	query path=epoch index=E | path=pools | path=pending-refunds | path=total-credits
//	query path=contract name=C   a contract created in a block (as=C), proven
//	changes name=A since=H       the address's balance changes since H, proven complete
//
// Every file runs twice: once with each block executed in FinalizeBlock alone, as a
// replay does, and once with each block (but those a scenario names a hash for)
// executed before its decision by ProcessProposal, as a validator does; both runs must
// print the same and commit the same app hashes.
//
// Regenerate with: go test ./abci -run TestScenarios -rewrite (commit a rewrite only
// when you understand its diff).
func TestScenarios(t *testing.T) {
	t.Parallel()
	datadriven.Walk(t, "testdata", func(t *testing.T, path string) {
		var roots [2][]string
		for i, processed := range []bool{false, true} {
			h := newHarness(t)
			h.processBlocks = processed
			datadriven.RunTest(t, path, func(t *testing.T, d *datadriven.TestData) string {
				h.t = t
				return h.run(d)
			})
			roots[i] = h.roots
			if processed && len(h.roots) > 0 && h.optimisticCounts()[optimisticHit] == 0 {
				t.Fatal("no block processed first was finalized from its execution")
			}
		}
		if !slices.Equal(roots[0], roots[1]) {
			t.Fatalf("app hashes executing in FinalizeBlock alone:\n%v\nprocessed first:\n%v", roots[0], roots[1])
		}
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
				h.identities[f[1]] = genesisIdentityID(f[1])
				st.Identities = append(st.Identities, genesis.Identity{ID: genesisIdentityID(f[1]).String(), Balance: h.u64(map[string]string{"b": f[2]}, "b"), Keys: keys})
			case (len(f) == 3 || len(f) == 4) && f[0] == "validator":
				power := int64(10)
				if len(f) == 4 {
					power = int64(h.u64(map[string]string{"p": f[3]}, "p"))
				}
				h.addValidator(f[1], genesisIdentityID(f[2]), power, &st)
			default:
				h.t.Fatalf("bad genesis line %q", line)
			}
		}
		if m["epoch"] != "" {
			st.EpochTimeLengthS = h.u64(m, "epoch")
		}
		if m["version"] != "" {
			st.ProtocolVersion = protocol.Version(h.u64(m, "version"))
		}
		if up := m["upgrade"]; up != "" { // upgrade=VERSION@HEIGHT
			v, at, _ := strings.Cut(up, "@")
			st.Upgrade = &genesis.Upgrade{Version: protocol.Version(h.u64(map[string]string{"v": v}, "v")), Height: h.u64(map[string]string{"h": at}, "h")}
		}
		h.initChain(st)
		fmt.Fprintf(&out, "genesis: %d addresses, %d identities", len(st.Addresses), len(st.Identities))
		if len(st.Validators) > 0 {
			fmt.Fprintf(&out, ", %d validators", len(st.Validators))
		}
		out.WriteString("\n")
	case "block":
		at := h.timeArg(m)
		txs := h.txs(d.Input)
		h.evidence = h.evidenceArg(m["evidence"])
		defer func() { h.evidence = nil }()
		if name, ok := m["proposer"]; ok {
			h.proposer = consensusAddress(name)
			h.names[string(h.proposer)] = name
		}
		name, ok := m["hash"]
		if !ok {
			if h.processBlocks {
				h.hash = blockHash(strconv.FormatInt(h.height+1, 10))
				h.processBlock(at, txs)
			}
			res := h.block(at, txs)
			h.hash = nil
			return h.blockOutput(res, "")
		}
		h.hash = blockHash(name)
		before := h.optimisticCounts()
		res := h.block(at, txs)
		h.hash = nil
		return h.blockOutput(res, h.optimisticResult(before))
	case "prepare-proposal":
		proposer := h.proposer
		if name, ok := m["proposer"]; ok {
			proposer = consensusAddress(name)
		}
		maxBytes := int64(1 << 20)
		if m["max-bytes"] != "" {
			maxBytes = int64(h.u64(m, "max-bytes"))
		}
		if m["signal"] != "" {
			h.app.SignalVersion(protocol.Version(h.u64(m, "signal")))
		}
		candidates := h.txs(d.Input)
		res, err := h.app.PrepareProposal(context.Background(), &abcitypes.RequestPrepareProposal{
			Txs: candidates, MaxTxBytes: maxBytes, Height: h.height + 1, Time: h.timeArg(m), ProposerAddress: proposer,
		})
		if err != nil {
			h.t.Fatal(err)
		}
		if len(res.Txs) > 0 && protocol.IsVersionSignal(res.Txs[0]) {
			v, err := protocol.DecodeVersionSignal(res.Txs[0], 0, 0)
			if err != nil {
				h.t.Fatal(err)
			}
			fmt.Fprintf(&out, "signal %d\n", v)
			res.Txs = res.Txs[1:]
		}
		taken := 0
		for i, tx := range candidates {
			if taken < len(res.Txs) && bytes.Equal(res.Txs[taken], tx) {
				fmt.Fprintf(&out, "tx %d: taken\n", i)
				taken++
				continue
			}
			fmt.Fprintf(&out, "tx %d: left out\n", i)
		}
		if taken != len(res.Txs) {
			h.t.Fatalf("PrepareProposal returned %d transactions, %d of them candidates in order", len(res.Txs), taken)
		}
	case "halting-block":
		if name, ok := m["proposer"]; ok {
			h.proposer = consensusAddress(name)
			h.names[string(h.proposer)] = name
		}
		out.WriteString(h.haltingBlock(h.timeArg(m), h.txs(d.Input)))
	case "protocol":
		out.WriteString(h.protocolRecords())
	case "validators":
		out.WriteString(h.validatorRecords())
	case "storage-fee":
		// A synthetic perpetual storage fee (no transition pays one yet): credits move
		// from an address to the storage distribution pool, between blocks.
		h.moveCredits(func(kv drive.KV) error {
			a := addr(m["from"])
			amount := h.u64(m, "amount")
			st, _, err := drive.GetAddress(kv, a)
			if err != nil || st.Balance < amount {
				return fmt.Errorf("%s cannot pay %d: %+v %v", m["from"], amount, st, err)
			}
			st.Balance -= amount
			if err := drive.SetAddress(kv, a, st); err != nil {
				return err
			}
			pool, err := drive.GetU64(kv, drive.StoragePoolKey())
			if err != nil {
				return err
			}
			return drive.SetU64(kv, drive.StoragePoolKey(), pool+amount)
		})
		fmt.Fprintf(&out, "storage pool +%s\n", m["amount"])
	case "refund":
		// A synthetic storage refund (no transition removes storage yet): the owner gets
		// feeschedule.StorageRefund of the fee paid in epoch paid-in, now, and the
		// refund waits for the next epoch change to be taken back.
		var refunded uint64
		h.moveCredits(func(kv drive.KV) error {
			epoch, _, err := drive.GetCurrentEpoch(kv)
			if err != nil {
				return err
			}
			fee, paidIn := h.u64(m, "fee"), uint32(h.u64(m, "paid-in"))
			refunded = feeschedule.StorageRefund(fee, paidIn, epoch.Index)
			id := h.identity(m["owner"])
			bal, _, err := drive.GetIdentityBalance(kv, id)
			if err != nil {
				return err
			}
			if err := drive.SetIdentityBalance(kv, id, bal+refunded); err != nil {
				return err
			}
			return drive.AddPendingRefund(kv, drive.PendingRefund{PaidIn: paidIn, From: epoch.Index + 1, StorageFee: fee, Refunded: refunded})
		})
		fmt.Fprintf(&out, "refunded %d to %s\n", refunded, m["owner"])
	case "epoch":
		kv := h.store.Working() // the last block's state and what was injected since
		e := uint32(h.u64(m, "index"))
		fees, _ := drive.GetU64(kv, drive.EpochFeesKey(e))
		share, _ := drive.GetU64(kv, drive.EpochStorageKey(e))
		fmt.Fprintf(&out, "epoch %d: fees=%d storage=%d", e, fees, share)
		if paid, _ := kv.Get(drive.EpochPaidKey(e)); paid != nil {
			fmt.Fprintf(&out, " paid=%d", binary.BigEndian.Uint64(paid))
		}
		out.WriteString("\n")
		proposers, err := drive.EpochProposers(kv, e)
		if err != nil {
			h.t.Fatal(err)
		}
		for _, p := range proposers {
			fmt.Fprintf(&out, "  proposer %s: %d blocks\n", h.names[string(p.Proposer)], p.Blocks)
		}
	case "pools":
		kv := h.store.Working()
		cur, _, _ := drive.GetCurrentEpoch(kv)
		next, _ := drive.GetNextUnpaidEpoch(kv)
		pool, _ := drive.GetU64(kv, drive.StoragePoolKey())
		total, _ := drive.GetU64(kv, drive.TotalCreditsKey())
		supply, _ := drive.GetSupply(kv)
		fmt.Fprintf(&out, "current epoch %d (from height %d), oldest unpaid %d, storage pool %d\n", cur.Index, cur.FirstHeight, next, pool)
		refunds, err := drive.PendingRefunds(kv)
		if err != nil {
			h.t.Fatal(err)
		}
		for _, r := range refunds {
			fmt.Fprintf(&out, "pending refund: paid in %d, from %d: fee %d, refunded %d\n", r.PaidIn, r.From, r.StorageFee, r.Refunded)
		}
		fmt.Fprintf(&out, "total credits %d, supply %d\n", total, supply)
	case "check-tx":
		req := &abcitypes.RequestCheckTx{Tx: h.tx(strings.TrimSpace(d.Input))}
		if m["recheck"] == "true" {
			req.Type = abcitypes.CheckTxType_Recheck
		}
		res, err := h.app.CheckTx(context.Background(), req)
		if err != nil {
			h.t.Fatal(err)
		}
		if res.Codespace != "" {
			fmt.Fprintf(&out, "codespace %s code %d\n", res.Codespace, res.Code)
			break
		}
		fmt.Fprintf(&out, "%s fee=%d\n", codeName(res.Code), res.GasWanted)
	case "dry-run":
		res, err := h.app.Query(context.Background(), &abcitypes.RequestQuery{Path: proofs.PathDryRun, Data: h.tx(strings.TrimSpace(d.Input))})
		if err != nil {
			h.t.Fatal(err)
		}
		var ans proofs.DryRunAnswer
		if err := json.Unmarshal(res.Value, &ans); err != nil {
			h.t.Fatalf("dry run: %v (%s)", err, res.Log)
		}
		fmt.Fprintf(&out, "%s fee=%d max-fee=%d\n", codeName(ans.Code), ans.Fee, ans.MaxFee)
	case "mempool":
		if err := h.app.SetMempool(MempoolConfig{MarginMs: h.u64(m, "margin")}); err != nil {
			h.t.Fatal(err)
		}
	case "process-proposal":
		req := &abcitypes.RequestProcessProposal{Txs: h.txs(d.Input), Height: h.height + 1, Time: h.timeArg(m), ProposerAddress: h.proposer}
		if name, ok := m["proposer"]; ok {
			req.ProposerAddress = consensusAddress(name)
		}
		if name, ok := m["hash"]; ok {
			req.Hash = blockHash(name)
		}
		res, err := h.app.ProcessProposal(context.Background(), req)
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
		epoch, _, _ := drive.GetCurrentEpoch(kv)
		fees, _ := drive.GetU64(kv, drive.EpochFeesKey(epoch.Index))
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
		case "epoch":
			path, data = proofs.PathEpoch, proofs.EpochData(uint32(h.u64(m, "index")))
		case "pools":
			path = proofs.PathPools
		case "pending-refunds":
			path = proofs.PathPendingRefunds
		case "total-credits":
			path = proofs.PathTotalCredits
		case "contract":
			id := h.contracts[m["name"]]
			path, data = proofs.PathContract, id[:]
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
		switch path {
		case proofs.PathEpoch, proofs.PathPools, proofs.PathPendingRefunds, proofs.PathTotalCredits:
			out.WriteString(h.verifiedPools(path, data, res))
		default:
			out.WriteString(h.verified(path, data, res))
		}
	case "documents":
		h.showDocuments(&out, m)
	case "removals":
		h.showRemovals(&out, m)
	case "expirations":
		h.showExpirations(&out)
	case "lifetime-pools":
		h.showLifetimePools(&out)
	case "doc-query":
		out.WriteString(h.docQuery(m, d.Input))
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

// processBlock runs ProcessProposal of the next block with the harness's proposer and
// hash: a validator's execution of it before its decision. A block holding an unpaid
// refusal is rejected, and FinalizeBlock then executes it.
func (h *harness) processBlock(at time.Time, txs [][]byte) {
	_, err := h.app.ProcessProposal(context.Background(), &abcitypes.RequestProcessProposal{
		Txs: txs, Height: h.height + 1, Time: at, ProposerAddress: h.proposer, Hash: h.hash, Misbehavior: h.evidence,
	})
	if err != nil {
		h.t.Fatal(err)
	}
}

// timeArg is the block time a command names (time=DURATION since genesis), or the
// genesis time.
func (h *harness) timeArg(m map[string]string) time.Time {
	if m["time"] == "" {
		return genesisTime
	}
	dur, err := time.ParseDuration(m["time"])
	if err != nil {
		h.t.Fatal(err)
	}
	return genesisTime.Add(dur)
}

// txs builds a command's transactions, one a line.
func (h *harness) txs(input string) [][]byte {
	var txs [][]byte
	for _, line := range strings.Split(strings.TrimSpace(input), "\n") {
		if strings.TrimSpace(line) != "" {
			txs = append(txs, h.tx(line))
		}
	}
	return txs
}

// blockHash is the hash a scenario's block name stands for.
func blockHash(name string) []byte {
	sum := sha256.Sum256([]byte("block/" + name))
	return sum[:]
}

// blockOutput renders a block's results and events, after how FinalizeBlock came to
// them when the scenario asks (optimistic: hit, miss or unprocessed).
func (h *harness) blockOutput(res *abcitypes.ResponseFinalizeBlock, optimistic string) string {
	var out strings.Builder
	fmt.Fprintf(&out, "height %d\n", h.height)
	if optimistic != "" {
		fmt.Fprintf(&out, "finalize: %s\n", optimistic)
	}
	for i, tr := range res.TxResults {
		fmt.Fprintf(&out, "tx %d: %s fee=%d\n", i, codeName(tr.Code), tr.GasUsed)
		for _, e := range tr.Events {
			if e.Type == protocol.EventValidatorApproval {
				writeEvent(&out, "  ", e)
			}
		}
	}
	if u := res.ConsensusParamUpdates; u != nil {
		fmt.Fprintf(&out, "consensus params: app version %d from the next height\n", u.Version.App)
	}
	for _, u := range res.ValidatorUpdates {
		fmt.Fprintf(&out, "validator update: %s power=%d\n", h.validatorName(consensusOf(u.PubKey.GetEd25519())), u.Power)
	}
	for _, e := range res.Events {
		// The node's count of the block's transactions, for its block index, says
		// what the tx lines say (TestBlockTransactionsEvent).
		if e.Type != protocol.EventBlockTransactions {
			writeEvent(&out, "", e)
		}
	}
	return out.String()
}

// writeEvent prints an event on a line of its own.
func writeEvent(out *strings.Builder, indent string, e abcitypes.Event) {
	fmt.Fprintf(out, "%sevent %s", indent, e.Type)
	for _, a := range e.Attributes {
		fmt.Fprintf(out, " %s=%s", a.Key, a.Value)
	}
	out.WriteString("\n")
}

// haltingBlock runs the next block where this binary must halt: ProcessProposal (when
// blocks are processed first) must reject it and PrepareProposal propose an empty one,
// FinalizeBlock must fail (as it does in the handshake: held in a running node), the
// node must be halted, and nothing of the block staged or saved.
func (h *harness) haltingBlock(at time.Time, txs [][]byte) string {
	base, root := h.store.LastCommit()
	req := &abcitypes.RequestFinalizeBlock{Height: h.height + 1, Time: at, Txs: txs, ProposerAddress: h.proposer}
	if h.processBlocks {
		// NB: rejected, not failed: CometBFT panics on an error, outside any recovery
		// when it replays its log at start.
		res, err := h.app.ProcessProposal(context.Background(), &abcitypes.RequestProcessProposal{
			Txs: txs, Height: req.Height, Time: at, ProposerAddress: h.proposer,
		})
		if err != nil || res.Status != abcitypes.ResponseProcessProposal_REJECT {
			h.t.Fatalf("ProcessProposal of a block this binary must halt at: %v %v", res, err)
		}
		prep, err := h.app.PrepareProposal(context.Background(), &abcitypes.RequestPrepareProposal{
			Txs: txs, MaxTxBytes: 1 << 20, Height: req.Height, Time: at, ProposerAddress: h.proposer,
		})
		if err != nil || len(prep.Txs) != 0 {
			h.t.Fatalf("PrepareProposal of a block this binary must halt at: %v %v", prep, err)
		}
	}
	if _, err := h.app.FinalizeBlock(context.Background(), req); err == nil {
		h.t.Fatal("FinalizeBlock executed a block this binary must halt at")
	}
	select {
	case <-h.app.Halted():
	default:
		h.t.Fatal("the application did not halt the node")
	}
	if v, r := h.store.LastCommit(); v != base || !bytes.Equal(r, root) || !h.store.Unchanged() {
		h.t.Fatalf("a halted block changed the stores: saved %d %x (was %d %x), working tree unchanged: %v", v, r, base, root, h.store.Unchanged())
	}
	var need app.ErrUpgradeNeeded
	if !errors.As(h.app.HaltErr(), &need) {
		h.t.Fatalf("halted for %v", h.app.HaltErr())
	}
	return fmt.Sprintf("halted before height %d: needs protocol version %d, this binary implements up to %d\n", need.Height, need.Version, need.Newest)
}

// evidenceArg reads a block's evidence=NAME@H[/lca],... argument.
func (h *harness) evidenceArg(arg string) []abcitypes.Misbehavior {
	if arg == "" {
		return nil
	}
	var out []abcitypes.Misbehavior
	for _, e := range strings.Split(arg, ",") {
		e, lca := strings.CutSuffix(e, "/lca")
		name, at, ok := strings.Cut(e, "@")
		if !ok {
			h.t.Fatalf("bad evidence %q", e)
		}
		kind := abcitypes.MisbehaviorType_DUPLICATE_VOTE
		if lca {
			kind = abcitypes.MisbehaviorType_LIGHT_CLIENT_ATTACK
		}
		out = append(out, abcitypes.Misbehavior{Type: kind, Validator: abcitypes.Validator{Address: consensusAddress(name), Power: 10},
			Height: int64(h.u64(map[string]string{"h": at}, "h")), Time: genesisTime})
	}
	return out
}

// validatorName is a validator's scenario name, or its address in hex.
func (h *harness) validatorName(a []byte) string {
	if n, ok := h.names[string(a)]; ok {
		return n
	}
	return hex.EncodeToString(a)
}

// validatorRecords prints the validator set, the pending proposals with their
// approvals, and the misbehaviour recorded, of the last saved version, read through
// the proven paths and checked complete against its root.
func (h *harness) validatorRecords() string {
	var out strings.Builder
	read := func(path string) []proofs.KV {
		res := h.query(path, nil, 0)
		entries, err := h.verifyRange(path, nil, res)
		if err != nil {
			h.t.Fatal(err)
		}
		return entries
	}
	var total uint64
	for _, e := range read(proofs.PathValidators) {
		a, _ := drive.ParseValidatorKey(e.Key)
		v, err := drive.DecodeValidator(a, e.Value)
		if err != nil {
			h.t.Fatal(err)
		}
		total += v.Power
		fmt.Fprintf(&out, "validator %s power=%d operator=%s\n", h.validatorName(a[:]), v.Power, h.identityName(v.Operator))
	}
	fmt.Fprintf(&out, "total power %d\n", total)
	for _, e := range read(proofs.PathValidatorProposals) {
		id, a, approval, _ := drive.ParseValidatorProposalKey(e.Key)
		if approval {
			fmt.Fprintf(&out, "  approved by %s\n", h.validatorName(a[:]))
			continue
		}
		p, err := drive.DecodeValidatorProposal(id, e.Value)
		if err != nil {
			h.t.Fatal(err)
		}
		target := p.Change.Target()
		fmt.Fprintf(&out, "proposal %d: %s %s", id, p.Change.Kind, h.validatorName(target[:]))
		switch p.Change.Kind {
		case protocol.ValidatorAdd:
			fmt.Fprintf(&out, " power=%d operator=%s", p.Change.Power, h.identityName(p.Change.Operator))
		case protocol.ValidatorPower:
			fmt.Fprintf(&out, " to=%d", p.Change.Power)
		case protocol.ValidatorRotate:
			fmt.Fprintf(&out, " key=%s", h.validatorName(consensusOf(p.Change.PubKey)))
		}
		fmt.Fprintf(&out, " by %s expires=%s", h.validatorName(p.Proposer[:]), time.Duration(p.ExpiresMs-uint64(genesisTime.UnixMilli()))*time.Millisecond)
		if p.PassedMs != 0 {
			out.WriteString(" passed")
		}
		out.WriteString("\n")
	}
	for _, e := range read(proofs.PathMisbehavior) {
		a, height, _ := drive.ParseMisbehaviorKey(e.Key)
		m, err := drive.DecodeMisbehavior(a, height, e.Value)
		if err != nil {
			h.t.Fatal(err)
		}
		fmt.Fprintf(&out, "misbehavior %s %s at %d, recorded at %d, power=%d removed=%v\n", h.validatorName(a[:]), m.Kind, m.Height, m.RecordedAt, m.Power, m.Removed)
	}
	return out.String()
}

// protocolRecords prints the protocol version and the upgrade records of the last
// saved version, read through the proven paths and checked against its root.
func (h *harness) protocolRecords() string {
	var out strings.Builder
	res := h.query(proofs.PathKey, drive.ProtocolVersionKey(), 0)
	if err := proofs.VerifyPresence(h.rootAt(res.Height), drive.ProtocolVersionKey(), res.Value, res.ProofOps); err != nil {
		h.t.Fatal(err)
	}
	v, err := drive.DecodeProtocolVersion(res.Value)
	if err != nil {
		h.t.Fatal(err)
	}
	fmt.Fprintf(&out, "version %d\n", v)
	res = h.query(proofs.PathUpgrades, nil, 0)
	entries, err := h.verifyRange(proofs.PathUpgrades, nil, res)
	if err != nil {
		h.t.Fatal(err)
	}
	for _, e := range entries {
		if epoch, ok := drive.ParseEpochSignalsKey(e.Key); ok {
			s, err := drive.DecodeEpochSignals(e.Value)
			if err != nil {
				h.t.Fatal(err)
			}
			fmt.Fprintf(&out, "epoch %d signals:", epoch)
			for _, c := range s.Counts {
				fmt.Fprintf(&out, " %d=%d", c.Version, c.Blocks)
			}
			if s.Blocks > 0 {
				fmt.Fprintf(&out, " of %d blocks", s.Blocks)
			}
			out.WriteString("\n")
			continue
		}
		next, err := drive.DecodeProtocolVersion(e.Value)
		if err != nil || !bytes.Equal(e.Key, drive.NextVersionKey()) {
			h.t.Fatalf("unexpected upgrade record %x=%x", e.Key, e.Value)
		}
		fmt.Fprintf(&out, "next version %d\n", next)
	}
	fmt.Fprintf(&out, "verified complete at height %d\n", res.Height)
	return out.String()
}

// optimisticCounts reads the FinalizeBlock calls counted by result.
func (h *harness) optimisticCounts() map[string]float64 {
	counts := map[string]float64{}
	for _, r := range []string{optimisticHit, optimisticMiss, optimisticUnprocessed} {
		counts[r] = testutil.ToFloat64(h.app.metrics.Optimistic.WithLabelValues(r))
	}
	return counts
}

// optimisticResult is the one result FinalizeBlock counted since before.
func (h *harness) optimisticResult(before map[string]float64) string {
	var got []string
	for r, n := range h.optimisticCounts() {
		if n != before[r] {
			got = append(got, r)
		}
	}
	if len(got) != 1 {
		h.t.Fatalf("FinalizeBlock counted %v", got)
	}
	return got[0]
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
	if path == proofs.PathContract {
		kv, err := h.store.Saved(res.Height)
		if err != nil {
			h.t.Fatal(err)
		}
		v, err := drive.GetProtocolVersion(kv)
		if err != nil {
			h.t.Fatal(err)
		}
		c, err := protocol.DecodeContract(res.Value, v)
		if err != nil {
			h.t.Fatal(err)
		}
		types := make([]string, len(c.DocumentTypes))
		for i, dt := range c.DocumentTypes {
			types[i] = fmt.Sprintf("%s(%d properties)", dt.Name, len(dt.Properties))
		}
		return fmt.Sprintf("contract owner=%s version=%d bytes=%d types=%s\nverified presence at height %d\n",
			h.identityName(c.Owner), c.Version, len(target.Key)+len(res.Value), strings.Join(types, ","), res.Height)
	}
	st, err := drive.DecodeAddressState(res.Value)
	if err != nil {
		h.t.Fatal(err)
	}
	return fmt.Sprintf("balance=%d nonce=%d\nverified presence at height %d\n", st.Balance, st.Nonce.Last, res.Height)
}

// verifiedPools checks an answer of a pools path against the root of its version and
// renders each entry by what its key names.
func (h *harness) verifiedPools(path string, data []byte, res *abcitypes.ResponseQuery) string {
	var out strings.Builder
	if path == proofs.PathTotalCredits {
		target, err := proofs.TargetOf(path, data)
		if err != nil {
			h.t.Fatal(err)
		}
		if err := proofs.VerifyPresence(h.rootAt(res.Height), target.Key, res.Value, res.ProofOps); err != nil {
			h.t.Fatal(err)
		}
		fmt.Fprintf(&out, "total credits %d\nverified presence at height %d\n", binary.BigEndian.Uint64(res.Value), res.Height)
		return out.String()
	}
	entries, err := h.verifyRange(path, data, res)
	if err != nil {
		h.t.Fatalf("%s: %v", path, err)
	}
	for _, e := range entries {
		epoch, entry, proposer, isEpoch := drive.ParseEpochKey(e.Key)
		paidIn, from, isRefund := drive.ParsePendingRefundKey(e.Key)
		switch {
		case isEpoch && entry == drive.EpochEntryProposer:
			fmt.Fprintf(&out, "epoch %d proposer %s: %d blocks\n", epoch, h.names[string(proposer)], binary.BigEndian.Uint64(e.Value))
		case isEpoch:
			name := map[drive.EpochEntry]string{drive.EpochEntryFees: "fees", drive.EpochEntryStorage: "storage", drive.EpochEntryPaid: "paid"}[entry]
			fmt.Fprintf(&out, "epoch %d %s: %d\n", epoch, name, binary.BigEndian.Uint64(e.Value))
		case isRefund:
			fmt.Fprintf(&out, "pending refund paid in %d from %d: fee %d refunded %d\n", paidIn, from, binary.BigEndian.Uint64(e.Value), binary.BigEndian.Uint64(e.Value[8:]))
		case string(e.Key) == string(drive.CurrentEpochKey()):
			fmt.Fprintf(&out, "current epoch %d from height %d\n", binary.BigEndian.Uint32(e.Value), binary.BigEndian.Uint64(e.Value[4:]))
		case string(e.Key) == string(drive.StoragePoolKey()):
			fmt.Fprintf(&out, "storage pool %d\n", binary.BigEndian.Uint64(e.Value))
		default:
			h.t.Fatalf("%s: unexpected key %x", path, e.Key)
		}
	}
	fmt.Fprintf(&out, "verified complete (%d entries) at height %d\n", len(entries), res.Height)
	return out.String()
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
