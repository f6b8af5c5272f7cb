package node

import (
	"encoding/hex"
	"errors"
	"fmt"
	"io"
	"net"
	"os"
	"sync/atomic"
	"time"

	cmtlog "github.com/cometbft/cometbft/libs/log"
	"github.com/mattn/go-isatty"
	"github.com/rs/zerolog"
)

// Log timestamps carry the date and milliseconds: JSON in RFC 3339 with milliseconds
// and the zone offset, the console format as date and time of day.
const (
	LogTimeFormat        = "2006-01-02T15:04:05.000Z07:00"
	ConsoleLogTimeFormat = "2006-01-02 15:04:05.000"
)

// NB: zerolog reads the timestamp format from a package variable, for every logger in
// the process. It is set once here, before any logger exists, rather than in
// NewLogger, where setting it would race with loggers already writing.
func init() { zerolog.TimeFieldFormat = LogTimeFormat }

// NewLogger returns a logger at level writing to w: zerolog's console format for
// people (in colour when w is a terminal), or one JSON object per line when json is set.
// The level applies to CometBFT's messages too (CometLogger): app.toml's log_level is
// the one log setting; config.toml's log_level and log_format are not read.
func NewLogger(w io.Writer, json bool, level zerolog.Level) zerolog.Logger {
	if !json {
		f, isFile := w.(*os.File)
		color := isFile && isatty.IsTerminal(f.Fd())
		w = zerolog.ConsoleWriter{Out: w, TimeFormat: ConsoleLogTimeFormat, NoColor: !color}
	}
	return zerolog.New(w).Level(level).With().Timestamp().Logger()
}

// CometLogger adapts l to CometBFT's logger, so that CometBFT logs in the same format
// and stream as the application.
func CometLogger(l zerolog.Logger) cmtlog.Logger { return cometLogger{l: l} }

// nodeCometLogger is CometLogger for a node that sets stopping before it stops
// CometBFT: from then on, the errors CometBFT logs because its listeners close
// (stoppedListener) are logged at debug level, as they are what a clean stop does.
// Once halted is set (the application halted the node: the chain moved past this
// binary, or a state sync cannot end, which the application logs in one line), every error CometBFT logs is at
// debug level: its consensus stops on the application's refusal, with a stack trace,
// as designed.
func nodeCometLogger(l zerolog.Logger, stopping, halted *atomic.Bool) cmtlog.Logger {
	return cometLogger{l: l, stopping: stopping, halted: halted}
}

type cometLogger struct {
	l        zerolog.Logger
	stopping *atomic.Bool // nil: never
	halted   *atomic.Bool // nil: never
}

// NB: CometBFT logs a great deal at debug level; the fields are rendered only when the
// level is enabled, as rendering calls String on every value.
func (c cometLogger) Debug(msg string, keyvals ...any) { emit(c.l.Debug(), msg, keyvals) }

func (c cometLogger) Info(msg string, keyvals ...any) {
	if perRequest(msg) {
		emit(c.l.Debug(), msg, keyvals)
		return
	}
	emit(c.l.Info(), msg, keyvals)
}

// perRequest reports whether CometBFT logs msg at info level for every request a
// client makes: the websocket RPC server's "WSJSONRPC" line (rpc/jsonrpc/server,
// ws_handler.go) for each call, a transaction broadcast included. Under load that is one
// line a transaction, written by the goroutine that hands the connection's requests to
// the mempool one after the other (about a twentieth of the node's time at saturation):
// it is logged at debug, as the HTTP server logs each of its requests.
func perRequest(msg string) bool { return msg == "WSJSONRPC" }

func (c cometLogger) Error(msg string, keyvals ...any) {
	if (c.stopping != nil && c.stopping.Load() && stoppedListener(msg, keyvals)) || (c.halted != nil && c.halted.Load()) {
		emit(c.l.Debug(), msg, keyvals)
		return
	}
	emit(c.l.Error(), msg, keyvals)
}

// stoppedListener reports whether CometBFT logs msg because one of its listeners was
// closed under it, which node.Stop does: the P2P switch's accept routine ending on a
// closed transport (p2p/switch.go), or the RPC server's Serve returning a closed
// listener's error (node/node.go). Any other error, and these messages with another
// cause, are not.
func stoppedListener(msg string, keyvals []any) bool {
	switch msg {
	case "Stopped accept routine, as transport is closed":
		return true
	case "Error serving server", "Error serving server with TLS":
		for i := 1; i < len(keyvals); i += 2 {
			if err, ok := keyvals[i].(error); ok && keyvals[i-1] == "err" && errors.Is(err, net.ErrClosed) {
				return true
			}
		}
	}
	return false
}

func emit(e *zerolog.Event, msg string, keyvals []any) {
	if e.Enabled() {
		e.Fields(fields(keyvals)).Msg(msg)
	}
}

func (c cometLogger) With(keyvals ...any) cmtlog.Logger {
	return cometLogger{l: c.l.With().Fields(fields(keyvals)).Logger(), stopping: c.stopping, halted: c.halted}
}

// fields turns CometBFT's key-value list into zerolog fields. Values are rendered as
// CometBFT's own logger renders them (errors and Stringers as text, bytes as hex), so
// that no large structure is marshalled to JSON; a key without a value gets
// "(MISSING)".
func fields(keyvals []any) []any {
	if len(keyvals) == 0 {
		return nil
	}
	out := make([]any, 0, len(keyvals)+len(keyvals)%2)
	for i := 0; i < len(keyvals); i += 2 {
		key := fmt.Sprint(keyvals[i])
		var v any = "(MISSING)"
		if i+1 < len(keyvals) {
			v = keyvals[i+1]
		}
		out = append(out, key, render(v))
	}
	return out
}

// render makes v loggable. NB: a typed nil pointer's String method may panic; such a
// value is logged as "<nil>", as go-logfmt does for CometBFT's own logger.
func render(v any) (out any) {
	defer func() {
		if recover() != nil {
			out = "<nil>"
		}
	}()
	switch x := v.(type) {
	case error:
		return x.Error()
	case fmt.Stringer:
		return x.String()
	case []byte:
		return hex.EncodeToString(x)
	case string, bool, int, int8, int16, int32, int64, uint, uint8, uint16, uint32, uint64, float32, float64, time.Duration, time.Time:
		return x
	default:
		return fmt.Sprintf("%+v", x)
	}
}
