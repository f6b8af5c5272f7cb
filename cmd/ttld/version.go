package main

import (
	"fmt"
	"io"
	"runtime"
	"runtime/debug"
	"strconv"
	"strings"

	"github.com/spf13/cobra"

	"github.com/ttld-dev/ttld/protocol"
)

// Set at link time by the Makefile (-ldflags "-X main.version=... -X main.commit=...");
// a plain `go build` keeps these defaults and commit falls back to the revision Go
// stamps into the binary.
var (
	version = "dev"
	commit  = ""
)

// versionOutput is what version prints (-o json: this object).
type versionOutput struct {
	Version   string `json:"version"`
	Commit    string `json:"commit"`
	GoVersion string `json:"go_version"`
	// Protocols are the protocol versions this build can run, oldest first.
	Protocols []uint32 `json:"protocol_versions"`
	// Latest is the newest protocol version this build implements: a new genesis
	// starts on it, and the node signals it unless held back.
	Latest uint32 `json:"protocol_latest"`
}

func newVersionOutput() versionOutput {
	out := versionOutput{Version: version, Commit: buildCommit(), GoVersion: runtime.Version(), Latest: uint32(protocol.Newest())}
	for _, v := range protocol.Supported() {
		out.Protocols = append(out.Protocols, uint32(v))
	}
	return out
}

// buildCommit is commit, or else the VCS revision go build recorded ("-dirty" when the
// tree had changes), or "unknown".
func buildCommit() string {
	if commit != "" {
		return commit
	}
	info, ok := debug.ReadBuildInfo()
	if !ok {
		return "unknown"
	}
	rev, dirty := "", false
	for _, s := range info.Settings {
		switch s.Key {
		case "vcs.revision":
			rev = s.Value
		case "vcs.modified":
			dirty = s.Value == "true"
		}
	}
	if rev == "" {
		return "unknown"
	}
	if dirty {
		rev += "-dirty"
	}
	return rev
}

func (o versionOutput) text(w io.Writer) {
	protos := make([]string, len(o.Protocols))
	for i, p := range o.Protocols {
		protos[i] = strconv.FormatUint(uint64(p), 10)
	}
	fmt.Fprintf(w, "version:   %s\n", o.Version)
	fmt.Fprintf(w, "commit:    %s\n", o.Commit)
	fmt.Fprintf(w, "go:        %s\n", o.GoVersion)
	fmt.Fprintf(w, "protocol:  %s (new chains start on %d)\n", strings.Join(protos, ", "), o.Latest)
}

func newVersionCmd() *cobra.Command {
	return &cobra.Command{
		Use:   "version",
		Short: "Print the version, commit, Go version and supported protocol versions",
		Args:  cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			out := newVersionOutput()
			return printResult(cmd, out.text, out)
		},
	}
}
