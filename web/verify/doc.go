//go:build js && wasm

// Command verify is the web view's proof check compiled to WebAssembly (GOOS=js
// GOARCH=wasm; make web-wasm writes web/static/verify.wasm, which the ttld binary
// embeds). It gives the page one function, ttldCheck(bundles, validators, pinnedChain,
// nowMs, page, shown), which runs check.Verify on a proof box's bundles against the
// validator set and chain the reader pinned (pinnedChain "": none yet), the freshness
// bound (proofs.DefaultMaxAge, the client's) against the browser's clock nowMs, the
// path of the page the browser is on, and the box's drawing as the page shows it (the
// JSON of its []check.Node, read from the DOM). It returns {verified, reason, chain_id,
// chain_shown (the chain id as check.Visible writes it), set_hash, height, app_hash,
// header_time (as check.When writes it against the browser's clock), age_ms,
// max_age_ms, followed (the headers of the trace the answers' header was followed
// through from the pinned set; 0: it names it), figures, mismatches, difference,
// drawing}: figures are the proven figures, difference the first place where the
// page's drawing differs from the check's (check.Difference), and drawing (the JSON of
// []check.Node) the box drawn from the proven answers, which the page's script
// displays in place of the page's own.
package main
