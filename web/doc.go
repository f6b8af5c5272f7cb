// Package web is the node's own web view: an explorer of the chain served by `ttld
// start` on its own loopback listener (app.toml's [web] laddr). It shows the overview
// (chain, validators, epoch, pools, cleanup backlog, the latest blocks and
// transactions), blocks, transactions (decoded, with their result codes, fees by parts
// and events), identities with their contracts and transactions, addresses,
// validators, the contracts, each with its types and time to live, documents with
// their expiry and count, and epochs, with pictures drawn on the server as SVG from
// chain data. Every id a page shows links to its page, and a search goes from an id or
// a height to it. Lists over the chain's history come from CometBFT's transaction
// index (index.go); the overview and the blocks list refresh as blocks come, from the
// node's event bus (live.go).
//
// The view is read only: every page reads the node through CometBFT's RPC and the ttld
// query paths (package client) and nothing else; it accepts GET and HEAD, validates and
// bounds every input, and answers within a timeout. Pages are html/template, so every
// value is escaped, with their styles embedded in the binary (no build step, no CDN),
// under a strict Content-Security-Policy. A page's state figures sit in a proof box:
// the server writes the box with web/check's drawing of the answers it read, and the
// browser draws it again from the proven answers, compares the two and shows its own
// (docs/PROOFS.md, "What VERIFIED means"); what has no proof says so.
package web
