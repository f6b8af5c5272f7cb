package load

import (
	"encoding/hex"
	"encoding/json"
	"fmt"
	"path/filepath"

	"github.com/cometbft/cometbft/config"
	cmttypes "github.com/cometbft/cometbft/types"

	"github.com/ttld-dev/ttld/genesis"
)

// DefaultSignerBalance is the credits AddSigners gives each signer's address and each
// signer's identity unless told otherwise: 10^13, enough for a minute of document
// creates at saturation (each pays about 10^7 for storage and processing), and a
// hundred thousand signers' worth (2 × 10^18) still fits the u64 supply.
const DefaultSignerBalance uint64 = 10_000_000_000_000

// GenesisFile is the genesis file of a CometBFT home directory.
func GenesisFile(home string) string {
	return filepath.Join(home, config.DefaultConfigDir, config.DefaultGenesisJSONName)
}

// ErrSignersPresent: the genesis funds signers of this seed already.
type ErrSignersPresent struct {
	File    string
	Address string
}

func (e ErrSignersPresent) Error() string {
	return fmt.Sprintf("%s funds load signer address %s already: AddSigners runs once on a freshly initialised home", e.File, e.Address)
}

// AddSigners funds signers 0..n-1 of seed in the genesis of home, a home that `ttld
// init` wrote and no node has started from: each signer's address gets balance
// credits, and an identity with the signer's key as key 0 is created with balance
// credits. The app state is validated (genesis.Decode) before the file is rewritten.
func AddSigners(home string, seed []byte, n int, balance uint64) error {
	if n < 1 || balance < 1 {
		return fmt.Errorf("load: %d signers of %d credits: want at least one of at least one credit", n, balance)
	}
	file := GenesisFile(home)
	gen, err := cmttypes.GenesisDocFromFile(file)
	if err != nil {
		return fmt.Errorf("load: read genesis: %w", err)
	}
	state, err := genesis.Decode(gen.AppState)
	if err != nil {
		return fmt.Errorf("load: %s: %w", file, err)
	}
	first := DeriveSigner(seed, 0).Address.String()
	for _, a := range state.Addresses {
		if a.Address == first {
			return ErrSignersPresent{File: file, Address: first}
		}
	}
	for _, s := range DeriveSigners(seed, n) {
		state.Addresses = append(state.Addresses, genesis.Address{Address: s.Address.String(), Balance: balance})
		state.Identities = append(state.Identities, genesis.Identity{ID: s.Identity.String(), Balance: balance, Keys: []string{hex.EncodeToString(s.Pub())}})
	}
	raw := state.Encode()
	if _, err := genesis.Decode(raw); err != nil {
		return fmt.Errorf("load: genesis with %d signers: %w", n, err)
	}
	gen.AppState = json.RawMessage(raw)
	if err := gen.ValidateAndComplete(); err != nil {
		return fmt.Errorf("load: genesis: %w", err)
	}
	if err := gen.SaveAs(file); err != nil {
		return fmt.Errorf("load: write genesis: %w", err)
	}
	return nil
}
