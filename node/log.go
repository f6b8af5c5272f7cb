package node

import (
	"encoding/hex"
	"fmt"
	"io"
	"os"
	"time"

	cmtlog "github.com/cometbft/cometbft/libs/log"
	"github.com/mattn/go-isatty"
	"github.com/rs/zerolog"
)

// NewLogger returns a logger at level writing to w: zerolog's console format for
// people (in colour when w is a terminal), or one JSON object per line when json is set.
func NewLogger(w io.Writer, json bool, level zerolog.Level) zerolog.Logger {
	if !json {
		f, isFile := w.(*os.File)
		color := isFile && isatty.IsTerminal(f.Fd())
		w = zerolog.ConsoleWriter{Out: w, TimeFormat: time.TimeOnly, NoColor: !color}
	}
	return zerolog.New(w).Level(level).With().Timestamp().Logger()
}

// CometLogger adapts l to CometBFT's logger, so that CometBFT logs in the same format
// and stream as the application.
func CometLogger(l zerolog.Logger) cmtlog.Logger { return cometLogger{l} }

type cometLogger struct{ l zerolog.Logger }

func (c cometLogger) Debug(msg string, keyvals ...any) {
	c.l.Debug().Fields(fields(keyvals)).Msg(msg)
}

func (c cometLogger) Info(msg string, keyvals ...any) {
	c.l.Info().Fields(fields(keyvals)).Msg(msg)
}

func (c cometLogger) Error(msg string, keyvals ...any) {
	c.l.Error().Fields(fields(keyvals)).Msg(msg)
}

func (c cometLogger) With(keyvals ...any) cmtlog.Logger {
	return cometLogger{c.l.With().Fields(fields(keyvals)).Logger()}
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
