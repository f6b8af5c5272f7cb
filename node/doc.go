// Package node is the I/O shell that runs the chain in a process: it writes a new home
// directory (Init), and starts and stops CometBFT in process around the abci
// application, its IAVL store and their databases (Start, Node.Stop).
//
// A home directory holds:
//
//	config/config.toml            CometBFT's settings (RPC, P2P, consensus, instrumentation)
//	config/app.toml               ttld's own settings (AppConfig)
//	config/genesis.json           the genesis document, app_state as genesis.AppState
//	config/node_key.json          the P2P identity
//	config/priv_validator_key.json  the validator's consensus key
//	data/                         CometBFT's block and state stores, the privval state,
//	                              and application.db (the state tree)
//	keyring/                      client keys (see package keyring), among them "dev"
//
// Every listener is bound to 127.0.0.1 unless config.toml says otherwise.
package node
