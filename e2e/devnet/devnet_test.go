//go:build devnet

package devnet

import (
	"bytes"
	"context"
	"crypto/sha256"
	"encoding/binary"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"math/bits"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	rpcclient "github.com/cometbft/cometbft/rpc/client"
	rpchttp "github.com/cometbft/cometbft/rpc/client/http"
	cmttypes "github.com/cometbft/cometbft/types"

	"github.com/ttld-dev/ttld/client"
	"github.com/ttld-dev/ttld/drive"
	"github.com/ttld-dev/ttld/keyring"
	"github.com/ttld-dev/ttld/node"
	"github.com/ttld-dev/ttld/proofs"
	"github.com/ttld-dev/ttld/protocol"
	"github.com/ttld-dev/ttld/replay"
)

// The test network: its own compose project, subnet and host ports, so that a user's
// `make devnet-up` network (project ttld, 172.28.0.0/24, ports 26xxx) can run beside it.
const (
	project    = "ttld-e2e"
	chainID    = "ttld-e2e-devnet"
	subnet     = "172.28.1" // TTLD_DEVNET_NET: the first three octets
	portPrefix = "25"       // TTLD_DEVNET_PORTS: RPC on 127.0.0.1:25657, 25757, 25857, 25957
	image      = "ttld:local"
	validators = 4
	// epochLengthS is the network's epoch length, ttld testnet's smallest: the test
	// crosses the change from epoch 0 to epoch 1, whose blocks pay epoch 0 out.
	epochLengthS = 60
)

// The networks' pace: blocks as fast as four validators sharing the machine's cores
// commit them, so that an epoch holds a thousand blocks or more and a history of
// thousands is minutes of work, not hours. CometBFT's own tests commit in tens of
// milliseconds (config.TestConsensusConfig, node.TestTimeouts).
const (
	// timeoutCommit and timeoutPropose are ttld testnet's --timeout-commit (which
	// lowers peer_gossip_sleep_duration with it, node.Timeouts) and --timeout-propose:
	// half a second for a proposal is what a validator sharing two cores with its
	// peers and a load meets, and what a round whose proposer is stopped, paused or
	// cut off costs.
	timeoutCommit  = 5 * time.Millisecond
	timeoutPropose = 500 * time.Millisecond
	// flushThrottle is every node's p2p flush_throttle_timeout: how long a connection
	// holds what it has to send before it writes it out (CometBFT's default 100 ms, its
	// test config's 10 ms). A block's proposal, prevotes and precommits each cross a
	// connection, so at 100 ms four validators commit a few blocks a second whatever
	// their timeouts; at a millisecond, tens.
	flushThrottle = "1ms"
)

// Bounds. The whole test runs under testDeadline; every single RPC call under
// callTimeout, since a paused node accepts connections and never answers.
const (
	testDeadline  = 9 * time.Minute
	callTimeout   = 3 * time.Second
	startTimeout  = 90 * time.Second
	commitTimeout = 20 * time.Second       // a transaction must be committed within this
	resendAfter   = 5 * time.Second        // a transaction not seen committed by then is sent again
	catchUp       = 90 * time.Second       // a faulted node must be back at the others' height within this
	poll          = 100 * time.Millisecond // how often a wait asks the nodes again
	// epochBlocks is how many blocks past epoch 1's first one every node must be before
	// the payouts of epoch 0 are read.
	epochBlocks = 3
)

// The load: from each of the load keys (one per node, funded by the client home's dev
// key first), a batch of transfers every loadPace, each batch to the next node in turn,
// for as long as the faults go on: about as many transfers whatever the chain's pace,
// and every one read back with a proof from every node.
const (
	batch    = 2
	loadPace = time.Second
	// loadFunds is what the dev key sends each load key: far more than the load's
	// transfers and their fees.
	loadFunds = 1_000_000_000_000
)

// member is one node of the network as the host sees it.
type member struct {
	name, home, ip string
	rpc            string // http://127.0.0.1:<published port>
	validator      []byte // consensus address
	payout         protocol.IdentityID
	load           keyring.Key // the load key this node's turn starts with
	client         *client.Client
	raw            *rpchttp.HTTP
}

type network struct {
	t       *testing.T
	root    string   // repository root: docker-compose.yml, bin/ttld
	dir     string   // TTLD_DEVNET_DIR: the node homes
	compose []string // docker-compose, or docker compose
	env     []string
	uid     int // TTLD_UID:TTLD_GID, the user the nodes run as
	gid     int
	client  string // the client home: the funded dev key
	dev     keyring.Key
	nodes   []*member // the validators
	full    []*member // the full nodes
	// files are the compose files, in the repository root.
	files   []string
	trusted *cmttypes.ValidatorSet
	// supply is the credits created in genesis (the dev key's; the payout identities
	// start at 0), and genesisMs the genesis time, from which block times count epochs.
	supply    uint64
	genesisMs uint64

	mu         sync.Mutex
	containers map[string]string // service name -> container id
}

