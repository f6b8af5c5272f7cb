package node

import (
	"encoding/hex"
	"fmt"
	"strings"

	"github.com/cometbft/cometbft/config"
)

// StateSyncTrust is the header a joining node's light client starts from, and where
// it reads headers: what [statesync] in config.toml needs besides enable.
type StateSyncTrust struct {
	// Height and Hash name a header of the network the operator trusts, from a node
	// they trust (ttld statesync-config reads them from one).
	Height int64
	Hash   []byte
	// RPCServers are the light client's primary and witnesses, two at least; none
	// keeps the config's.
	RPCServers []string
	// Node is the URL the trusted header was read from: the RPC servers, named twice,
	// when neither RPCServers nor the config name any.
	Node string
}

// SetStateSync turns state sync on in home's config.toml with trust: the node, when it
// has no state yet, restores a snapshot offered by its peers, checked by a light client
// that starts from the trusted header, then follows the chain. The rest of the file is
// kept.
func SetStateSync(home string, trust StateSyncTrust) (*config.Config, error) {
	cfg, err := readConfig(home)
	if err != nil {
		return nil, err
	}
	cfg.StateSync.Enable = true
	cfg.StateSync.TrustHeight = trust.Height
	cfg.StateSync.TrustHash = strings.ToUpper(hex.EncodeToString(trust.Hash))
	switch {
	case len(trust.RPCServers) > 0:
		cfg.StateSync.RPCServers = trust.RPCServers
	case len(cfg.StateSync.RPCServers) == 0 && trust.Node != "":
		cfg.StateSync.RPCServers = []string{trust.Node, trust.Node}
	}
	if err := cfg.ValidateBasic(); err != nil {
		return nil, fmt.Errorf("[statesync]: %w", err)
	}
	config.WriteConfigFile(ConfigFile(cfg.RootDir), cfg)
	return cfg, nil
}
