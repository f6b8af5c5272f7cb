package ports

import (
	"errors"
	"fmt"
	"math/rand/v2"
	"net"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"testing"
)

// Ports are handed out from [lowest, highest): above the ports services commonly
// listen on, and below the host ports of the devnets and local testnets (node.Testnet's
// host port prefixes, 26 to 31 thousand), which tests bind by number.
const (
	lowest  = 10_000
	highest = 26_000
)

// ephemeralFile holds the kernel's ephemeral range on Linux: its lowest and highest
// port.
const ephemeralFile = "/proc/sys/net/ipv4/ip_local_port_range"

// defaultEphemeralLow is the start of Linux's default ephemeral range, assumed where
// the range cannot be read.
const defaultEphemeralLow = 32_768

var (
	mu     sync.Mutex
	handed = map[int]bool{}
	// claims are the lock files of the ports this process was handed, held open (and
	// locked) until it exits: another test process skips a port whose file is locked.
	claims []*os.File
)

// claimDir holds one lock file a port handed to some test process of this machine.
var claimDir = filepath.Join(os.TempDir(), "ttld-test-ports")

// claim takes port p for this process across the machine's test processes (go test
// runs packages side by side): an exclusive lock on p's file, which the process holds
// until it exits. false: another process holds it, or the lock cannot be taken.
func claim(p int) bool {
	if err := os.MkdirAll(claimDir, 0o777); err != nil {
		return false
	}
	f, err := os.OpenFile(filepath.Join(claimDir, strconv.Itoa(p)), os.O_CREATE|os.O_RDWR, 0o666)
	if err != nil {
		return false
	}
	if err := syscall.Flock(int(f.Fd()), syscall.LOCK_EX|syscall.LOCK_NB); err != nil {
		f.Close()
		return false
	}
	claims = append(claims, f)
	return true
}

// Free returns n distinct loopback ports that were free a moment ago, below the
// ephemeral range and the devnets' host ports, never returned before in this process
// nor held by another test process of the machine (claim). All are held open together
// while they are chosen, then released for the caller to bind.
func Free(n int) ([]int, error) {
	mu.Lock()
	defer mu.Unlock()
	high := min(ephemeralLow(), highest)
	if high-lowest < 1_000 {
		return nil, fmt.Errorf("ports: the ephemeral range starts at %d, leaving too few ports below it", high)
	}
	out := make([]int, 0, n)
	var held []net.Listener
	defer func() {
		for _, l := range held {
			l.Close()
		}
	}()
	span := high - lowest
	start := rand.IntN(span)
	for i := 0; i < span && len(out) < n; i++ {
		p := lowest + (start+i)%span
		if handed[p] || !claim(p) {
			continue
		}
		l, err := net.Listen("tcp", net.JoinHostPort("127.0.0.1", strconv.Itoa(p)))
		if err != nil {
			continue
		}
		held = append(held, l)
		handed[p] = true
		out = append(out, p)
	}
	if len(out) < n {
		return nil, errors.New("ports: no free loopback port left below the ephemeral range")
	}
	return out, nil
}

// Addrs is Free as host:port addresses on 127.0.0.1, failing t on an error.
func Addrs(t testing.TB, n int) []string {
	t.Helper()
	ps, err := Free(n)
	if err != nil {
		t.Fatal(err)
	}
	out := make([]string, n)
	for i, p := range ps {
		out[i] = net.JoinHostPort("127.0.0.1", strconv.Itoa(p))
	}
	return out
}

// Addr is one address of Addrs.
func Addr(t testing.TB) string {
	t.Helper()
	return Addrs(t, 1)[0]
}

// ephemeralLow is the lowest port of the kernel's ephemeral range.
func ephemeralLow() int {
	b, err := os.ReadFile(ephemeralFile)
	if err != nil {
		return defaultEphemeralLow
	}
	f := strings.Fields(string(b))
	if len(f) != 2 {
		return defaultEphemeralLow
	}
	low, err := strconv.Atoi(f[0])
	if err != nil || low <= 0 {
		return defaultEphemeralLow
	}
	return low
}