func TestDevnetFaults(t *testing.T) {
	ctx, cancel := context.WithTimeout(context.Background(), testDeadline)
	defer cancel()
	n := newNetwork(t)
	n.generate(ctx, 0)
	n.up(ctx)

	start := n.waitAll(ctx, 3, startTimeout)
	t.Logf("network up: every node at height >= %d", start)
	n.healthy(ctx, startTimeout)
	n.webViews(ctx)
	n.fund(ctx)
	h0, t0 := n.height(ctx), time.Now()

	// Load and faults at the same time: the load goes on until the faults are over.
	var wg sync.WaitGroup
	errs := make(chan error, 2)
	var sent []transfer
	faulting := make(chan struct{})
	wg.Add(2)
	go func() {
		defer wg.Done()
		var err error
		sent, err = n.load(ctx, faulting)
		errs <- err
	}()
	go func() {
		defer wg.Done()
		defer close(faulting)
		errs <- n.faults(ctx)
	}()
	wg.Wait()
	close(errs)
	for err := range errs {
		if err != nil {
			t.Fatal(err)
		}
	}
	h1, elapsed := n.height(ctx), time.Since(t0)
	t.Logf("load and faults: %d transfers, heights %d..%d in %s", len(sent), h0, h1, elapsed.Round(time.Millisecond))

	// Every node back at the same height and past epoch 1's first block, which pays
	// epoch 0 out, then the same hashes everywhere.
	n.waitAll(ctx, h1+2, catchUp)
	final := n.waitAll(ctx, n.epochChange(ctx, 1)+epochBlocks, catchUp)
	n.agree(ctx, final)
	// NB: the state after final-1 is proven with header final, which every node has:
	// a read of the latest state would wait for the next block, every time.
	n.proofs(ctx, sent, final-1)
	n.credits(ctx, final-1)
	n.blockRate(ctx, "before the load", 1, h0)
	n.blockRate(ctx, "under load and faults", h0, h1)

	// Stop the network cleanly, then replay the stores of the node that ran throughout
	// and of the one that was killed.
	if _, err := n.run(ctx, n.composeCmd("stop", "-t", "30")); err != nil {
		t.Fatal(err)
	}
	n.replay(ctx, final, n.nodes[0], n.nodes[1])
}

func newNetwork(t *testing.T) *network {
	root, err := filepath.Abs(filepath.Join("..", ".."))
	if err != nil {
		t.Fatal(err)
	}
	for _, f := range []string{"docker-compose.yml", "bin/ttld"} {
		if _, err := os.Stat(filepath.Join(root, f)); err != nil {
			t.Fatalf("%v: run make e2e-devnet, which builds bin/ttld and the image first", err)
		}
	}
	compose := []string{"docker", "compose"}
	if p, err := exec.LookPath("docker-compose"); err == nil {
		compose = []string{p}
	}
	n := &network{t: t, root: root, dir: t.TempDir(), compose: compose, containers: map[string]string{}, files: []string{"docker-compose.yml"}}
	// The nodes run as this user, as make devnet-up runs them; as 1000:1000 when the
	// test runs as root, as the nodes never run as root (generate hands them their homes).
	n.uid, n.gid = os.Getuid(), os.Getgid()
	if n.uid == 0 {
		n.uid, n.gid = 1000, 1000
	}
	n.env = append(os.Environ(),
		"TTLD_DEVNET_DIR="+n.dir,
		"TTLD_DEVNET_NET="+subnet,
		"TTLD_DEVNET_PORTS="+portPrefix,
		fmt.Sprintf("TTLD_UID=%d", n.uid),
		fmt.Sprintf("TTLD_GID=%d", n.gid),
	)
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	if _, err := n.run(ctx, exec.Command("docker", "image", "inspect", image)); err != nil {
		t.Fatalf("no image %s: run make e2e-devnet (or make image) first: %v", image, err)
	}
	// A run killed by go test's own timeout skips its cleanup: clear what it left.
	n.down()
	return n
}

// generate writes the homes with ttld testnet, as make devnet-up does, with fullNodes
// full nodes and the extra flags, and checks that the funded key is in the client home
// only.
func (n *network) generate(ctx context.Context, fullNodes int, extra ...string) {
	t := n.t
	args := append([]string{"testnet", "--validators", strconv.Itoa(validators), "--full-nodes", strconv.Itoa(fullNodes), "--output", n.dir, "--chain-id", chainID,
		"--subnet-base", subnet + ".10", "--epoch-length", strconv.Itoa(epochLengthS),
		"--timeout-commit", timeoutCommit.String(), "--timeout-propose", timeoutPropose.String(), "--force", "-o", "json"}, extra...)
	out, err := n.run(ctx, exec.Command(filepath.Join(n.root, "bin", "ttld"), args...))
	if err != nil {
		t.Fatal(err)
	}
	var res struct {
		ClientHome string `json:"client_home"`
		DevBalance uint64 `json:"dev_balance"`
		Nodes      []struct {
			Name, Home, IP   string
			ValidatorAddress string `json:"validator_address"`
			PayoutIdentity   string `json:"payout_identity"`
		} `json:"nodes"`
	}
	if err := json.Unmarshal([]byte(out), &res); err != nil || len(res.Nodes) != validators+fullNodes || res.ClientHome == "" {
		t.Fatalf("ttld testnet -o json: %v\n%s", err, out)
	}
	n.client, n.supply = res.ClientHome, res.DevBalance
	gen, err := cmttypes.GenesisDocFromFile(filepath.Join(res.Nodes[0].Home, "config", "genesis.json"))
	if err != nil {
		t.Fatal(err)
	}
	n.genesisMs = uint64(gen.GenesisTime.UnixMilli())
	if n.dev, err = keyring.Open(n.client).Get(node.DevKeyName); err != nil {
		t.Fatal(err)
	}
	if n.trusted, _, err = node.GenesisValidators(res.Nodes[0].Home); err != nil {
		t.Fatal(err)
	}
	for i, r := range res.Nodes {
		editConfig(t, r.Home, regexp.MustCompile(`(?m)^flush_throttle_timeout = .*$`), `flush_throttle_timeout = "`+flushThrottle+`"`)
		m := &member{name: r.Name, home: r.Home, ip: r.IP, rpc: fmt.Sprintf("http://127.0.0.1:%s%d", portPrefix, 657+100*i)}
		validator := i < validators
		if validator {
			n.checkValidator(m, r.ValidatorAddress, r.PayoutIdentity)
			if m.load, err = keyring.Open(n.client).Add(fmt.Sprintf("load%d", i)); err != nil {
				t.Fatal(err)
			}
		} else {
			// full node j's RPC is published at P*1000 + 557 - 100j (ttld testnet)
			m.rpc = fmt.Sprintf("http://127.0.0.1:%s%d", portPrefix, 557-100*(i-validators))
		}
		if os.Getuid() == 0 {
			chownAll(t, r.Home, n.uid, n.gid)
		}
		if m.client, err = client.Dial(m.rpc, client.Options{ChainID: chainID, Trusted: n.trusted}); err != nil {
			t.Fatal(err)
		}
		if m.raw, err = rpchttp.New(m.rpc, "/websocket"); err != nil {
			t.Fatal(err)
		}
		if validator {
			n.nodes = append(n.nodes, m)
		} else {
			n.full = append(n.full, m)
		}
	}
}

