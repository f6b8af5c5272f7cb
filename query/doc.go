// Package query is the document query language of docs/PROOFS.md ("Document queries")
// and its planner: Parse reads a query's JSON against a document type and chooses the
// index that answers it, with the equal values, the range and the direction that cut
// the index's entries to the answer; ParseCount reads a count or sum and chooses the
// index whose count record answers it; ParseRanked reads a page of a ranked time-range
// index's groups in one window. Window queries name a window of a time-range index
// (Time-Range Index TTL), whose start is resolved at a block time (ResolveWindow); Matches checks a
// document against the where clauses. Every refusal is ErrInvalid, whose kind has a
// stable query code (proofs.QueryCodeOf).
//
// The node plans an answer with this package and a verifier re-plans it to know what the
// answer's proofs must cover, so the index choice is part of the protocol: its rules
// are looked up by protocol version (choice.go). The block pipeline never reads a query.
//
// Like protocol, below which it sits, it is deterministic: no clock, environment,
// randomness, files or network. drive turns a plan into key ranges (drive.QueryRanges).
package query
