// Command ttld runs and uses a ttld chain: init, start, devnet, keys, tx and query.
//
// Every command accepts the global flags --home, --node, -o/--output, --log-format and
// --log-level (root.go). Servers bind to 127.0.0.1 unless config.toml or a flag says
// otherwise.
package main
