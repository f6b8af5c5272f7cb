//go:build js && wasm

// Command verify is the web view's proof check compiled to WebAssembly (GOOS=js
// GOARCH=wasm; make web-wasm writes web/static/verify.wasm, which the ttld binary
// embeds). It gives the page one function, ttldCheck(bundles, validators, pinnedChain,
// nowMs, page, shown), which runs check.Verify on a proof box's bundles against the
// validator set and chain the reader pinned (pinnedChain "": none yet), the freshness
// bound (proofs.DefaultMaxAge, the client's) against the browser's clock nowMs, the
// path of the page the browser is on, and the figures the page shows (JSON: each
// figure's name with the texts of its elements). It
// returns {verified, reason, chain_id, chain_shown (the chain id as check.Visible
// writes it), set_hash, height, app_hash, header_time (as check.When writes it against
// the browser's clock), age_ms, max_age_ms, followed (the headers of the trace the
// answers' header was followed through from the pinned set; 0: it names it), figures,
// mismatches}: figures are the proven figures written as the page must show them,
// which the page's script writes into its elements.
package main
