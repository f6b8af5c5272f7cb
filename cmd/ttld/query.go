package main

import (
	"context"
	"encoding/hex"
	"errors"
	"fmt"
	"io"

	"github.com/spf13/cobra"

	"github.com/ttld-dev/ttld/client"
	"github.com/ttld-dev/ttld/proofs"
)

// errVerification is returned by a query with --prove whose answer does not verify;
// Err is the proofs or client error saying why.
type errVerification struct{ Err error }

func (e errVerification) Error() string { return "VERIFICATION FAILED: " + e.Err.Error() }
func (e errVerification) Unwrap() error { return e.Err }

func newQueryCmd() *cobra.Command {
	cmd := &cobra.Command{
		Use:   "query",
		Short: "Read state through abci_query, optionally with verified proofs",
	}
	f := cmd.PersistentFlags()
	f.Bool("prove", false, "verify the answer's proof against a header signed by the validators")
	f.Int64("height", 0, "state height to read (0: the latest)")
	f.Duration("max-age", proofs.DefaultMaxAge, "with --prove at the latest height: refuse a state whose signed header is older than this (0: no bound)")
	lightFlags(f)

	identity := &cobra.Command{
		Use:   "identity ID",
		Short: "An identity's balance, nonce and keys",
		Args:  cobra.ExactArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			id, err := identityPos(args[0])
			if err != nil {
				return err
			}
			return runQuery(cmd, func(ctx context.Context, c *client.Client, height int64, prove bool) (queryOutput, error) {
				idn, err := c.Identity(ctx, id, height, prove)
				if err != nil {
					return nil, err
				}
				return identityOutput(idn), nil
			})
		},
	}

	address := &cobra.Command{
		Use:   "address ADDR",
		Short: "An address's balance and nonce",
		Args:  cobra.ExactArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			a, err := addressPos(args[0])
			if err != nil {
				return err
			}
			return runQuery(cmd, func(ctx context.Context, c *client.Client, height int64, prove bool) (queryOutput, error) {
				st, err := c.Address(ctx, a, height, prove)
				if err != nil {
					return nil, err
				}
				return addressOutput(st), nil
			})
		},
	}

	changes := &cobra.Command{
		Use:   "address-changes ADDR --since H",
		Short: "An address's recorded balance changes since a height",
		Args:  cobra.ExactArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			a, err := addressPos(args[0])
			if err != nil {
				return err
			}
			since := flagUint64(cmd, "since")
			return runQuery(cmd, func(ctx context.Context, c *client.Client, height int64, prove bool) (queryOutput, error) {
				ch, err := c.AddressChanges(ctx, a, since, height, prove)
				if err != nil {
					return nil, err
				}
				return changesOutput(ch), nil
			})
		},
	}
	changes.Flags().Uint64("since", 0, "first block height of interest")

	cmd.AddCommand(identity, address, changes, newQueryContractCmd())
	cmd.AddCommand(newQueryPoolsCmds()...)
	cmd.AddCommand(newQueryDocumentCmds()...)
	cmd.AddCommand(newQueryWindowCmds()...)
	cmd.AddCommand(newQueryExpirationsCmd())
	cmd.AddCommand(newQueryRemovalsCmd())
	cmd.AddCommand(newQueryProtocolCmd())
	cmd.AddCommand(newQueryValidatorsCmds()...)
	return cmd
}

// queryOutput is a query's printable answer (-o json: the value itself).
type queryOutput interface {
	text(w io.Writer)
	// verdict is the presence or absence the answer shows, and its height.
	verdict() (present bool, height int64)
}

// runQuery dials the node, runs read and prints its answer. With --prove, headers are
// verified by CometBFT's light client from the home's genesis or the header --trust-height
// and --trust-hash name (lightOptions).
func runQuery(cmd *cobra.Command, read func(ctx context.Context, c *client.Client, height int64, prove bool) (queryOutput, error)) error {
	prove := flagBool(cmd, "prove")
	maxAge, err := cmd.Flags().GetDuration("max-age")
	if err != nil {
		return err
	}
	var opts client.Options
	switch {
	case maxAge < 0:
		return fmt.Errorf("--max-age %s: want a duration of 0 (no bound) or more", maxAge)
	case maxAge == 0:
		opts.MaxAge = -1
	default:
		opts.MaxAge = maxAge
	}
	if prove {
		if opts.Light, opts.ChainID, err = lightOptions(cmd); err != nil {
			return err
		}
	}
	c, err := dialNode(cmd, opts)
	if err != nil {
		return err
	}
	defer c.Close()
	ctx := cmd.Context()
	if ctx == nil {
		ctx = context.Background()
	}
	out, err := read(ctx, c, flagInt64(cmd, "height"), prove)
	if err != nil {
		var q client.ErrQuery
		if prove && !errors.As(err, &q) {
			return errVerification{Err: err}
		}
		return err
	}
	if !prove {
		return printResult(cmd, out.text, out)
	}
	present, height := out.verdict()
	word := "absence"
	if present {
		word = "presence"
	}
	return printResult(cmd, func(w io.Writer) {
		out.text(w)
		fmt.Fprintf(w, "VERIFIED %s at height %d (app hash of signed header %d)\n", word, height, height+1)
	}, verifiedOutput{Answer: out, Verified: word, Height: height})
}

