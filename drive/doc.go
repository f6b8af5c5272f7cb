// Package drive says how state is stored: one IAVL tree (cosmos/iavl v1 over
// cosmos-db), the key layout of every object (docs/STATE.md), reads and writes of
// identities, addresses, pools and address-balance records, and the operation counts a
// transition's fee is priced from.
//
// drive does no I/O of its own: the caller opens the database and hands it in, so the
// package stays inside the deterministic core.
package drive