// editConfig replaces what re matches in home's config.toml with repl, which must
// change it.
func editConfig(t *testing.T, home string, re *regexp.Regexp, repl string) {
	t.Helper()
	path := node.ConfigFile(home)
	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	edited := re.ReplaceAll(b, []byte(repl))
	if string(edited) == string(b) {
		t.Fatalf("%s: nothing matches %s", path, re)
	}
	if err := os.WriteFile(path, edited, 0o644); err != nil {
		t.Fatal(err)
	}
}

// checkValidator reads a validator's consensus address and payout identity as ttld
// testnet printed them into m, and checks that its home holds no key.
func (n *network) checkValidator(m *member, address, payout string) {
	t := n.t
	var err error
	if m.validator, err = hex.DecodeString(address); err != nil || len(m.validator) != 20 {
		t.Fatalf("%s: validator address %q: %v", m.name, address, err)
	}
	if m.payout, err = protocol.ParseIdentityID(payout); err != nil || m.payout != protocol.PayoutIdentityID(m.validator) {
		t.Fatalf("%s: payout identity %q, want protocol.PayoutIdentityID of %X (%v)", m.name, payout, m.validator, err)
	}
	if keys, err := keyring.Open(m.home).List(); err != nil || len(keys) != 0 {
		t.Fatalf("%s's home holds keys %v (%v): a container would hold them", m.name, keys, err)
	}
}

// chownAll hands dir and everything in it to uid:gid.
func chownAll(t *testing.T, dir string, uid, gid int) {
	t.Helper()
	err := filepath.WalkDir(dir, func(path string, _ os.DirEntry, err error) error {
		if err != nil {
			return err
		}
		return os.Lchown(path, uid, gid)
	})
	if err != nil {
		t.Fatal(err)
	}
}

// healthy waits until docker reports every node's health check (ttld status inside
// the container) healthy, and checks the user, restart policy and command line
// (--check-invariants: a node halts on a block after which the running total of
// credits differs from the supply) the nodes run with.
func (n *network) healthy(ctx context.Context, within time.Duration) {
	n.t.Helper()
	ctx, cancel := context.WithTimeout(ctx, within)
	defer cancel()
	want := fmt.Sprintf("%d:%d unless-stopped [start --home /home/.ttld --check-invariants] healthy", n.uid, n.gid)
	for {
		var not []string
		for _, m := range n.nodes {
			id, err := n.container(ctx, m.name)
			if err != nil {
				n.t.Fatal(err)
			}
			out, err := n.run(ctx, exec.Command("docker", "inspect", "-f", "{{.Config.User}} {{.HostConfig.RestartPolicy.Name}} {{.Config.Cmd}} {{if .State.Health}}{{.State.Health.Status}}{{end}}", id))
			if got := strings.TrimSpace(out); err != nil || got != want {
				not = append(not, fmt.Sprintf("%s: %q %v", m.name, got, err))
			}
		}
		if len(not) == 0 {
			n.t.Logf("health: every node %s", want)
			return
		}
		select {
		case <-ctx.Done():
			n.t.Fatalf("want every node %q: %s", want, strings.Join(not, "; "))
		case <-time.After(time.Second):
		}
	}
}

// webViews checks that every node serves its web view on its published port: the
// overview of the chain, under its Content-Security-Policy.
func (n *network) webViews(ctx context.Context) {
	n.t.Helper()
	for i, m := range n.nodes {
		url := fmt.Sprintf("http://127.0.0.1:%s%d/", portPrefix, node.TestnetHostWebPort+node.TestnetHostPortStep*i)
		req, err := http.NewRequestWithContext(ctx, http.MethodGet, url, nil)
		if err != nil {
			n.t.Fatal(err)
		}
		res, err := http.DefaultClient.Do(req)
		if err != nil {
			n.t.Fatalf("%s's web view at %s: %v", m.name, url, err)
		}
		body, err := io.ReadAll(res.Body)
		res.Body.Close()
		if err != nil || res.StatusCode != http.StatusOK || !strings.Contains(string(body), `data-figure="chain">`+chainID+`</bdi>`) || res.Header.Get("Content-Security-Policy") == "" {
			n.t.Fatalf("%s's web view at %s: %d %v %.200s", m.name, url, res.StatusCode, err, body)
		}
	}
	n.t.Logf("web view: every node serves its overview")
}

// fund sends loadFunds from the client home's dev key to every load key and waits
// until the transfers are committed.
func (n *network) fund(ctx context.Context) {
	t := n.t
	// A node catching up refuses new transactions (docs/ERRORS.md, "CheckTx's node
	// codes"): node0 may still be in its block sync when docker reports it healthy.
	for deadline := time.Now().Add(commitTimeout); ; {
		cctx, cancel := context.WithTimeout(ctx, callTimeout)
		st, err := n.nodes[0].client.RPC().Status(cctx)
		cancel()
		if err == nil && !st.SyncInfo.CatchingUp {
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("%s still catching up after %s: %v", n.nodes[0].name, commitTimeout, err)
		}
		select {
		case <-ctx.Done():
			t.Fatal(ctx.Err())
		case <-time.After(poll):
		}
	}
	for i, m := range n.nodes {
		tx := protocol.Sign(chainID, &protocol.AddressFundsTransfer{
			PubKey: n.dev.Pub, Nonce: uint64(i + 1), Recipient: m.load.Address(), Amount: loadFunds,
		}, n.dev.Priv)
		cctx, cancel := context.WithTimeout(ctx, callTimeout)
		res, err := n.nodes[0].client.Broadcast(cctx, tx, false)
		cancel()
		if err != nil || res.Refused() {
			t.Fatalf("fund %s: %+v, %v", m.load.Name, res, err)
		}
	}
	var funding []uint64
	for i := range n.nodes {
		funding = append(funding, uint64(i+1))
	}
	if st, err := n.waitNonces(ctx, n.dev.Address(), funding, commitTimeout); err != nil || len(unused(funding, st)) > 0 {
		t.Fatalf("funding the load keys: dev nonce %d, skipped %v, %v", st.Nonce, st.Skipped, err)
	}
}

