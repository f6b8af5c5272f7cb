// Package check verifies, with no network, one proven answer a web page hands the
// browser: the node's abci_query answer, the signed header after its height and the
// validator set the reader pinned. The web view compiles it to WebAssembly (package
// web/verify), so that a page's answer is checked in the browser rather than trusted
// from the server; it is plain Go, tested natively.
package check
