package query

import "fmt"

// ErrorKind says what is wrong with a query; proofs.QueryCodeOf gives each its stable
// query code (docs/PROOFS.md lists them).
type ErrorKind uint8

const (
	NotJSON             ErrorKind = iota + 1 // the request is not JSON of the query's form
	UnknownField                             // a field the type does not have
	FieldNotIndexed                          // no index serves the where and orderBy clauses
	UnsupportedOperator                      // an operator that does not exist or not on that field
	WrongValueType                           // a value that is not of its field's type
	LimitTooLarge                            // limit outside 0..MaxQueryLimit
	BothStarts                               // startAt and startAfter together
	// WindowExpired: a window of a ttl'd time-range index past its horizon (Time-Range Index TTL:
	// "byStart rejects starts past the horizon").
	WindowExpired
)

// ErrInvalid refuses a query. Field names the field it is about, when one is.
type ErrInvalid struct {
	Kind   ErrorKind
	Field  string
	Reason string
}

func (e ErrInvalid) Error() string {
	if e.Field == "" {
		return "invalid query: " + e.Reason
	}
	return fmt.Sprintf("invalid query: %s: %s", e.Field, e.Reason)
}
