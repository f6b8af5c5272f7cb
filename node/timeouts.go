package node

import (
	"fmt"
	"time"

	"github.com/cometbft/cometbft/config"
)

// DefaultTimeoutCommit is the wait after a commit before the next height that Init and
// Testnet write unless told otherwise: a block a second.
const DefaultTimeoutCommit = time.Second

// Timeouts are the consensus timeouts of config.toml's [consensus] that set the pace
// of a chain's blocks. A zero field keeps the default: CometBFT's 3 s for a proposal,
// DefaultTimeoutCommit after a commit.
type Timeouts struct {
	// Propose is timeout_propose: how long a validator waits for the round's proposal
	// before it prevotes nil.
	Propose time.Duration
	// Commit is timeout_commit: how long a validator waits after a commit, gathering
	// late precommits, before it starts the next height. With one validator, or one
	// machine's network, it is the time between blocks less their execution.
	Commit time.Duration
}

// TestTimeouts make blocks at the pace of tests: a block about every 25 ms on one
// machine, as CometBFT's own tests commit in tens of milliseconds
// (config.TestConsensusConfig), with a proposal given half a second, which a
// validator sharing two cores with its peers and a load meets. Not for a network
// whose validators are apart: every block is a version of the state on disk, and a
// second's pace keeps a year's chain at 31.5 million of them.
var TestTimeouts = Timeouts{Propose: 500 * time.Millisecond, Commit: 20 * time.Millisecond}

// Validate refuses negative timeouts and one below a millisecond, the block time's unit
// (docs/STATE.md, "Block time").
func (t Timeouts) Validate() error {
	for _, d := range []struct {
		name string
		v    time.Duration
	}{{"timeout_propose", t.Propose}, {"timeout_commit", t.Commit}} {
		if d.v < 0 || (d.v > 0 && d.v < time.Millisecond) {
			return fmt.Errorf("%s %v: 0 (the default) or at least 1ms", d.name, d.v)
		}
	}
	return nil
}

// Apply writes the timeouts into cfg, leaving a zero one's setting as it is. A commit
// faster than the default also gossips faster: a peer's routines sleep between rounds
// of gossip (peer_gossip_sleep_duration, 100 ms by default) no longer than a commit
// waits, else a block's parts and votes would reach the others a gossip round late.
func (t Timeouts) Apply(cfg *config.ConsensusConfig) {
	if t.Propose != 0 {
		cfg.TimeoutPropose = t.Propose
	}
	if t.Commit != 0 {
		cfg.TimeoutCommit = t.Commit
		cfg.PeerGossipSleepDuration = min(cfg.PeerGossipSleepDuration, t.Commit)
	}
}
