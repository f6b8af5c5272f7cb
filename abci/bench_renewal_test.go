package abci

import (
	"encoding/binary"
	"fmt"
	"strconv"
	"testing"
	"time"

	"github.com/ttld-dev/ttld/protocol"
)

// Figures of BenchmarkRenewalFlood: blocks two minutes apart (floodStep), a session
// renewed every 20 minutes, so with 40 of its hour left.
const (
	renewalCohort = 64  // sessions created a block
	renewalEvery  = 10  // blocks between a session's renewals: 20 minutes
	renewalHour   = 30  // blocks in the one-hour ttl
	renewalBlocks = 150 // five hours
	renewalSample = 10  // blocks between log lines
)

// BenchmarkRenewalFlood runs a steady flood of one-hour sessions, each renewed N times
// before it expires (protocol version 15; docs/STATE.md, "Renewal"): seed 003's
// sessions that stay alive while used. On a fresh chain per N (0, 3 and 6), every
// block (two minutes of block time) creates 64 documents of benchTTLContract's type
// "one" (one-hour ttl, one index) and renews, with the action renew, each session
// created 20, 40, ... 20×N minutes before, each transaction signed before its block
// and every one accepted; then the session is left to expire, an hour after its last
// renewal. For five hours of block time (150 blocks) it checks after every block
// that the expirations tree holds exactly one entry per live session (a renewal moves
// the entry, leaving nothing at the old time) and that the cleanup keeps up: nothing
// due is left for a later block. Live sessions plateau at 64 × (30 + 10N), an hour
// plus the renewals' 20 N minutes of creates, from block 30 + 10N on, when the cleanup
// removes 64 a block, under its budget of 128. It reports the plateau, the mean block
// time (FinalizeBlock + Commit) over the plateau, and the mean fee of a create and of
// a renewal: a renewal within the first tier of seed 001's table (an hour) pays
// processing only. make bench-renewal runs it with -benchtime 1x.
func BenchmarkRenewalFlood(b *testing.B) {
	table := benchCSV(b, "renewal.csv", "renewals", "block", "live", "removed", "backlog", "ms")
	for _, n := range []int{0, 3, 6} {
		b.Run(fmt.Sprintf("renewals=%d", n), func(b *testing.B) {
			for range b.N {
				benchRenewals(b, n, table)
			}
		})
	}
}

// renewalSession is one session of the flood: its id, its owner, and its revision.
type renewalSession struct {
	id       protocol.DocumentID
	owner    *benchIdentity
	revision uint64
}

func benchRenewals(b *testing.B, renewals int, table benchTable) {
	b.StopTimer()
	h, ids, types := benchTTLChainAt(b, protocol.V15)
	t := types[0]
	start := genesisTime.Add(10 * time.Minute)
	lifetime := renewalHour + renewalEvery*renewals // blocks from a session's creation to its expiry
	cohorts := map[int][]renewalSession{}
	var plateauBusy time.Duration
	var plateauBlocks, live int
	var createFees, renewalFees, creates, renewed uint64
	for blk := 1; blk <= renewalBlocks; blk++ {
		var txs [][]byte
		var isRenewal []bool
		for k := 1; k <= renewals; k++ {
			for i := range cohorts[blk-k*renewalEvery] {
				s := &cohorts[blk-k*renewalEvery][i]
				s.owner.nonce++
				s.revision++
				txs = append(txs, protocol.Sign(testChainID, &protocol.DocumentsBatch{Identity: s.owner.id, Nonce: s.owner.nonce, Contract: t.Contract, Actions: []protocol.DocumentAction{
					{Kind: protocol.ActionRenew, Type: t.Name, ID: s.id, Revision: s.revision},
				}}, s.owner.key))
				isRenewal = append(isRenewal, true)
			}
		}
		delete(cohorts, blk-renewals*renewalEvery)
		for i := range renewalCohort {
			w := &ids[(blk*renewalCohort+i)%len(ids)]
			w.nonce++
			benchSeq++
			var entropy [32]byte
			binary.BigEndian.PutUint64(entropy[:], benchSeq+3<<40)
			a := protocol.DocumentAction{Kind: protocol.ActionCreate, Type: t.Name, Entropy: entropy,
				Data: []byte(fmt.Sprintf(`{"author":[%s],"title":"session %d","n":%d}`, byteList(w.id[:]), benchSeq, blk))}
			batch := &protocol.DocumentsBatch{Identity: w.id, Nonce: w.nonce, Contract: t.Contract, Actions: []protocol.DocumentAction{a}}
			batch.Actions[0].ID = batch.CreateID(a)
			cohorts[blk] = append(cohorts[blk], renewalSession{id: batch.Actions[0].ID, owner: w, revision: 1})
			txs = append(txs, protocol.Sign(testChainID, batch, w.key))
			isRenewal = append(isRenewal, false)
		}
		b.StartTimer()
		res, took, finalized := timedBlock(h, start.Add(time.Duration(blk)*floodStep), txs)
		b.StopTimer()
		for j, r := range res.TxResults {
			if r.Code != 0 {
				b.Fatalf("block %d, transaction %d (renewal %v) refused: %d %s", blk, j, isRenewal[j], r.Code, r.Log)
			}
			if isRenewal[j] {
				renewalFees += uint64(r.GasUsed)
				renewed++
			} else {
				createFees += uint64(r.GasUsed)
				creates++
			}
		}
		removed, _ := expiredIn(res, t.Name)
		backlog, overdue := cleanupLag(res)
		live = liveDocuments(b, h)
		if want := renewalCohort * min(blk, lifetime); live != want {
			b.Fatalf("block %d: %d entries in the expirations tree, want %d live sessions", blk, live, want)
		}
		wantRemoved := 0
		if blk > lifetime {
			wantRemoved = renewalCohort
		}
		if removed != wantRemoved || backlog != 0 || overdue != 0 {
			b.Fatalf("block %d: %d removed (want %d), backlog %d, oldest overdue %s", blk, removed, wantRemoved, backlog, overdue)
		}
		if blk > lifetime {
			plateauBusy += took
			plateauBlocks++
		}
		table.row(strconv.Itoa(renewals), strconv.Itoa(blk), strconv.Itoa(live), strconv.Itoa(removed), strconv.Itoa(backlog), strconv.FormatFloat(float64(took.Microseconds())/1e3, 'f', 3, 64))
		if blk%renewalSample == 0 {
			b.Logf("%d renewals, block %3d (%4.1f h): %5d live, %2d removed, %3d transactions, %.1f ms (FinalizeBlock %.1f)", renewals, blk, float64(blk)*floodStep.Hours(), live, removed, len(txs), float64(took.Microseconds())/1e3, float64(finalized.Microseconds())/1e3)
		}
	}
	b.ReportMetric(float64(live), "live-sessions")
	b.ReportMetric(float64(lifetime), "blocks-to-plateau")
	b.ReportMetric(float64(plateauBusy.Microseconds())/1e3/float64(plateauBlocks), "ms/block")
	b.ReportMetric(float64(createFees)/float64(creates), "fee/create")
	if renewed > 0 {
		b.ReportMetric(float64(renewalFees)/float64(renewed), "fee/renewal")
	}
}
