package node

import (
	"os"
	"path/filepath"
	"testing"
	"time"
)

// TestTimeoutsWritten: Init and Testnet write the timeouts asked into every home's
// config.toml, with gossip no slower than a commit, and keep the defaults otherwise; a
// timeout under a millisecond is refused before anything is written.
func TestTimeoutsWritten(t *testing.T) {
	t.Parallel()
	fast := Timeouts{Propose: 300 * time.Millisecond, Commit: 15 * time.Millisecond}
	home := filepath.Join(t.TempDir(), "home")
	if _, err := Init(InitOptions{Home: home, Timeouts: fast}); err != nil {
		t.Fatal(err)
	}
	out := filepath.Join(t.TempDir(), "net")
	res, err := Testnet(TestnetOptions{Output: out, Validators: 2, FullNodes: 1, Timeouts: fast})
	if err != nil {
		t.Fatal(err)
	}
	homes := []string{home}
	for _, n := range res.Nodes {
		homes = append(homes, n.Home)
	}
	for _, h := range homes {
		cfg, err := LoadConfig(h)
		if err != nil {
			t.Fatal(err)
		}
		c := cfg.Consensus
		if c.TimeoutPropose != fast.Propose || c.TimeoutCommit != fast.Commit || c.PeerGossipSleepDuration != fast.Commit {
			t.Errorf("%s: propose %v, commit %v, gossip sleep %v", h, c.TimeoutPropose, c.TimeoutCommit, c.PeerGossipSleepDuration)
		}
	}

	home = filepath.Join(t.TempDir(), "home")
	if _, err := Init(InitOptions{Home: home, Timeouts: Timeouts{Commit: 50 * time.Millisecond}}); err != nil {
		t.Fatal(err)
	}
	cfg, err := LoadConfig(home)
	if err != nil {
		t.Fatal(err)
	}
	def := DefaultConfig(t.TempDir(), "")
	if c := cfg.Consensus; c.TimeoutPropose != def.Consensus.TimeoutPropose || c.TimeoutCommit != 50*time.Millisecond || c.PeerGossipSleepDuration != 50*time.Millisecond {
		t.Errorf("commit only: propose %v, commit %v, gossip sleep %v", c.TimeoutPropose, c.TimeoutCommit, c.PeerGossipSleepDuration)
	}
	if def.Consensus.TimeoutCommit != DefaultTimeoutCommit || def.Consensus.PeerGossipSleepDuration != 100*time.Millisecond {
		t.Errorf("defaults: commit %v, gossip sleep %v", def.Consensus.TimeoutCommit, def.Consensus.PeerGossipSleepDuration)
	}

	for _, bad := range []Timeouts{{Commit: time.Microsecond}, {Propose: -time.Second}} {
		home := filepath.Join(t.TempDir(), "home")
		if _, err := Init(InitOptions{Home: home, Timeouts: bad}); err == nil {
			t.Errorf("init with %+v: no error", bad)
		}
		if _, err := os.Stat(home); !os.IsNotExist(err) {
			t.Errorf("init with %+v wrote %s", bad, home)
		}
		out := filepath.Join(t.TempDir(), "net")
		if _, err := Testnet(TestnetOptions{Output: out, Validators: 1, Timeouts: bad}); err == nil {
			t.Errorf("testnet with %+v: no error", bad)
		}
	}
}