// up starts the network and registers its teardown, which runs however the test ends.
// up starts the services named (none: every service of the compose files), and has the
// network stopped when the test ends.
func (n *network) up(ctx context.Context, services ...string) {
	n.t.Cleanup(func() {
		if n.t.Failed() {
			n.logs()
		}
		n.down()
	})
	n.start(ctx, services...)
}

// start starts the services named (none: every service) of a network that is up.
func (n *network) start(ctx context.Context, services ...string) {
	if _, err := n.run(ctx, n.composeCmd(append([]string{"up", "-d"}, services...)...)); err != nil {
		n.t.Fatal(err)
	}
}

func (n *network) down() {
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	if _, err := n.run(ctx, n.composeCmd("down", "--remove-orphans", "-t", "10")); err != nil {
		n.t.Errorf("teardown: %v", err)
	}
}

// logs writes the tail of every node's log into the test output.
func (n *network) logs() {
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	out, err := n.run(ctx, n.composeCmd("logs", "--no-color", "--tail", "40"))
	n.t.Logf("node logs (%v):\n%s", err, out)
}

func (n *network) composeCmd(args ...string) *exec.Cmd {
	full := append(append([]string{}, n.compose[1:]...), "-p", project)
	for _, f := range n.files {
		full = append(full, "-f", filepath.Join(n.root, f))
	}
	return exec.Command(n.compose[0], append(full, args...)...)
}

// run runs cmd in the repository root with the network's environment, bounded by ctx,
// and returns its standard output.
func (n *network) run(ctx context.Context, cmd *exec.Cmd) (string, error) {
	c := exec.CommandContext(ctx, cmd.Path, cmd.Args[1:]...)
	c.Dir, c.Env = n.root, n.env
	var stdout, stderr bytes.Buffer
	c.Stdout, c.Stderr = &stdout, &stderr
	if err := c.Run(); err != nil {
		return stdout.String(), fmt.Errorf("%s: %w\n%s", strings.Join(cmd.Args, " "), err, stderr.String())
	}
	return stdout.String(), nil
}

func (n *network) docker(ctx context.Context, args ...string) error {
	_, err := n.run(ctx, exec.Command("docker", args...))
	return err
}

// container is the id of a service's container.
func (n *network) container(ctx context.Context, name string) (string, error) {
	n.mu.Lock()
	defer n.mu.Unlock()
	if id, ok := n.containers[name]; ok {
		return id, nil
	}
	out, err := n.run(ctx, n.composeCmd("ps", "-q", name))
	id := strings.TrimSpace(out)
	if err != nil || id == "" {
		return "", fmt.Errorf("container of %s: %q, %v", name, out, err)
	}
	n.containers[name] = id
	return id, nil
}

// latest asks one node its latest height; -1 when it does not answer in time.
func (m *member) latest(ctx context.Context) int64 {
	ctx, cancel := context.WithTimeout(ctx, callTimeout)
	defer cancel()
	h, err := m.client.LatestHeight(ctx)
	if err != nil {
		return -1
	}
	return h
}

// height is the highest latest height any node reports.
func (n *network) height(ctx context.Context) int64 {
	best := int64(-1)
	for _, m := range n.nodes {
		best = max(best, m.latest(ctx))
	}
	return best
}

// waitAll waits until every node reports height h or more, and returns the lowest
// latest height then.
func (n *network) waitAll(ctx context.Context, h int64, within time.Duration) int64 {
	n.t.Helper()
	if err := n.waitNodes(ctx, h, within, n.nodes...); err != nil {
		n.t.Fatal(err)
	}
	return n.lowest(ctx)
}

// lowest is the lowest latest height the nodes report, -1 when one does not answer.
func (n *network) lowest(ctx context.Context) int64 {
	low := int64(-1)
	for i, m := range n.nodes {
		if l := m.latest(ctx); i == 0 || l < low {
			low = l
		}
	}
	return low
}

func (n *network) waitNodes(ctx context.Context, h int64, within time.Duration, ms ...*member) error {
	ctx, cancel := context.WithTimeout(ctx, within)
	defer cancel()
	for {
		var behind []string
		for _, m := range ms {
			if l := m.latest(ctx); l < h {
				behind = append(behind, fmt.Sprintf("%s at %d", m.name, l))
			}
		}
		if len(behind) == 0 {
			return nil
		}
		select {
		case <-ctx.Done():
			return fmt.Errorf("waiting for height %d: %s: %w", h, strings.Join(behind, ", "), ctx.Err())
		case <-time.After(poll):
		}
	}
}

