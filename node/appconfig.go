package node

import (
	"errors"
	"fmt"
	"io/fs"
	"net"
	"net/url"
	"os"
	"path/filepath"
	"strings"
	"text/template"

	"github.com/rs/zerolog"
	"github.com/spf13/viper"

	"github.com/ttld-dev/ttld/drive"
	"github.com/ttld-dev/ttld/protocol"
	"github.com/ttld-dev/ttld/web"
)

// Log formats of AppConfig.LogFormat.
const (
	LogFormatConsole = "console"
	LogFormatJSON    = "json"
)

// AppConfig is ttld's own part of the configuration, in home/config/app.toml.
type AppConfig struct {
	// KeepRecent is how many recent versions of the state tree are kept (>= 0; 0 keeps
	// every version).
	KeepRecent int64 `mapstructure:"keep_recent"`
	// IAVLCacheSize is the state tree's node cache, in nodes (> 0).
	IAVLCacheSize int `mapstructure:"iavl_cache_size"`
	// ReadAhead: the documents blocks' cleanups delete are read ahead on other
	// goroutines (abci's readahead.go).
	ReadAhead bool `mapstructure:"read_ahead"`
	// LevelDBBlockCacheMiB is the goleveldb block cache of the state database, in MiB
	// (> 0): decoded table blocks kept in memory, outside the Go heap's scan.
	LevelDBBlockCacheMiB int `mapstructure:"leveldb_block_cache_mib"`
	// GCPercent is the Go garbage collector's target (runtime/debug.SetGCPercent, > 0):
	// the heap may grow by this percentage of the live heap before a collection.
	// `ttld start` applies it unless the GOGC environment variable is set.
	GCPercent int `mapstructure:"gc_percent"`
	// SignalVersion is the protocol version the node's proposals signal
	// (docs/STATE.md, "Protocol upgrades"): 0 signals the newest this binary
	// implements; an earlier one holds the node back. ttld start --signal-version
	// overrides it.
	SignalVersion uint32 `mapstructure:"signal_version"`
	// SnapshotInterval: a snapshot of the state is taken at every height that is a
	// multiple of it, in the background, for nodes that join by state sync (0: none).
	SnapshotInterval int64 `mapstructure:"snapshot_interval"`
	// SnapshotKeepRecent is how many of the newest snapshots are kept (> 0).
	SnapshotKeepRecent int `mapstructure:"snapshot_keep_recent"`
	// LogFormat is LogFormatConsole or LogFormatJSON.
	LogFormat string `mapstructure:"log_format"`
	// LogLevel is a zerolog level name: trace, debug, info, warn or error. It applies
	// to CometBFT's messages too; config.toml's log_level is not read.
	LogLevel string `mapstructure:"log_level"`
	// Web is the [web] section: the node's web view.
	Web WebConfig `mapstructure:"web"`
}

// WebConfig is app.toml's [web] section.
type WebConfig struct {
	// Laddr is the host:port the web view listens on; "" or WebOff turns it off.
	Laddr string `mapstructure:"laddr"`
	// CORSAllowedOrigins are the origins (scheme://host[:port], or "*" for any) whose
	// pages may read the JSON API under /api from a browser; none by default.
	CORSAllowedOrigins []string `mapstructure:"cors_allowed_origins"`
}

// Listen is the address the web view listens on, "" when Laddr turns it off.
func (w WebConfig) Listen() string {
	if w.Laddr == WebOff {
		return ""
	}
	return w.Laddr
}

// DefaultAppConfig is what Init writes.
func DefaultAppConfig() AppConfig {
	return AppConfig{KeepRecent: drive.DefaultKeepRecent, IAVLCacheSize: drive.DefaultCacheSize,
		ReadAhead: true, LevelDBBlockCacheMiB: DefaultLevelDBBlockCacheMiB, GCPercent: DefaultGCPercent,
		SnapshotKeepRecent: DefaultSnapshotKeepRecent, LogFormat: LogFormatConsole, LogLevel: "info",
		Web: WebConfig{Laddr: web.DefaultListen}}
}

// DefaultSnapshotKeepRecent is how many snapshots a node keeps: the newest, and the
// one before for the nodes still fetching it when the newest is taken.
const DefaultSnapshotKeepRecent = 2

// DefaultLevelDBBlockCacheMiB is the state database's goleveldb block cache. With
// goleveldb's own default, 8 MiB, a node restarted over a million documents took its
// first cleanups 3 – 4 times as long as with 512 MiB, reading and decoding the same table
// blocks again (docs/BENCHMARKS.md); once the caches are warm the size makes no
// difference measured.
const DefaultLevelDBBlockCacheMiB = 256

