// Package check verifies, with no network, the proven answers a web page hands the
// browser, and writes the figures the page shows of them: Check verifies one bundle
// (the node's abci_query answer and the signed header after its height) against a
// validator set; Read writes the figures of a set of answers about one state, with the
// formatting functions of format.go that the server uses too, and Draw the whole proof
// box around them (draw.go: its labels, units, links and bars, as a tree of nodes the
// server writes as HTML and the browser draws); Verify checks a proof box's bundles
// against the reader's pin and freshness bound, and compares what the page displays of
// the box with what it draws from the proven answers, its figures first, then the
// whole drawing (docs/PROOFS.md, "What VERIFIED means"). The web view compiles it to
// WebAssembly (package web/verify), so that a page's boxes are checked and drawn in the
// browser rather than trusted from the server; it is plain Go, tested natively.
package check