// verifiedOutput is the JSON of a verified answer.
type verifiedOutput struct {
	Answer   any    `json:"answer"`
	Verified string `json:"verified"` // "presence" or "absence"
	Height   int64  `json:"height"`
}

// dialNode returns a client of the --node RPC (DefaultNode when empty).
func dialNode(cmd *cobra.Command, opts client.Options) (*client.Client, error) {
	remote := globalFlags(cmd).Node
	if remote == "" {
		remote = DefaultNode
	}
	return client.Dial(remote, opts)
}

type addressJSON struct {
	Address string `json:"address"`
	Present bool   `json:"present"`
	Balance uint64 `json:"balance"`
	Nonce   uint64 `json:"nonce"`
	Height  int64  `json:"height"`
}

func addressOutput(st client.AddressState) addressJSON {
	return addressJSON{Address: st.Address.String(), Present: st.Present, Balance: st.Balance, Nonce: st.Nonce, Height: st.Height}
}

func (o addressJSON) verdict() (bool, int64) { return o.Present, o.Height }

func (o addressJSON) text(w io.Writer) {
	fmt.Fprintf(w, "address: %s\n", o.Address)
	fmt.Fprintf(w, "height: %d\n", o.Height)
	if !o.Present {
		fmt.Fprintln(w, "present: false")
		return
	}
	fmt.Fprintf(w, "balance: %d\n", o.Balance)
	fmt.Fprintf(w, "nonce: %d\n", o.Nonce)
}

type identityJSON struct {
	ID      string   `json:"id"`
	Present bool     `json:"present"`
	Balance uint64   `json:"balance"`
	Nonce   uint64   `json:"nonce"`
	Keys    []string `json:"keys"`
	Height  int64    `json:"height"`
}

func identityOutput(idn client.IdentityState) identityJSON {
	keys := make([]string, len(idn.Keys))
	for i, k := range idn.Keys {
		keys[i] = hex.EncodeToString(k)
	}
	return identityJSON{ID: idn.ID.String(), Present: idn.Present, Balance: idn.Balance, Nonce: idn.Nonce.Last, Keys: keys, Height: idn.Height}
}

func (o identityJSON) verdict() (bool, int64) { return o.Present, o.Height }

func (o identityJSON) text(w io.Writer) {
	fmt.Fprintf(w, "identity: %s\n", o.ID)
	fmt.Fprintf(w, "height: %d\n", o.Height)
	if !o.Present {
		fmt.Fprintln(w, "present: false")
		return
	}
	fmt.Fprintf(w, "balance: %d\n", o.Balance)
	fmt.Fprintf(w, "nonce: %d\n", o.Nonce)
	for i, k := range o.Keys {
		fmt.Fprintf(w, "key %d: %s\n", i, k)
	}
}

type changeJSON struct {
	FromHeight uint64 `json:"from_height"`
	ToHeight   uint64 `json:"to_height"`
	Balance    uint64 `json:"balance"`
}

type changesJSON struct {
	Address string       `json:"address"`
	Since   uint64       `json:"since"`
	Changes []changeJSON `json:"changes"`
	Height  int64        `json:"height"`
}

func changesOutput(ch client.AddressChanges) changesJSON {
	out := changesJSON{Address: ch.Address.String(), Since: ch.Since, Changes: make([]changeJSON, len(ch.Changes)), Height: ch.Height}
	for i, c := range ch.Changes {
		out.Changes[i] = changeJSON{FromHeight: c.FromHeight, ToHeight: c.ToHeight, Balance: c.Balance}
	}
	return out
}

// verdict: the address's changes since Since are present (some) or proven absent.
func (o changesJSON) verdict() (bool, int64) { return len(o.Changes) > 0, o.Height }

func (o changesJSON) text(w io.Writer) {
	fmt.Fprintf(w, "address: %s\n", o.Address)
	fmt.Fprintf(w, "since: %d\n", o.Since)
	fmt.Fprintf(w, "height: %d\n", o.Height)
	if len(o.Changes) == 0 {
		fmt.Fprintln(w, "changes: none")
	}
	for _, c := range o.Changes {
		if c.FromHeight == c.ToHeight {
			fmt.Fprintf(w, "block %d: balance %d\n", c.ToHeight, c.Balance)
		} else {
			fmt.Fprintf(w, "blocks %d-%d: balance %d\n", c.FromHeight, c.ToHeight, c.Balance)
		}
	}
}