// faults SIGKILLs and restarts node1, pauses and unpauses node2, and disconnects node3
// from the network for 10 s, one after the other, each once the network has
// recovered from the one before: a second fault while the first node is still
// catching up would leave two of four validators, and stall the chain.
func (n *network) faults(ctx context.Context) error {
	log := func(format string, args ...any) { n.t.Logf("fault: "+format, args...) }
	pause := func(d time.Duration) error {
		select {
		case <-ctx.Done():
			return ctx.Err()
		case <-time.After(d):
			return nil
		}
	}
	recovered := func(m *member) error {
		return n.waitNodes(ctx, n.height(ctx)+1, catchUp, m)
	}
	ids := map[string]string{}
	for _, name := range []string{"node1", "node2", "node3"} {
		id, err := n.container(ctx, name)
		if err != nil {
			return err
		}
		ids[name] = id
	}
	netName, err := n.run(ctx, exec.Command("docker", "inspect", "-f", "{{range $k, $v := .NetworkSettings.Networks}}{{$k}}{{end}}", ids["node3"]))
	if err != nil {
		return err
	}
	netName = strings.TrimSpace(netName)

	steps := []struct {
		what   string
		target *member
		do     func() error
	}{
		{"SIGKILL node1, start it 3 s later", n.nodes[1], func() error {
			if err := n.docker(ctx, "kill", "-s", "KILL", ids["node1"]); err != nil {
				return err
			}
			if err := pause(3 * time.Second); err != nil {
				return err
			}
			return n.docker(ctx, "start", ids["node1"])
		}},
		{"pause node2 for 5 s", n.nodes[2], func() error {
			if err := n.docker(ctx, "pause", ids["node2"]); err != nil {
				return err
			}
			if err := pause(5 * time.Second); err != nil {
				return err
			}
			return n.docker(ctx, "unpause", ids["node2"])
		}},
		{"disconnect node3 from " + netName + " for 10 s", n.nodes[3], func() error {
			if err := n.docker(ctx, "network", "disconnect", netName, ids["node3"]); err != nil {
				return err
			}
			if err := pause(10 * time.Second); err != nil {
				return err
			}
			// NB: back at its own address, the one the others dial.
			return n.docker(ctx, "network", "connect", "--ip", n.nodes[3].ip, netName, ids["node3"])
		}},
	}
	for _, s := range steps {
		if err := pause(3 * time.Second); err != nil {
			return err
		}
		log("%s (network at height %d)", s.what, n.height(ctx))
		began := time.Now()
		if err := s.do(); err != nil {
			return fmt.Errorf("%s: %w", s.what, err)
		}
		if err := recovered(s.target); err != nil {
			return fmt.Errorf("after %s: %w", s.what, err)
		}
		log("%s: recovered %s after the fault began (height %d)", s.target.name, time.Since(began).Round(time.Millisecond), n.height(ctx))
	}
	return nil
}

// transfer is one address transfer of the load.
type transfer struct {
	from      int // index of the node whose load key signs
	nonce     uint64
	recipient protocol.Address
	amount    uint64
}

// transferOf is the transfer the load makes from node k's load key with nonce: the
// same one every time, so that sending it again after a loss sends the same bytes.
func transferOf(k int, nonce uint64) transfer {
	h := sha256.New()
	h.Write([]byte("ttld-e2e-devnet/recipient"))
	h.Write(binary.BigEndian.AppendUint64(binary.BigEndian.AppendUint64(nil, uint64(k)), nonce))
	var r protocol.Address
	copy(r[:], h.Sum(nil))
	return transfer{from: k, nonce: nonce, recipient: r, amount: 1_000_000 + nonce}
}

// load sends transfers from each node's load key, one goroutine per key, until
// faulting is closed, and returns them. A key's transfers go batch by batch, a batch
// every loadPace, each batch to the next node in turn (another when that one does not
// answer or refuses), and the next batch waits for the last one's nonce to be
// committed, so that a node never sees a nonce ahead of its state. A batch lost with a
// killed node's mempool, or stuck in a cut-off node's, is sent again after resendAfter.
func (n *network) load(ctx context.Context, faulting <-chan struct{}) ([]transfer, error) {
	last := make([]uint64, len(n.nodes)) // each key's last nonce sent
	if err := atOnce(len(n.nodes), func(k int) (err error) {
		last[k], err = n.loadKey(ctx, k, faulting)
		return err
	}); err != nil {
		return nil, err
	}
	var all []transfer
	for k := range n.nodes {
		for nonce := uint64(1); nonce <= last[k]; nonce++ {
			all = append(all, transferOf(k, nonce))
		}
	}
	return all, nil
}

// loadKey sends node k's load key's batches until faulting is closed, and returns its
// last nonce, every one up to it committed.
func (n *network) loadKey(ctx context.Context, k int, faulting <-chan struct{}) (uint64, error) {
	key := n.nodes[k].load
	var todo []uint64 // the batch's nonces not yet seen committed
	next, round, resent := uint64(1), 0, 0
	pace := time.NewTicker(loadPace)
	defer pace.Stop()
	for {
		if len(todo) == 0 {
			select {
			case <-faulting:
				n.t.Logf("load: %s sent %d transfers in %d batches, %d sent again", n.nodes[k].name, next-1, round, resent)
				return next - 1, nil
			case <-ctx.Done():
				return 0, fmt.Errorf("load of %s stopped before nonce %d: %w", n.nodes[k].name, next, ctx.Err())
			case <-pace.C:
			}
			for ; len(todo) < batch; next++ {
				todo = append(todo, next)
			}
		} else {
			resent++
		}
		var txs [][]byte
		for _, nonce := range todo {
			tr := transferOf(k, nonce)
			txs = append(txs, protocol.Sign(chainID, &protocol.AddressFundsTransfer{
				PubKey: key.Pub, Nonce: nonce, Recipient: tr.recipient, Amount: tr.amount,
			}, key.Priv))
		}
		for try := range n.nodes {
			if n.send(ctx, n.nodes[(k+round+try)%len(n.nodes)], txs) {
				break
			}
		}
		round++
		st, err := n.waitNonces(ctx, key.Address(), todo, resendAfter)
		if err != nil {
			return 0, err
		}
		todo = unused(todo, st)
	}
}

// unused keeps the nonces of todo that st has not used: past its last nonce, or
// skipped (a batch's first transfer lost with a killed node's mempool while its second
// reached a block: the skipped nonce is still usable, and is sent again).
func unused(todo []uint64, st client.AddressState) []uint64 {
	var out []uint64
	for _, nonce := range todo {
		if nonce > st.Nonce || slices.Contains(st.Skipped, nonce) {
			out = append(out, nonce)
		}
	}
	return out
}

// send broadcasts txs in order to m; false when m did not take the first one.
func (n *network) send(ctx context.Context, m *member, txs [][]byte) bool {
	for i, tx := range txs {
		cctx, cancel := context.WithTimeout(ctx, callTimeout)
		res, err := m.client.Broadcast(cctx, tx, false)
		cancel()
		if err != nil || res.Refused() {
			return i > 0
		}
	}
	return true
}

