package main

import (
	"context"
	"encoding/binary"
	"errors"
	"io"
	"syscall"
	"testing"

	"github.com/ttld-dev/ttld/node"
)

// TestStartReadsAppConfigOnce: ttld start reads app.toml once, for its logger and the
// node alike, so that both run on the same settings. The kernel reports every open of
// the file (inotify): one by the time the node has started.
func TestStartReadsAppConfigOnce(t *testing.T) {
	home := t.TempDir()
	if _, err := runCLI(t, "init", "--home", home); err != nil {
		t.Fatal(err)
	}
	opens := watchOpens(t, node.AppConfigFile(home))

	cmd, _, err := newRootCmd().Find([]string{"start"})
	if err != nil {
		t.Fatal(err)
	}
	if err := cmd.ParseFlags([]string{"--home", home, "--rpc-laddr", "tcp://" + freeAddr(t), "--p2p-laddr", "tcp://" + freeAddr(t),
		"--prometheus-laddr", freeAddr(t), "--web-laddr", node.WebOff, "--log-level", "error"}); err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	cmd.SetContext(ctx)
	cmd.SetErr(io.Discard)
	err = runNode(cmd, func(*node.Node) error {
		if n := opens(); n != 1 {
			t.Errorf("app.toml was opened %d times by the node's start, want 1", n)
		}
		cancel()
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
}

// watchOpens watches path with inotify from now on; the function it returns counts the
// opens of path reported since its last call.
func watchOpens(t *testing.T, path string) func() int {
	t.Helper()
	fd, err := syscall.InotifyInit1(syscall.IN_CLOEXEC | syscall.IN_NONBLOCK)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { syscall.Close(fd) })
	// NB: inotify merges an event with the one before it when they are the same: the
	// closes between the opens keep the opens apart.
	if _, err := syscall.InotifyAddWatch(fd, path, syscall.IN_OPEN|syscall.IN_CLOSE); err != nil {
		t.Fatal(err)
	}
	return func() int {
		opens := 0
		buf := make([]byte, 64*syscall.SizeofInotifyEvent)
		for {
			n, err := syscall.Read(fd, buf)
			if errors.Is(err, syscall.EAGAIN) {
				return opens
			}
			if err != nil {
				t.Fatal(err)
			}
			for off := 0; off+syscall.SizeofInotifyEvent <= n; {
				mask := binary.NativeEndian.Uint32(buf[off+4:])
				nameLen := binary.NativeEndian.Uint32(buf[off+12:])
				if mask&syscall.IN_OPEN != 0 {
					opens++
				}
				off += syscall.SizeofInotifyEvent + int(nameLen)
			}
		}
	}
}
