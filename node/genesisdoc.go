package node

import (
	"errors"
	"fmt"
	"path/filepath"

	"github.com/cometbft/cometbft/config"
	cmttypes "github.com/cometbft/cometbft/types"
)

// GenesisFile is the path of genesis.json in a home directory.
func GenesisFile(home string) string {
	return filepath.Join(home, config.DefaultConfigDir, config.DefaultGenesisJSONName)
}

// LoadGenesis reads and validates home's genesis document.
func LoadGenesis(home string) (*cmttypes.GenesisDoc, error) {
	return cmttypes.GenesisDocFromFile(GenesisFile(home))
}

// GenesisValidators returns the genesis validator set and the chain id: the trusted set
// a client checks a header's commit against (proofs.Verifier).
func GenesisValidators(home string) (*cmttypes.ValidatorSet, string, error) {
	gen, err := LoadGenesis(home)
	if err != nil {
		return nil, "", err
	}
	if len(gen.Validators) == 0 {
		return nil, "", errors.New("genesis has no validators: the set comes from InitChain and cannot be read from the file")
	}
	vals := make([]*cmttypes.Validator, len(gen.Validators))
	for i, v := range gen.Validators {
		vals[i] = cmttypes.NewValidator(v.PubKey, v.Power)
	}
	set := cmttypes.NewValidatorSet(vals)
	if err := set.ValidateBasic(); err != nil {
		return nil, "", fmt.Errorf("genesis validators: %w", err)
	}
	return set, gen.ChainID, nil
}