// waitNonces waits up to within for a committed state of a in which every nonce of
// todo is used, and returns the state of the node whose last nonce is highest.
func (n *network) waitNonces(ctx context.Context, a protocol.Address, todo []uint64, within time.Duration) (client.AddressState, error) {
	deadline := time.Now().Add(within)
	for {
		var best client.AddressState
		for _, m := range n.nodes {
			cctx, cancel := context.WithTimeout(ctx, callTimeout)
			st, err := m.client.Address(cctx, a, 0, false)
			cancel()
			if err == nil && st.Nonce >= best.Nonce {
				best = st
			}
			if len(unused(todo, best)) == 0 {
				return best, nil
			}
		}
		if time.Now().After(deadline) {
			return best, nil
		}
		select {
		case <-ctx.Done():
			return best, ctx.Err()
		case <-time.After(poll):
		}
	}
}

// agree checks that every node has the same block hash and app hash at every height
// from 1 to h.
func (n *network) agree(ctx context.Context, h int64) { n.agreeFrom(ctx, 1, h) }

// agreeFrom is agree over heights from..h: a node that joined by state sync holds the
// blocks after its snapshot only.
func (n *network) agreeFrom(ctx context.Context, from, h int64) { n.agreeAmong(ctx, n.nodes, from, h) }

// agreeAmong is agreeFrom over the members ms.
func (n *network) agreeAmong(ctx context.Context, ms []*member, from, h int64) {
	t := n.t
	hdrs := make([][]*cmttypes.Header, len(ms)) // node -> height-from -> header
	if err := atOnce(len(ms), func(i int) (err error) {
		hdrs[i], err = ms[i].headers(ctx, from, h)
		return err
	}); err != nil {
		t.Fatal(err)
	}
	for k, ref := range hdrs[0] {
		for i, m := range ms[1:] {
			if hdr := hdrs[i+1][k]; !bytes.Equal(hdr.Hash(), ref.Hash()) || !bytes.Equal(hdr.AppHash, ref.AppHash) {
				t.Fatalf("height %d: %s has block %X app hash %X, %s has block %X app hash %X",
					ref.Height, ms[0].name, ref.Hash(), ref.AppHash, m.name, hdr.Hash(), hdr.AppHash)
			}
		}
	}
	t.Logf("agreement: %d nodes, same block hash and app hash at every height %d..%d", len(ms), from, h)
}

// proofs reads every recipient and every load key at height from every node, each with
// a proof checked against a header the genesis validators signed: each key's last
// nonce is that of its last transfer sent.
func (n *network) proofs(ctx context.Context, sent []transfer, height int64) {
	t := n.t
	began := time.Now()
	last := make([]uint64, len(n.nodes))
	for _, tr := range sent {
		last[tr.from] = max(last[tr.from], tr.nonce)
	}
	var wg sync.WaitGroup
	errs := make([]error, len(n.nodes))
	for i, m := range n.nodes {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for _, tr := range sent {
				st, err := m.client.Address(ctx, tr.recipient, height, true)
				if err != nil {
					errs[i] = fmt.Errorf("%s: recipient %s: %w", m.name, tr.recipient, err)
					return
				}
				if !st.Verified || st.Height != height || !st.Present || st.Balance != tr.amount || st.Nonce != 0 {
					errs[i] = fmt.Errorf("%s: recipient of %s's nonce %d: %+v, want balance %d", m.name, n.nodes[tr.from].name, tr.nonce, st, tr.amount)
					return
				}
			}
			for k, d := range n.nodes {
				st, err := m.client.Address(ctx, d.load.Address(), height, true)
				if err != nil {
					errs[i] = fmt.Errorf("%s: load key of %s: %w", m.name, d.name, err)
					return
				}
				if !st.Verified || st.Nonce != last[k] {
					errs[i] = fmt.Errorf("%s: load key of %s: %+v, want nonce %d", m.name, d.name, st, last[k])
					return
				}
			}
		}()
	}
	wg.Wait()
	if err := errors.Join(errs...); err != nil {
		t.Fatal(err)
	}
	t.Logf("proofs: %d addresses at height %d verified on each of 4 nodes in %s", len(sent)+len(n.nodes), height, time.Since(began).Round(time.Millisecond))
}

// epochOf is the epoch of a block, from its header time, as the application counts it.
func (n *network) epochOf(h *cmttypes.Header) uint32 {
	return protocol.EpochIndex(n.genesisMs, epochLengthS, uint64(h.Time.UnixMilli()))
}

// headers returns node0's headers 1..last, indexed by height.
func (n *network) headers(ctx context.Context, last int64) []*cmttypes.Header {
	hdrs, err := n.nodes[0].headers(ctx, 1, last)
	if err != nil {
		n.t.Fatal(err)
	}
	return append([]*cmttypes.Header{nil}, hdrs...)
}

// header returns m's header at height h.
func (n *network) header(ctx context.Context, m *member, h int64) *cmttypes.Header {
	hdrs, err := m.headers(ctx, h, h)
	if err != nil {
		n.t.Fatal(err)
	}
	return hdrs[0]
}

// headers returns m's headers from..to, indexed by height-from, read twenty at a time
// (CometBFT's /blockchain).
func (m *member) headers(ctx context.Context, from, to int64) ([]*cmttypes.Header, error) {
	out := make([]*cmttypes.Header, to-from+1)
	for hi := to; hi >= from; {
		lo := max(from, hi-19)
		cctx, cancel := context.WithTimeout(ctx, callTimeout)
		res, err := m.raw.BlockchainInfo(cctx, lo, hi)
		cancel()
		if err != nil {
			return nil, fmt.Errorf("%s /blockchain %d..%d: %w", m.name, lo, hi, err)
		}
		for _, meta := range res.BlockMetas {
			if h := meta.Header.Height; h >= lo && h <= hi {
				out[h-from] = &meta.Header
			}
		}
		for ; hi >= lo; hi-- {
			if out[hi-from] == nil {
				return nil, fmt.Errorf("%s /blockchain %d..%d: no header %d", m.name, lo, hi, hi)
			}
		}
	}
	return out, nil
}

