//go:build js && wasm

// Command verify is the web view's proof check compiled to WebAssembly (GOOS=js
// GOARCH=wasm; make web-wasm writes web/static/verify.wasm, which the ttld binary
// embeds). It gives the page one function, ttldCheck(bundle, validators, shown), which
// runs package check on a page's proven answer against the validator set the reader
// pinned, and on what the page shows against the proven value (check.CheckShown), and
// returns {verified, height, present, app_hash} or {verified: false, reason}.
package main
