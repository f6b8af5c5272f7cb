package sim

import (
	"bytes"
	"flag"
	"fmt"
	"testing"

	dbm "github.com/cosmos/cosmos-db"

	"github.com/ttld-dev/ttld/protocol"
)

var (
	seedFlag = flag.Int64("sim.seed", 1, "seed of the determinism simulation")
	// The default is make test's short run: seed 1 reaches every code and event
	// TestDeterminism asks for by block 800 (not by 600); make sim runs 20,000.
	blocksFlag = flag.Int("sim.blocks", 800, "blocks of the determinism simulation")
)

// TestDeterminism runs the same seeded block sequence twice on fresh stores: the app
// hash must be equal at every height, credits conserved after every block (Run checks
// the invariants), and the run must exercise successes and refusals alike.
func TestDeterminism(t *testing.T) {
	t.Parallel()
	blocks := *blocksFlag
	if testing.Short() {
		blocks = 200
	}
	cfg := Config{Seed: *seedFlag, Blocks: blocks}
	// The two runs share nothing: each on a core of its own.
	var b Result
	var errB error
	done := make(chan struct{})
	go func() {
		defer close(done)
		b, errB = Run(cfg)
	}()
	a, err := Run(cfg)
	<-done
	if err != nil {
		t.Fatal(err)
	}
	if errB != nil {
		t.Fatal(errB)
	}
	if len(a.AppHashes) != blocks+1 || len(b.AppHashes) != blocks+1 {
		t.Fatalf("ran %d and %d heights, want %d", len(a.AppHashes), len(b.AppHashes), blocks+1)
	}
	for h := range a.AppHashes {
		if !bytes.Equal(a.AppHashes[h], b.AppHashes[h]) {
			t.Fatalf("seed %d: app hash differs at height %d: %X vs %X", cfg.Seed, h, a.AppHashes[h], b.AppHashes[h])
		}
	}
	for _, c := range []protocol.Code{protocol.CodeOK, protocol.CodeInvalidSignature, protocol.CodeTxDecode, protocol.CodeAddressInsufficientBalance} {
		if a.Codes[uint32(c)] == 0 {
			t.Errorf("the simulation never produced code %d: %v", c, a.Codes)
		}
	}
	// Documents batches reach their refusals: a document another identity owns, a
	// duplicate unique value, data its type refuses, an id already stored (the full
	// run only: 200 blocks are too few to be sure of them).
	if !testing.Short() {
		for _, c := range []protocol.Code{protocol.CodeDocumentOwnerIDMismatch, protocol.CodeDuplicateUniqueIndex, protocol.CodeInvalidDocument, protocol.CodeDocumentAlreadyPresent, protocol.CodeDocumentActionNotAllowed} {
			if a.Codes[uint32(c)] == 0 {
				t.Errorf("the simulation never produced code %d: %v", c, a.Codes)
			}
		}
	}
	// Block times jump hours and days: epochs change, some several at once, and the
	// finished ones are paid to the proposers (or rolled on, for a proposer without a
	// payout identity and the epochs a jump skipped).
	for _, ev := range []string{protocol.EventEpochChange, protocol.EventEpochPaid, protocol.EventEpochPayout, protocol.EventAddressBalancesCleanup} {
		if a.Events[ev] == 0 {
			t.Errorf("the simulation never produced a %s event: %v", ev, a.Events)
		}
	}
	// Seed 1 starts on protocol version 13 and upgrades to 14 (Generator.Version); ttl
	// documents expire and are deleted after the upgrade, and batches that change
	// documents expired but not yet deleted are refused with 40140 (Run fails on any
	// that succeeds): "From its expiry on, a document can no longer be replaced,
	// transferred, bought or repriced ... each is refused, paid, with
	// DocumentExpiredError (40140), whether or not the cleanup has reached the
	// document" (Document Time To Live).
	for _, ev := range []string{protocol.EventProtocolUpgrade, protocol.EventDocumentExpired, protocol.EventDocumentsCleanup} {
		if a.Events[ev] == 0 {
			t.Errorf("the simulation never produced a %s event: %v", ev, a.Events)
		}
	}
	// "Until the cleanup deletes it, it ... keeps its values in the type's unique
	// indexes: a create of the same unique value is refused as a duplicate until the
	// cleanup has run" (Document Time To Live): Run fails on any such create that succeeds.
	if !testing.Short() && (a.ExpiredChanges == 0 || a.Codes[uint32(protocol.CodeDocumentExpired)] == 0 || a.ExpiredUniques == 0) {
		t.Errorf("no change of an expired document (%d made, %d refused with 40140) or no create of the unique values one holds (%d)",
			a.ExpiredChanges, a.Codes[uint32(protocol.CodeDocumentExpired)], a.ExpiredUniques)
	}
	// Moderators delete and restore, keeping records whose hash Run compares with the
	// document removed (CheckRemovals); references are checked at write time, and a
	// reference to a document that is not stored is refused.
	if !testing.Short() {
		for _, ev := range []string{protocol.EventDocumentAction(protocol.ActionModerateDelete), protocol.EventDocumentAction(protocol.ActionRestore)} {
			if a.TxEvents[ev] == 0 {
				t.Errorf("the simulation never accepted a %s: %v", ev, a.TxEvents)
			}
		}
		for _, c := range []protocol.Code{protocol.CodeReferencedDocumentNotFound, protocol.CodeNotAModerator, protocol.CodeRestoredDocumentMismatch} {
			if a.Codes[uint32(c)] == 0 {
				t.Errorf("the simulation never produced code %d: %v", c, a.Codes)
			}
		}
		if a.RemovalsPinned == 0 {
			t.Error("no removal record's hash was compared with the document it removed")
		}
	}
	// Seed 1 reaches version 16 at its upgrade: the operators propose and approve
	// changes of the set, blocks apply them and carry evidence, and CometBFT's set
	// follows the state's after every block (Chain.Commit).
	if !testing.Short() {
		for _, ev := range []string{protocol.EventValidatorUpdate, protocol.EventValidatorMisbehavior, protocol.EventValidatorProposalDropped} {
			if a.Events[ev] == 0 {
				t.Errorf("the simulation never produced a %s event: %v", ev, a.Events)
			}
		}
	}
	t.Logf("seed %d: %d blocks, results by code %v, events %v, %d changes of expired documents, %d creates of their unique values, %d moderators' deletions and %d restores accepted, %d removal records pinned",
		cfg.Seed, blocks, a.Codes, a.Events, a.ExpiredChanges, a.ExpiredUniques, a.TxEvents[protocol.EventDocumentAction(protocol.ActionModerateDelete)], a.TxEvents[protocol.EventDocumentAction(protocol.ActionRestore)], a.RemovalsPinned)

	other, err := Run(Config{Seed: cfg.Seed + 1, Blocks: 5})
	if err != nil {
		t.Fatal(err)
	}
	if bytes.Equal(other.AppHashes[5], a.AppHashes[5]) {
		t.Fatal("another seed reached the same state: the generator ignores its seed")
	}
}

