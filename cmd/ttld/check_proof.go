package main

import (
	"encoding/hex"
	"fmt"
	"io"
	"os"
	"time"

	"github.com/spf13/cobra"

	"github.com/ttld-dev/ttld/node"
	"github.com/ttld-dev/ttld/web/check"
)

// newCheckProofCmd is `ttld check-proof FILE`: a proof bundle checked offline.
func newCheckProofCmd() *cobra.Command {
	return &cobra.Command{
		Use:   "check-proof FILE",
		Short: "Check a proof bundle the web view served, offline, against the genesis validator set of --home",
		Long: `A proof bundle (the web view's /proof/... download) holds a query, the node's answer with
its proof and the commit of the header after the answer's height. check-proof checks,
with no network: the answer is about the key the query names, its proof leads to the
app hash of that header, the header is of the home's chain and its commit is signed by
more than two thirds of the home's genesis validator set, or, once the chain's set has
changed, by the set the bundle's trace of headers leads to from the genesis set
(docs/PROOFS.md, "Following the validator set"). It exits non-zero when any check
fails.`,
		Args: cobra.ExactArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			raw, err := os.ReadFile(args[0])
			if err != nil {
				return err
			}
			b, err := check.DecodeBundle(raw)
			if err != nil {
				return fmt.Errorf("%s is no proof bundle: %w", args[0], err)
			}
			vals, chainID, err := node.GenesisValidators(globalFlags(cmd).Home)
			if err != nil {
				return err
			}
			if b.ChainID != chainID {
				return errVerification{Err: fmt.Errorf("the bundle is of chain %q, the home's genesis of %q", b.ChainID, chainID)}
			}
			signers, err := check.Follow(b, check.Pin{ChainID: chainID, Validators: vals}, time.Now())
			if err != nil {
				return errVerification{Err: err}
			}
			r, err := check.Check(b, signers)
			if err != nil {
				return errVerification{Err: err}
			}
			word := "absence"
			if r.Present {
				word = "presence"
			}
			out := checkProofJSON{Path: b.Path, Key: hex.EncodeToString(r.Key), Present: r.Present, Height: r.Height, AppHash: hex.EncodeToString(r.AppHash), Verified: word}
			return printResult(cmd, out.text, out)
		},
	}
}

type checkProofJSON struct {
	Path     string `json:"path"`
	Key      string `json:"key"`
	Present  bool   `json:"present"`
	Height   int64  `json:"height"`
	AppHash  string `json:"app_hash"`
	Verified string `json:"verified"`
}

func (o checkProofJSON) text(w io.Writer) {
	fmt.Fprintf(w, "path: %s\nkey: %s\n", o.Path, o.Key)
	fmt.Fprintf(w, "VERIFIED %s at height %d (app hash %s of signed header %d)\n", o.Verified, o.Height, o.AppHash, o.Height+1)
}
