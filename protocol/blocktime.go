package protocol

import "time"

// MaxBlockTimeMs is the last millisecond of the year 9999, the latest time a CometBFT
// header can carry (a protobuf Timestamp's range ends there).
const MaxBlockTimeMs = 253_402_300_799_999

// BlockTimeMs is how the application reads a header's time: milliseconds since
// 1970-01-01 UTC, a time before 1970 read as 0 and one past MaxBlockTimeMs as
// MaxBlockTimeMs (docs/STATE.md, "Block time").
func BlockTimeMs(t time.Time) uint64 {
	switch {
	case t.Before(time.Unix(0, 0)):
		return 0
	case t.After(time.UnixMilli(MaxBlockTimeMs)):
		// NB: compared as times, not milliseconds: UnixMilli is undefined past
		// int64 milliseconds and wraps.
		return MaxBlockTimeMs
	}
	return uint64(t.UnixMilli())
}
