// Package keyring stores a client's ed25519 keys on disk, one JSON file per key under
// home/keyring/ (directory mode 0700, files 0600).
//
// NB: this is an unencrypted "test" keyring, like the Cosmos SDK's test backend: a
// private key is written in plain hex and anyone who can read the file can sign with
// it. It is meant for local chains and devnets, never for keys that hold real value.
package keyring
