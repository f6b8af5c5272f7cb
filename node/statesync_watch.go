package node

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"sync"
	"time"

	"github.com/cometbft/cometbft/config"
	cmtlog "github.com/cometbft/cometbft/libs/log"
	"github.com/cometbft/cometbft/light"

	"github.com/ttld-dev/ttld/abci"
)

// NB: CometBFT v0.38's state sync does not end by itself when it cannot succeed, and
// says so only in its log. With no snapshot left to try, its syncer logs "sync any",
// asks its peers again and sleeps discovery_time, for ever (statesync/syncer.go,
// SyncAny): the peers and snapshots it rejected never come back. When the sync fails
// otherwise (its light client has no witness left, "no witnesses connected. please
// reset light client"; an ABCI abort), the goroutine that runs it logs "State sync
// failed" and returns (node/setup.go, startStateSync), leaving a node that neither
// syncs nor follows the chain. Neither reaches the application, so a node about to
// state-sync watches CometBFT's log for these messages (stateSyncWatch).
const (
	syncerNoSnapshot = "sync any"
	syncerFailed     = "State sync failed"
)

// syncerEnded are the other messages after which startStateSync's goroutine has
// returned: the state was restored but the node could not go on from it.
var syncerEnded = map[string]bool{
	"Failed to bootstrap node with new state": true,
	"Failed to store last seen commit":        true,
	"Failed to switch to block sync":          true,
}

// StateSyncGiveUpRounds is how many times in a row CometBFT's syncer, having tried
// snapshots, finds none left before the node stops (docs/STATE.md, "Snapshots"): it asks
// its peers before each, so the peers have had discovery_time twice to offer a snapshot
// it has not refused.
const StateSyncGiveUpRounds = 3

// ErrStateSyncExhausted: every snapshot offered to the node was tried and failed, and
// its peers offered no other for Rounds rounds, Discovery apart. Status is what the
// application did with them.
type ErrStateSyncExhausted struct {
	Status    abci.RestoreStatus
	Rounds    int
	Discovery time.Duration
	Config    string
}

func (e ErrStateSyncExhausted) Error() string {
	st := e.Status
	what := []string{fmt.Sprintf("its peers offered %d snapshots", st.Offered)}
	if st.ChunksRefused > 0 {
		what = append(what, fmt.Sprintf("%d chunks they sent were not the chunks the manifests name (corrupt, or sent by peers that lie: CometBFT bans each such sender)", st.ChunksRefused))
	}
	if st.Refused > 0 {
		what = append(what, fmt.Sprintf("this node refused %d snapshots", st.Refused))
	}
	if failed := st.Offered - st.Refused; failed > 0 {
		what = append(what, fmt.Sprintf("%d failed in CometBFT (chunks that never came, as when every peer serving the snapshot is banned, or a state its light client could not verify)", failed))
	}
	return fmt.Sprintf("state sync cannot end: no snapshot is left to try: %s; and its peers offered no other in %d rounds, %s apart. "+
		"Restart with other peers ([p2p] persistent_peers or seeds in %s), or turn state sync off ([statesync] enable = false) to sync every block from genesis",
		strings.Join(what, "; "), e.Rounds, e.Discovery, e.Config)
}

// ErrStateSyncFailed: CometBFT's state sync failed with Err and stopped. Servers are the
// servers of [statesync] rpc_servers found at fault afterwards
// (diagnoseStateSyncServers); none when all answer and verify.
type ErrStateSyncFailed struct {
	Err     error
	Servers []ErrStateSyncServer
	Config  string
}

func (e ErrStateSyncFailed) Error() string {
	var b strings.Builder
	fmt.Fprintf(&b, "state sync failed: %v", e.Err)
	for _, s := range e.Servers {
		fmt.Fprintf(&b, "; %v", s)
	}
	switch {
	case len(e.Servers) > 0:
	case errors.Is(e.Err, light.ErrNoWitnesses):
		fmt.Fprintf(&b, "; CometBFT's light client dropped every witness of [statesync] rpc_servers (in %s) for answering headers it could not verify, yet each answers and verifies now: start the node again, or name other servers", e.Config)
	default:
		b.WriteString("; start the node again, or turn state sync off ([statesync] enable = false) to sync every block from genesis")
	}
	return b.String()
}