// TestRestart stops the application after a commit, and once between FinalizeBlock and
// Commit, reopens the store as a restarted node does, lets the handshake's rule run
// (Info reports the last saved height; the missing block is executed again), and
// reaches the same app hash at every height as an uninterrupted run. Seed 42 starts
// on protocol version 14; seed 43 starts on 13 and crashes in the block of its
// upgrade to 14, which the restarted node executes again.
func TestRestart(t *testing.T) {
	t.Parallel()
	for _, seed := range []int64{42, 43} {
		t.Run(fmt.Sprint(seed), func(t *testing.T) { restart(t, seed) })
	}
}

func restart(t *testing.T, seed int64) {
	const blocks = 60
	want, err := Run(Config{Seed: seed, Blocks: blocks})
	if err != nil {
		t.Fatal(err)
	}
	db := dbm.NewMemDB()
	c, err := Open(db)
	if err != nil {
		t.Fatal(err)
	}
	g := NewGenerator(seed, 20)
	if _, err := c.InitChain(g.Genesis(), g.Validators()...); err != nil {
		t.Fatal(err)
	}
	crash := int64(20)
	if g.Upgrade > 0 {
		crash = int64(g.Upgrade)
	}
	for h := int64(1); h <= blocks; h++ {
		at, txs, err := c.NextBlock(g, 40)
		if err != nil {
			t.Fatal(err)
		}
		switch h {
		case crash: // crash between FinalizeBlock and Commit
			if _, err := c.Finalize(at, txs); err != nil {
				t.Fatal(err)
			}
			_ = c.Close()
			if c, err = Open(db, g.Validators()...); err != nil {
				t.Fatal(err)
			}
			if c.Height != h-1 {
				t.Fatalf("after a crash before Commit %d, Info reports %d", h, c.Height)
			}
		case 40: // stop after a commit
			_ = c.Close()
			if c, err = Open(db, g.Validators()...); err != nil {
				t.Fatal(err)
			}
			if c.Height != h-1 {
				t.Fatalf("after a stop at %d, Info reports %d", h-1, c.Height)
			}
		}
		fb, err := c.Block(at, txs)
		if err != nil {
			t.Fatal(err)
		}
		if !bytes.Equal(fb.AppHash, want.AppHashes[h]) {
			t.Fatalf("height %d: app hash %X after restart, %X uninterrupted", h, fb.AppHash, want.AppHashes[h])
		}
	}
}