// epochChange waits until the chain has a block of epoch e or later (e epoch lengths
// after the genesis time, and a block after that) and returns the height of the first.
func (n *network) epochChange(ctx context.Context, e uint32) int64 {
	t := n.t
	wait := max(time.Until(time.UnixMilli(int64(n.genesisMs+uint64(e)*epochLengthS*1000))), 0)
	t.Logf("epoch %d begins in %s", e, wait.Round(time.Millisecond))
	ctx, cancel := context.WithTimeout(ctx, wait+catchUp)
	defer cancel()
	select {
	case <-ctx.Done():
		t.Fatal(ctx.Err())
	case <-time.After(wait):
	}
	m := n.nodes[0]
	latest := m.latest(ctx)
	for latest < 1 || n.epochOf(n.header(ctx, m, latest)) < e {
		select {
		case <-ctx.Done():
			t.Fatalf("no block of epoch %d: %v", e, ctx.Err())
		case <-time.After(poll):
		}
		latest = m.latest(ctx)
	}
	// Block times increase with the height (CometBFT's BFT time), and so do epochs:
	// the first block of epoch e is found by halving 1..latest.
	lo, hi := int64(0), latest // block lo is before epoch e (0: none), block hi in it or later
	for lo+1 < hi {
		mid := (lo + hi) / 2
		if n.epochOf(n.header(ctx, m, mid)) >= e {
			hi = mid
		} else {
			lo = mid
		}
	}
	first := n.header(ctx, m, hi)
	t.Logf("epoch %d: first block %d at %s (genesis %s)", n.epochOf(first), hi,
		first.Time.Format(time.RFC3339Nano), time.UnixMilli(int64(n.genesisMs)).UTC().Format(time.RFC3339Nano))
	return hi
}

// key reads a raw tree key on m at height with a proof checked against a header the
// genesis validators signed (as the client's single-key reads do): the value, or nil
// when the proof shows the key absent.
func (m *member) key(ctx context.Context, key []byte, height int64) ([]byte, error) {
	ctx, cancel := context.WithTimeout(ctx, 4*callTimeout)
	defer cancel()
	res, err := m.client.RPC().ABCIQueryWithOptions(ctx, proofs.PathKey, key, rpcclient.ABCIQueryOptions{Height: height, Prove: true})
	if err != nil {
		return nil, err
	}
	if r := res.Response; r.Code != 0 || r.Height != height || !bytes.Equal(r.Key, key) {
		return nil, fmt.Errorf("%s /key %X at %d: code %d, key %X at %d: %s", m.name, key, height, r.Code, r.Key, r.Height, r.Log)
	}
	v, err := m.client.Verifier(ctx)
	if err != nil {
		return nil, err
	}
	r, err := v.VerifyQuery(ctx, res.Response)
	if err != nil {
		return nil, fmt.Errorf("%s /key %X at %d: %w", m.name, key, height, err)
	}
	if !r.Present {
		return nil, nil
	}
	return r.Value, nil
}

// u64 reads a u64 record with key (0 when proven absent).
func (m *member) u64(ctx context.Context, key []byte, height int64) (uint64, error) {
	v, err := m.key(ctx, key, height)
	switch {
	case err != nil:
		return 0, err
	case v == nil:
		return 0, nil
	case len(v) != 8:
		return 0, fmt.Errorf("%s: %X holds %X, not a u64", m.name, key, v)
	}
	return binary.BigEndian.Uint64(v), nil
}

// payouts is what epoch pays each validator (by index in n.nodes) when pool credits
// are paid out to proposers in proportion to blocks (validator index -> blocks), as
// the application's payEpoch documents: each share rounded down, the remainder to the
// proposer with the most blocks, the lowest address among equals. Every validator of
// the test network has a payout identity, so the whole pool is paid.
func (n *network) payouts(pool uint64, blocks map[int]uint64) map[int]uint64 {
	var all uint64
	for _, b := range blocks {
		all += b
	}
	out := map[int]uint64{}
	if all == 0 {
		return out
	}
	var paid uint64
	top := -1
	for i := range n.nodes {
		b, ok := blocks[i]
		if !ok {
			continue
		}
		hi, lo := bits.Mul64(pool, b)
		out[i], _ = bits.Div64(hi, lo, all)
		paid += out[i]
		if top < 0 || b > blocks[top] || (b == blocks[top] && bytes.Compare(n.nodes[i].validator, n.nodes[top].validator) < 0) {
			top = i
		}
	}
	out[top] += pool - paid
	return out
}

