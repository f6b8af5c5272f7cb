package main

import (
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"

	"github.com/spf13/cobra"
	"github.com/spf13/pflag"

	"github.com/ttld-dev/ttld/client"
	"github.com/ttld-dev/ttld/node"
	"github.com/ttld-dev/ttld/proofs"
)

// The light client's flags (docs/PROOFS.md, "Following the validator set").
const (
	flagTrustHeight = "trust-height"
	flagTrustHash   = "trust-hash"
	flagTrustPeriod = "trust-period"
	flagWitness     = "witness"
)

// LightDir is where a home keeps the light client's trusted stores: the headers it has
// verified, one store per root of trust (lightStore), each chain's under its chain id.
func LightDir(home string) string { return filepath.Join(home, "light") }

// lightStore names the trusted store of a root of trust: the genesis file's hash, or
// the trusted header's. A chain started again under the same chain id (ttld devnet on
// the same home) has another genesis, so its headers are never checked against the
// ones an earlier chain left in the store.
func lightStore(home string, root []byte) string {
	return filepath.Join(LightDir(home), hex.EncodeToString(root[:8]))
}

// lightFlags adds the light client's flags to f.
func lightFlags(f *pflag.FlagSet) {
	f.Int64(flagTrustHeight, 0, "with --prove: the height of a header to trust instead of the home's genesis (with --trust-hash), from a source you trust")
	f.String(flagTrustHash, "", "with --prove: the hash of the header at --trust-height, hex")
	f.Duration(flagTrustPeriod, proofs.DefaultTrustingPeriod, "with --prove: how old the newest trusted header may be before it must be trusted anew")
	f.StringSlice(flagWitness, nil, "with --prove: RPC addresses of other nodes every verified header is compared with (a disagreement is reported); none: the --node alone")
}

// lightOptions are the light client's options for a verified read: its trusted store
// in the home (LightDir), anchored at the home's genesis (its validators and initial
// height) or at the header --trust-height and --trust-hash name, with the --witness
// nodes. A home without a genesis and no trusted header is an error: a set the node
// names is no root of trust.
func lightOptions(cmd *cobra.Command) (*client.LightOptions, string, error) {
	home := globalFlags(cmd).Home
	period, err := cmd.Flags().GetDuration(flagTrustPeriod)
	if err != nil {
		return nil, "", err
	}
	witnesses, err := cmd.Flags().GetStringSlice(flagWitness)
	if err != nil {
		return nil, "", err
	}
	opts := &client.LightOptions{TrustingPeriod: period, Witnesses: witnesses, TrustHeight: flagInt64(cmd, flagTrustHeight)}
	if s := flagString(cmd, flagTrustHash); s != "" || opts.TrustHeight != 0 {
		h, err := hex.DecodeString(s)
		if err != nil || len(h) != 32 || opts.TrustHeight <= 0 {
			return nil, "", errUsage{Flag: flagTrustHash, Value: s, Want: "--trust-height H and --trust-hash of header H, 64 hex digits"}
		}
		opts.TrustHash = h
	}
	var chainID string
	root := opts.TrustHash
	if home != "" {
		raw, err := os.ReadFile(node.GenesisFile(home))
		switch {
		case err == nil:
			gen, err := node.LoadGenesis(home)
			if err != nil {
				return nil, "", err
			}
			vals, id, err := node.GenesisValidators(home)
			if err != nil {
				return nil, "", err
			}
			opts.Genesis, opts.InitialHeight, chainID = vals, gen.InitialHeight, id
			if root == nil {
				sum := sha256.Sum256(raw)
				root = sum[:]
			}
		case !errors.Is(err, fs.ErrNotExist):
			return nil, "", err
		}
		if root != nil {
			opts.Dir = lightStore(home, root)
		}
	}
	if opts.Genesis == nil && opts.TrustHeight == 0 {
		return nil, "", fmt.Errorf("--prove needs a root of trust: a --home holding the chain's genesis (ttld init's, or ttld testnet's client home), or --trust-height and --trust-hash of a header from a source you trust")
	}
	return opts, chainID, nil
}