// TestFlood: a run of mostly creates of hour-long documents, blocks seconds apart with
// jumps of tens of minutes, on a chain that starts on protocol version 14 (seed 2):
// "a sustained flood of creations with a short time to live builds a backlog it drains
// at that rate, and that lag grows with it" (Document Time To Live, Semantics). After every block
// the cleanup either left nothing due or used its whole budget (CheckCleanup), and the
// run must have built a backlog past one block's budget and drained it at the count
// budget (ping documents, weight 2) and at the weight budget (heavy ones, weight 10).
func TestFlood(t *testing.T) {
	t.Parallel()
	blocks := 200
	if testing.Short() {
		blocks = 120
	}
	res, err := Run(Config{Seed: 2, Blocks: blocks, Flood: true})
	if err != nil {
		t.Fatal(err)
	}
	t.Logf("%d blocks: backlog up to %d, %d blocks drained at the count budget, %d at the weight budget; codes %v, events %v",
		blocks, res.MaxBacklog, res.FullCleanups, res.WeightCleanups, res.Codes, res.Events)
	if res.MaxBacklog <= 128 || res.FullCleanups < 2 || res.WeightCleanups == 0 {
		t.Fatalf("the flood built no backlog drained at both budgets: backlog up to %d, %d count-budget and %d weight-budget blocks", res.MaxBacklog, res.FullCleanups, res.WeightCleanups)
	}
}

// TestRenewals: a chain that starts on the latest version (an even seed) draws
// renewals among its documents batches (protocol version 15, docs/STATE.md "Renewal"):
// some are accepted, and Run, which checks the invariants after every block (an
// expirations entry for each ttl document, at its $renewedAt plus the ttl; credits
// conserved), fails on any renewal of an expired document that succeeds.
func TestRenewals(t *testing.T) {
	t.Parallel()
	blocks := 600
	if testing.Short() {
		blocks = 200
	}
	res, err := Run(Config{Seed: 2, Blocks: blocks})
	if err != nil {
		t.Fatal(err)
	}
	renewed := res.TxEvents[protocol.EventDocumentAction(protocol.ActionRenew)]
	t.Logf("%d blocks: %d renewals accepted, %d changes of expired documents; codes %v", blocks, renewed, res.ExpiredChanges, res.Codes)
	if renewed == 0 {
		t.Fatalf("no renewal accepted in %d blocks: %v", blocks, res.TxEvents)
	}
}