// credits checks the epochs and credits of the state after block height on every
// node, each read with a verified proof: the running total of credits equals the
// supply (the genesis dev balance); every epoch before the block's is paid, its pool
// emptied, its proposers' block counts those of the headers; and each validator's
// payout identity holds exactly its shares of the paid pools, more than 0 for one that
// proposed in epoch 0.
func (n *network) credits(ctx context.Context, height int64) {
	t := n.t
	began := time.Now()
	hdrs := n.headers(ctx, height)
	current := n.epochOf(hdrs[height])
	if current < 1 {
		t.Fatalf("block %d is in epoch %d: the test did not reach an epoch change", height, current)
	}
	index := map[string]int{}
	for i, m := range n.nodes {
		index[string(m.validator)] = i
	}
	blocks := make([]map[int]uint64, current) // epoch -> validator index -> blocks
	for e := range blocks {
		blocks[e] = map[int]uint64{}
	}
	for h := int64(1); h <= height; h++ {
		e := n.epochOf(hdrs[h])
		if e >= current {
			continue
		}
		i, ok := index[string(hdrs[h].ProposerAddress)]
		if !ok {
			t.Fatalf("block %d proposed by %X, not a genesis validator", h, hdrs[h].ProposerAddress)
		}
		blocks[e][i]++
	}
	if len(blocks[0]) == 0 {
		t.Fatalf("no block of epoch 0 below %d", height)
	}
	var errs []error
	var mu sync.Mutex
	fail := func(err error) {
		mu.Lock()
		defer mu.Unlock()
		errs = append(errs, err)
	}
	var summary string
	var wg sync.WaitGroup
	for _, m := range n.nodes {
		wg.Add(1)
		go func() {
			defer wg.Done()
			total, err := m.u64(ctx, drive.TotalCreditsKey(), height)
			if err != nil {
				fail(err)
				return
			}
			supply, err := m.u64(ctx, drive.SupplyKey(), height)
			if err != nil {
				fail(err)
				return
			}
			if total != supply || supply != n.supply {
				fail(fmt.Errorf("%s at %d: total credits %d, supply %d, genesis %d", m.name, height, total, supply, n.supply))
				return
			}
			want := map[int]uint64{}
			var pools uint64
			for e := range current {
				paid, err := m.u64(ctx, drive.EpochPaidKey(e), height)
				if err != nil {
					fail(err)
					return
				}
				if e == 0 && paid == 0 {
					fail(fmt.Errorf("%s at %d: epoch 0 paid nothing (no fees in it?)", m.name, height))
					return
				}
				for _, k := range [][]byte{drive.EpochFeesKey(e), drive.EpochStorageKey(e)} {
					if left, err := m.u64(ctx, k, height); err != nil || left != 0 {
						fail(fmt.Errorf("%s at %d: epoch %d's paid pool %X holds %d (%v)", m.name, height, e, k, left, err))
						return
					}
				}
				for i, v := range n.nodes {
					got, err := m.u64(ctx, drive.EpochProposerKey(e, v.validator), height)
					if err != nil || got != blocks[e][i] {
						fail(fmt.Errorf("%s at %d: epoch %d counts %d blocks of %s, the headers %d (%v)", m.name, height, e, got, v.name, blocks[e][i], err))
						return
					}
				}
				for i, c := range n.payouts(paid, blocks[e]) {
					want[i] += c
				}
				pools += paid
			}
			var sum uint64
			var got []string
			for i, v := range n.nodes {
				st, err := m.client.Identity(ctx, v.payout, height, true)
				if err != nil {
					fail(fmt.Errorf("%s: payout identity of %s: %w", m.name, v.name, err))
					return
				}
				if !st.Present || !st.Verified || st.Height != height || st.Balance != want[i] || (blocks[0][i] > 0 && st.Balance == 0) {
					fail(fmt.Errorf("%s at %d: payout identity of %s (%d blocks in epoch 0): %+v, want balance %d", m.name, height, v.name, blocks[0][i], st, want[i]))
					return
				}
				sum += st.Balance
				got = append(got, fmt.Sprintf("%s %d", v.name, st.Balance))
			}
			if sum != pools {
				fail(fmt.Errorf("%s at %d: payout identities hold %d, the paid epochs paid %d", m.name, height, sum, pools))
				return
			}
			mu.Lock()
			summary = fmt.Sprintf("epochs 0..%d paid %d credits (%s)", current-1, pools, strings.Join(got, ", "))
			mu.Unlock()
		}()
	}
	wg.Wait()
	if err := errors.Join(errs...); err != nil {
		t.Fatal(err)
	}
	t.Logf("credits at height %d (epoch %d), verified on each of 4 nodes in %s: total = supply = %d; %s; blocks by proposer in epoch 0: %v",
		height, current, time.Since(began).Round(time.Millisecond), n.supply, summary, blocks[0])
}

// blockRate logs the chain's block rate between two heights, from the header times.
func (n *network) blockRate(ctx context.Context, what string, first, last int64) {
	var times [2]time.Time
	for i, height := range []int64{first, last} {
		cctx, cancel := context.WithTimeout(ctx, callTimeout)
		c, err := n.nodes[0].raw.Commit(cctx, &height)
		cancel()
		if err != nil {
			n.t.Fatal(err)
		}
		times[i] = c.SignedHeader.Header.Time
	}
	span := times[1].Sub(times[0])
	n.t.Logf("block rate %s: heights %d..%d in %s of block time: %.2f blocks/s", what, first, last, span.Round(time.Millisecond), float64(last-first)/span.Seconds())
}

// replay runs ttld replay on the stopped nodes' homes and requires every app hash to
// match, up to height atLeast or beyond.
func (n *network) replay(ctx context.Context, atLeast int64, ms ...*member) {
	t := n.t
	for i, sum := range n.replays(ctx, ms...) {
		if sum.Verdict != "match" || sum.Mismatch != nil || sum.ChainID != chainID || sum.To < atLeast || sum.Checked < sum.To-1 {
			t.Fatalf("replay %s: %+v", ms[i].name, sum)
		}
		t.Logf("replay %s: %d blocks (1..%d), %d checked, verdict %s, %.2fs, %.0f blocks/s",
			ms[i].name, sum.Blocks, sum.To, sum.Checked, sum.Verdict, sum.Seconds, sum.BlocksPerSecond)
	}
}

// replays runs ttld replay on the stopped nodes' homes side by side, and returns what
// each reported.
func (n *network) replays(ctx context.Context, ms ...*member) []replay.Summary {
	sums := make([]replay.Summary, len(ms))
	if err := atOnce(len(ms), func(i int) error {
		m := ms[i]
		out, err := n.run(ctx, exec.Command(filepath.Join(n.root, "bin", "ttld"), "replay", "--home", m.home, "-o", "json"))
		if err != nil {
			return fmt.Errorf("replay %s: %w\n%s", m.name, err, out)
		}
		if err := json.Unmarshal([]byte(out), &sums[i]); err != nil {
			return fmt.Errorf("replay %s -o json: %w\n%s", m.name, err, out)
		}
		return nil
	}); err != nil {
		n.t.Fatal(err)
	}
	return sums
}

// atOnce runs f(i) for every i below count, each on a goroutine of its own, and joins
// their errors.
func atOnce(count int, f func(i int) error) error {
	errs := make([]error, count)
	var wg sync.WaitGroup
	for i := range count {
		wg.Add(1)
		go func() {
			defer wg.Done()
			errs[i] = f(i)
		}()
	}
	wg.Wait()
	return errors.Join(errs...)
}