func (e ErrStateSyncFailed) Unwrap() error { return e.Err }

// stateSyncDiagnosisTimeout bounds the check of the RPC servers after a failed sync.
const stateSyncDiagnosisTimeout = 30 * time.Second

// stateSyncWatch halts the application when CometBFT's state sync cannot end: its
// syncer has no snapshot left StateSyncGiveUpRounds times in a row after it offered
// one (ErrStateSyncExhausted), or the sync failed (ErrStateSyncFailed).
type stateSyncWatch struct {
	app     *abci.Application
	cfg     *config.Config
	chainID string

	mu sync.Mutex
	// rounds counts the syncer's rounds without a snapshot since offered, the
	// snapshots the application had been offered, last changed.
	rounds, offered int
	// fail runs failed's diagnosis once: the sync fails once.
	fail sync.Once
}

func newStateSyncWatch(cfg *config.Config, chainID string, app *abci.Application) *stateSyncWatch {
	return &stateSyncWatch{app: app, cfg: cfg, chainID: chainID}
}

// noSnapshot counts a round of the syncer without a snapshot to try.
func (w *stateSyncWatch) noSnapshot() {
	st := w.app.RestoreStatus()
	w.mu.Lock()
	if st.Offered != w.offered {
		w.offered, w.rounds = st.Offered, 0
	}
	w.rounds++
	rounds := w.rounds
	w.mu.Unlock()
	if st.Offered > 0 && rounds >= StateSyncGiveUpRounds {
		w.app.HaltStateSync(ErrStateSyncExhausted{Status: st, Rounds: rounds, Discovery: w.cfg.StateSync.DiscoveryTime, Config: ConfigFile(w.cfg.RootDir)})
	}
}

// failed halts the application on a sync that failed with err, once the RPC servers
// are diagnosed, on a goroutine of its own (the servers may take their time).
func (w *stateSyncWatch) failed(err error) {
	w.fail.Do(func() {
		go func() {
			ctx, cancel := context.WithTimeout(context.Background(), stateSyncDiagnosisTimeout)
			defer cancel()
			w.app.HaltStateSync(ErrStateSyncFailed{Err: err, Servers: diagnoseStateSyncServers(ctx, w.cfg, w.chainID), Config: ConfigFile(w.cfg.RootDir)})
		}()
	})
}

// watchStateSync is cometLog, and every logger derived from it, passing each message
// on and telling w of the state sync's.
func watchStateSync(cometLog cmtlog.Logger, w *stateSyncWatch) cmtlog.Logger {
	return watchingLogger{Logger: cometLog, w: w}
}

type watchingLogger struct {
	cmtlog.Logger
	w *stateSyncWatch
}

func (l watchingLogger) Info(msg string, keyvals ...any) {
	l.Logger.Info(msg, keyvals...)
	if msg == syncerNoSnapshot {
		l.w.noSnapshot()
	}
}

func (l watchingLogger) Error(msg string, keyvals ...any) {
	l.Logger.Error(msg, keyvals...)
	if msg == syncerFailed || syncerEnded[msg] {
		l.w.failed(errValue(msg, keyvals))
	}
}

func (l watchingLogger) With(keyvals ...any) cmtlog.Logger {
	return watchingLogger{Logger: l.Logger.With(keyvals...), w: l.w}
}

// errValue is the error among keyvals under "err"; msg as an error when there is none.
func errValue(msg string, keyvals []any) error {
	for i := 1; i < len(keyvals); i += 2 {
		if err, ok := keyvals[i].(error); ok && keyvals[i-1] == "err" {
			return err
		}
	}
	return errors.New(msg)
}
