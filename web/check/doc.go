// Package check verifies, with no network, the proven answers a web page hands the
// browser, and writes the figures the page shows of them: Check verifies one bundle
// (the node's abci_query answer and the signed header after its height) against a
// validator set; Read writes the figures of a set of answers about one state, with the
// formatting functions of format.go that the server's templates use too; Verify checks
// a proof box's bundles against the reader's pin and freshness bound and compares the
// figures the page displays with the proven ones (docs/PROOFS.md, "Proof bundles (the
// web view)"). The web view compiles it to WebAssembly (package web/verify), so that a
// page's figures are checked in the browser rather than trusted from the server; it is
// plain Go, tested natively.
package check
