package load

import (
	"bytes"
	"fmt"
	"os"
	"strconv"
	"time"
)

// userHZ is the unit of the CPU times in /proc/PID/stat. NB: the kernel reports them
// in USER_HZ, 100 on every Linux architecture Go builds for; reading it back
// (sysconf(_SC_CLK_TCK)) would need cgo.
const userHZ = 100

// ProcessCPU returns the CPU time, user and system, that process pid has used since it
// started: utime + stime of /proc/PID/stat (Linux only).
func ProcessCPU(pid int) (time.Duration, error) {
	raw, err := os.ReadFile(fmt.Sprintf("/proc/%d/stat", pid))
	if err != nil {
		return 0, fmt.Errorf("load: CPU time of process %d: %w", pid, err)
	}
	// The command name, field 2, is in parentheses and may hold spaces: the fields
	// after its closing one start at field 3 (state); utime and stime are 14 and 15.
	end := bytes.LastIndexByte(raw, ')')
	if end < 0 {
		return 0, fmt.Errorf("load: /proc/%d/stat without a command name", pid)
	}
	f := bytes.Fields(raw[end+1:])
	if len(f) < 13 {
		return 0, fmt.Errorf("load: /proc/%d/stat has %d fields after the command name", pid, len(f))
	}
	var ticks uint64
	for _, field := range f[11:13] {
		n, err := strconv.ParseUint(string(field), 10, 64)
		if err != nil {
			return 0, fmt.Errorf("load: /proc/%d/stat: %w", pid, err)
		}
		ticks += n
	}
	return time.Duration(ticks) * time.Second / userHZ, nil
}

// PeakRSS returns the largest resident set process pid has had since it started: VmHWM
// of /proc/PID/status (Linux only).
func PeakRSS(pid int) (int64, error) {
	raw, err := os.ReadFile(fmt.Sprintf("/proc/%d/status", pid))
	if err != nil {
		return 0, fmt.Errorf("load: peak resident set of process %d: %w", pid, err)
	}
	for line := range bytes.Lines(raw) {
		rest, ok := bytes.CutPrefix(line, []byte("VmHWM:"))
		if !ok {
			continue
		}
		f := bytes.Fields(rest)
		if len(f) != 2 || string(f[1]) != "kB" {
			return 0, fmt.Errorf("load: /proc/%d/status: VmHWM %q", pid, bytes.TrimSpace(rest))
		}
		kb, err := strconv.ParseInt(string(f[0]), 10, 64)
		if err != nil {
			return 0, fmt.Errorf("load: /proc/%d/status: %w", pid, err)
		}
		return kb << 10, nil
	}
	return 0, fmt.Errorf("load: /proc/%d/status has no VmHWM", pid)
}

// cpuWatch holds the CPU times at the start of a measured window.
type cpuWatch struct {
	node, self     int
	nodeAt, selfAt time.Duration
}

// startCPU reads the CPU times of the node (when nodePID is not 0) and of this
// process.
func startCPU(nodePID int) (*cpuWatch, error) {
	w := &cpuWatch{node: nodePID, self: os.Getpid()}
	var err error
	if w.node != 0 {
		if w.nodeAt, err = ProcessCPU(w.node); err != nil {
			return nil, err
		}
	}
	if w.selfAt, err = ProcessCPU(w.self); err != nil {
		return nil, err
	}
	return w, nil
}

// stop records in r the CPU time used since startCPU, and the node's peak resident set.
func (w *cpuWatch) stop(r *Result) error {
	if w.node != 0 {
		now, err := ProcessCPU(w.node)
		if err != nil {
			return err
		}
		r.NodeCPU, r.NodeMeasured = now-w.nodeAt, true
		if r.NodePeakRSS, err = PeakRSS(w.node); err != nil {
			return err
		}
	}
	now, err := ProcessCPU(w.self)
	if err != nil {
		return err
	}
	r.ToolCPU = now - w.selfAt
	return nil
}