// DefaultGCPercent is the garbage collector's default target, twice Go's own: at
// saturation a node spent 13 – 20% less CPU per transfer and 3 – 12% less per document
// create with it, for a peak resident memory a quarter larger (docs/BENCHMARKS.md, "The
// garbage collector's target").
const DefaultGCPercent = 200

// AppConfigFile is the path of app.toml in a home directory.
func AppConfigFile(home string) string { return filepath.Join(home, "config", "app.toml") }

// Validate checks every field.
func (c AppConfig) Validate() error {
	if c.KeepRecent < 0 {
		return fmt.Errorf("keep_recent must be >= 0, not %d", c.KeepRecent)
	}
	if c.IAVLCacheSize <= 0 {
		return fmt.Errorf("iavl_cache_size must be > 0, not %d", c.IAVLCacheSize)
	}
	if c.LevelDBBlockCacheMiB <= 0 {
		return fmt.Errorf("leveldb_block_cache_mib must be > 0, not %d", c.LevelDBBlockCacheMiB)
	}
	if c.GCPercent <= 0 {
		return fmt.Errorf("gc_percent must be > 0, not %d", c.GCPercent)
	}
	if c.SnapshotInterval < 0 {
		return fmt.Errorf("snapshot_interval must be >= 0, not %d", c.SnapshotInterval)
	}
	if c.SnapshotKeepRecent <= 0 {
		return fmt.Errorf("snapshot_keep_recent must be > 0, not %d", c.SnapshotKeepRecent)
	}
	if err := CheckSignalVersion(c.SignalVersion); err != nil {
		return fmt.Errorf("signal_version: %w", err)
	}
	if c.LogFormat != LogFormatConsole && c.LogFormat != LogFormatJSON {
		return fmt.Errorf("log_format must be %q or %q, not %q", LogFormatConsole, LogFormatJSON, c.LogFormat)
	}
	if _, err := ParseLogLevel(c.LogLevel); err != nil {
		return err
	}
	if l := c.Web.Listen(); l != "" {
		if _, _, err := net.SplitHostPort(l); err != nil {
			return fmt.Errorf("[web] laddr must be host:port, \"\" or %q, not %q: %v", WebOff, c.Web.Laddr, err)
		}
	}
	for _, o := range c.Web.CORSAllowedOrigins {
		if !validOrigin(o) {
			return fmt.Errorf("[web] cors_allowed_origins: %q is not an origin (scheme://host[:port], http or https) or \"*\"", o)
		}
	}
	return nil
}

// validOrigin reports whether o is "*" or an origin as browsers send it: http or
// https, a host, an optional port, nothing else.
func validOrigin(o string) bool {
	if o == "*" {
		return true
	}
	u, err := url.Parse(o)
	return err == nil && (u.Scheme == "http" || u.Scheme == "https") && u.Host != "" && u.User == nil &&
		u.Path == "" && u.RawQuery == "" && u.Fragment == "" && u.String() == o
}

// ErrSignalVersion: a signal version this binary cannot signal, one it does not
// implement.
type ErrSignalVersion struct {
	Version uint32
	Newest  protocol.Version
}

func (e ErrSignalVersion) Error() string {
	return fmt.Sprintf("this binary implements protocol versions up to %d and cannot signal %d (0 signals %[1]d)", e.Newest, e.Version)
}

// CheckSignalVersion refuses a signal version past the newest this binary implements.
func CheckSignalVersion(v uint32) error {
	if protocol.Version(v) > protocol.Newest() {
		return ErrSignalVersion{Version: v, Newest: protocol.Newest()}
	}
	return nil
}

// Signal is the version a node set to signal v signals: v, or 0 for the newest this
// binary implements.
func Signal(v uint32) protocol.Version {
	if v == 0 {
		return protocol.Newest()
	}
	return protocol.Version(v)
}

// ParseLogLevel parses a zerolog level name; the empty string is an error.
func ParseLogLevel(s string) (zerolog.Level, error) {
	l, err := zerolog.ParseLevel(strings.ToLower(s))
	if err != nil || s == "" || l == zerolog.NoLevel {
		return zerolog.NoLevel, fmt.Errorf("log level must be trace, debug, info, warn or error, not %q", s)
	}
	return l, nil
}

