// Package thirdparty checks ttld's abci_query answers, and the proof bundles of its web
// view's JSON API, the way a client written in another language would: from
// docs/PROOFS.md (and docs/API.md, docs/openapi.json) alone, with cosmos/ics23 for the
// Merkle proofs and CometBFT's types and light client for the signed header. It imports nothing of ttld (the
// lint pins that), so its tests show the document is enough; they run it against the
// worked examples of the document and against a real node.
package thirdparty
