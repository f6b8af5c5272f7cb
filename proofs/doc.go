// Package proofs builds and checks the Merkle proofs that let a client trust an
// abci_query answer without trusting the node that gave it.
//
// The whole application state is one IAVL tree. Every saved version H of that tree
// is the state after block H, and its root hash is the app hash the application
// returned when it committed block H. CometBFT records that app hash in the header
// of the next block, so:
//
//	state after block H is proven against the AppHash of header H+1.
//
// This package owns that rule (Verifier.AppHashAfter); no other package
// re-implements it. A query answered at version H is therefore checked in two steps:
//
//  1. the ICS23 proof in the answer computes a root from the key and value (or from
//     the absence of the key): one ProofOpType operation for a single key, one
//     RangeOpType operation (an ICS23 batch) for a range, see VerifyPresence,
//     VerifyAbsence and VerifyRange;
//  2. that root must equal the AppHash of header H+1, and header H+1 must be signed
//     by more than 2/3 of the voting power of the validator set it names, see
//     Verifier.
//
// Range answers (every key in [start, end)) are proven complete by a chain of
// proofs, carried as the entries of one ICS23 batch: the first proof locates the
// first key at or after start, and for each returned key k one proof shows which key
// immediately follows k (the absence of k++0x00, whose left neighbour is k and whose
// right neighbour is k's successor; ICS23 checks the two neighbours are adjacent
// leaves). No key in the covered range can be left out without breaking a link.
// Document queries (documents.go) prove several items against one root: the
// protocol version and contract they are read under, the query's start document, each
// index range the answer read (complete, by the chain above, from its start to its end
// or to the last entry the limit took) and each returned document's row. The client
// derives the ranges from the query itself and re-derives each document's index entry
// from its row, so a node can neither leave a document out nor swap one in.
//
// docs/PROOFS.md describes every query path and both proof layouts for clients
// written without this package.
package proofs