// LoadAppConfig reads home/config/app.toml. A missing file gives DefaultAppConfig; an
// unknown key or a bad value is an error.
func LoadAppConfig(home string) (AppConfig, error) {
	c := DefaultAppConfig()
	path := AppConfigFile(home)
	if _, err := os.Stat(path); errors.Is(err, fs.ErrNotExist) {
		return c, nil
	}
	v := viper.New()
	v.SetConfigFile(path)
	v.SetConfigType("toml")
	if err := v.ReadInConfig(); err != nil {
		return c, fmt.Errorf("read %s: %w", path, err)
	}
	if err := v.UnmarshalExact(&c); err != nil {
		return c, fmt.Errorf("%s: %w", path, err)
	}
	if len(c.Web.CORSAllowedOrigins) == 0 {
		c.Web.CORSAllowedOrigins = nil // an empty list is none, as the default says it
	}
	if err := c.Validate(); err != nil {
		return c, fmt.Errorf("%s: %w", path, err)
	}
	return c, nil
}

var appConfigTemplate = template.Must(template.New("app.toml").Parse(`# ttld application settings. CometBFT's own settings are in config.toml beside this file.

# How many recent versions of the state tree are kept for historical queries and proofs.
# Older versions are pruned in the background after every commit; 0 keeps every version.
# A proof of the state after block H needs version H, so queries further back than this
# fail with "version not kept".
keep_recent = {{.KeepRecent}}

# The state tree's cache of IAVL nodes, in nodes (about 200 bytes each with their keys
# and values): the paths a block's reads and writes walk without reading the database.
iavl_cache_size = {{.IAVLCacheSize}}

# Read ahead, on the other cores, the documents the next block's cleanup deletes: after
# a commit, while the node waits for the next proposal, and when the block starts. It
# warms the node cache above and changes nothing a block does.
read_ahead = {{.ReadAhead}}

# The state database's goleveldb block cache, in MiB: decoded table blocks held in
# memory. A larger one lets a node with millions of documents find the nodes the cache
# above misses without reading and decoding disk blocks again.
leveldb_block_cache_mib = {{.LevelDBBlockCacheMiB}}

# The Go garbage collector's target, in percent: a collection starts when the heap has
# grown by this share of what the last one left live. Higher spends memory to collect
# less often (docs/BENCHMARKS.md, "The garbage collector's target"). The GOGC
# environment variable, when set, overrides it.
gc_percent = {{.GCPercent}}

# The protocol version this node's proposals signal, for upgrades in place
# (docs/STATE.md, "Protocol upgrades"): 0 signals the newest version this binary
# implements; an earlier one holds the node back until its operator is ready. The
# chain moves to the next version one epoch change after an epoch in which enough of
# its blocks signalled it. ttld start --signal-version overrides it.
signal_version = {{.SignalVersion}}

# Snapshots of the state for nodes that join by state sync (docs/STATE.md, "Snapshots";
# README, "Joining a network by state sync"): one is taken at every height that is a
# multiple of snapshot_interval, in the background while blocks go on, into
# data/snapshots; the snapshot_keep_recent newest are kept and offered to peers. 0 takes
# none (snapshots made by ttld snapshots export are offered all the same).
snapshot_interval = {{.SnapshotInterval}}
snapshot_keep_recent = {{.SnapshotKeepRecent}}

# Log output: "console" (readable, for people) or "json" (one object per line, for log
# collectors). The --log-format flag overrides it.
log_format = "{{.LogFormat}}"

# Lowest level logged: trace, debug, info, warn or error, for the application and
# CometBFT alike. The --log-level flag overrides it. This file is the one place for log
# settings: log_level and log_format in config.toml are not read.
log_level = "{{.LogLevel}}"

# The node's web view: an explorer of this chain (blocks, contracts, documents and their
# expiry, the cleanup backlog, epochs), read only. Keep it on loopback; "" or "off" turns
# it off.
[web]
laddr = "{{.Web.Laddr}}"

# The origins (scheme://host[:port], or "*" for any) whose pages may read the JSON API
# (/api/..., docs/API.md) from a browser. Empty, the default: none; a program that is
# not a browser page reads it whatever this says.
cors_allowed_origins = [{{range $i, $o := .Web.CORSAllowedOrigins}}{{if $i}}, {{end}}"{{$o}}"{{end}}]
`))

// SaveAppConfig writes c to home/config/app.toml with a comment for every key.
func SaveAppConfig(home string, c AppConfig) error {
	if err := c.Validate(); err != nil {
		return err
	}
	var b strings.Builder
	if err := appConfigTemplate.Execute(&b, c); err != nil {
		return err
	}
	return os.WriteFile(AppConfigFile(home), []byte(b.String()), 0o644)
}
