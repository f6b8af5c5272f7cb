package main

import (
	"context"
	"crypto/ed25519"
	"encoding/hex"
	"errors"
	"fmt"
	"io"
	"strings"

	"github.com/spf13/cobra"

	"github.com/ttld-dev/ttld/client"
	"github.com/ttld-dev/ttld/keyring"
	"github.com/ttld-dev/ttld/protocol"
)

// errRefused is returned by a tx command whose transaction the node refused, after
// the result is printed, so the command exits non-zero.
type errRefused struct {
	Code protocol.Code
	Log  string
}

func (e errRefused) Error() string {
	return fmt.Sprintf("transaction refused with code %d: %s", e.Code, e.Log)
}

// What became of a broadcast transaction, as tx commands print it (txOutput.Status).
const (
	// txCommitted: a block included it; Code is the block's and Fee what it charged.
	txCommitted = "committed"
	// txAccepted: CheckTx accepted it into the mempool (no --commit); no block has
	// executed it yet, so its fee is not known.
	txAccepted = "accepted"
	// txRefused: CheckTx refused it; it is in no block and paid nothing.
	txRefused = "refused"
	// txCommitTimeout: it was sent with --commit and the wait for its block ended; it
	// may still commit.
	txCommitTimeout = "commit_timeout"
	// txInCache: the node already holds these exact bytes: pending or included.
	txInCache = "already_in_cache"
)

// txOutput is what a tx command prints (-o json: this object).
type txOutput struct {
	Status    string `json:"status"`
	Code      uint32 `json:"code"`
	Log       string `json:"log,omitempty"`
	Committed bool   `json:"committed"`
	Height    int64  `json:"height,omitempty"`
	// Fee is what the block charged; null while no block has executed the transaction.
	Fee *uint64 `json:"fee"`
	// FeeEstimate is the fee CheckTx computed (its GasWanted), when the node reports it.
	FeeEstimate uint64 `json:"fee_estimate,omitempty"`
	TxHash      string `json:"tx_hash"`
	Nonce       uint64 `json:"nonce"`
	Identity    string `json:"identity,omitempty"`
}

func (o txOutput) text(w io.Writer) {
	fmt.Fprintf(w, "status: %s\n", o.Status)
	switch o.Status {
	case txCommitTimeout:
		fmt.Fprintln(w, "the wait for the block ended before the transaction was included: it may still commit; look it up by its hash before sending it again")
	case txInCache:
		fmt.Fprintln(w, "the node already holds this exact transaction: it is pending in the mempool and will be included, or has been already")
	default:
		fmt.Fprintf(w, "code: %d\n", o.Code)
		if o.Code != 0 {
			fmt.Fprintf(w, "error: %s\n", o.Log)
		}
	}
	switch {
	case o.Fee != nil:
		fmt.Fprintf(w, "fee paid: %d\n", *o.Fee)
	case o.Status == txRefused:
		fmt.Fprintln(w, "fee: none (refused before any block: nothing was charged)")
	default:
		fmt.Fprintln(w, "fee: not known until a block executes the transaction")
	}
	if o.FeeEstimate != 0 {
		fmt.Fprintf(w, "fee estimate: %d (CheckTx)\n", o.FeeEstimate)
	}
	switch {
	case o.Committed:
		fmt.Fprintf(w, "height: %d\n", o.Height)
	case o.Status == txAccepted:
		fmt.Fprintln(w, "height: not committed yet (broadcast_tx_sync; pass --commit to wait for the block)")
	}
	fmt.Fprintf(w, "tx hash: %s\n", o.TxHash)
	fmt.Fprintf(w, "nonce: %d\n", o.Nonce)
	if o.Identity != "" {
		fmt.Fprintf(w, "identity: %s\n", o.Identity)
	}
}

func newTxCmd() *cobra.Command {
	cmd := &cobra.Command{
		Use:   "tx",
		Short: "Sign and broadcast a state transition",
	}
	f := cmd.PersistentFlags()
	f.String("from", "", "name of the signing key in the home's keyring")
	f.Bool("commit", false, "wait for the block that includes the transaction (broadcast_tx_commit)")
	f.Uint64("nonce", 0, "signer nonce to use (0: the signer's last nonce plus one)")
	f.String("chain-id", "", "chain id to sign for (empty: the node's)")
	cmd.AddCommand(newTxIdentityCmd(), newTxAddressCmd())
	return cmd
}

func newTxIdentityCmd() *cobra.Command {
	cmd := &cobra.Command{Use: "identity", Short: "Identity transitions"}

	create := &cobra.Command{
		Use:   "create --from KEY --amount N [--keys HEX,...]",
		Short: "Create an identity funded from the key's address",
		Args:  cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			amount, err := amountArg(cmd)
			if err != nil {
				return err
			}
			key, err := txKey(cmd)
			if err != nil {
				return err
			}
			keys, err := parsePubKeys(flagStringSlice(cmd, "keys"), key.Pub)
			if err != nil {
				return err
			}
			t := &protocol.IdentityCreate{PubKey: key.Pub, Amount: amount, Keys: keys}
			return runTx(cmd, t, key.Priv, func(o *txOutput) {
				o.Identity = protocol.NewIdentityID(key.Address(), t.Nonce).String()
			})
		},
	}
	amountFlag(create)
	create.Flags().StringSlice("keys", nil, "public keys of the new identity, hex, comma separated (default: the --from key's)")

	topUp := &cobra.Command{
		Use:   "top-up ID --amount N --from KEY",
		Short: "Move credits from the key's address to an identity",
		Args:  cobra.ExactArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			id, err := identityPos(args[0])
			if err != nil {
				return err
			}
			amount, err := amountArg(cmd)
			if err != nil {
				return err
			}
			key, err := txKey(cmd)
			if err != nil {
				return err
			}
			t := &protocol.IdentityTopUp{PubKey: key.Pub, Identity: id, Amount: amount}
			return runTx(cmd, t, key.Priv, nil)
		},
	}
	amountFlag(topUp)

	transfer := &cobra.Command{
		Use:   "transfer --identity ID --to ID --amount N --from KEY [--key-index 0]",
		Short: "Move credits between identities",
		Args:  cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			from, err := identityArg(cmd, "identity")
			if err != nil {
				return err
			}
			to, err := identityArg(cmd, "to")
			if err != nil {
				return err
			}
			amount, err := amountArg(cmd)
			if err != nil {
				return err
			}
			key, err := txKey(cmd)
			if err != nil {
				return err
			}
			t := &protocol.IdentityCreditTransfer{Identity: from, KeyIndex: flagUint8(cmd, "key-index"), Recipient: to, Amount: amount}
			return runTx(cmd, t, key.Priv, nil)
		},
	}
	identitySignerFlags(transfer)
	transfer.Flags().String("to", "", "recipient identity id")

	toAddress := &cobra.Command{
		Use:   "transfer-to-address --identity ID --to ADDR --amount N --from KEY [--key-index 0]",
		Short: "Move credits from an identity to an address",
		Args:  cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			from, err := identityArg(cmd, "identity")
			if err != nil {
				return err
			}
			to, err := addressArg(cmd, "to")
			if err != nil {
				return err
			}
			amount, err := amountArg(cmd)
			if err != nil {
				return err
			}
			key, err := txKey(cmd)
			if err != nil {
				return err
			}
			t := &protocol.IdentityCreditTransferToAddress{Identity: from, KeyIndex: flagUint8(cmd, "key-index"), Recipient: to, Amount: amount}
			return runTx(cmd, t, key.Priv, nil)
		},
	}
	identitySignerFlags(toAddress)
	toAddress.Flags().String("to", "", "recipient address")

	cmd.AddCommand(create, topUp, transfer, toAddress)
	return cmd
}

func newTxAddressCmd() *cobra.Command {
	cmd := &cobra.Command{Use: "address", Short: "Address transitions"}
	transfer := &cobra.Command{
		Use:   "transfer --to ADDR --amount N --from KEY",
		Short: "Move credits from the key's address to another address",
		Args:  cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			to, err := addressArg(cmd, "to")
			if err != nil {
				return err
			}
			amount, err := amountArg(cmd)
			if err != nil {
				return err
			}
			key, err := txKey(cmd)
			if err != nil {
				return err
			}
			t := &protocol.AddressFundsTransfer{PubKey: key.Pub, Recipient: to, Amount: amount}
			return runTx(cmd, t, key.Priv, nil)
		},
	}
	amountFlag(transfer)
	transfer.Flags().String("to", "", "recipient address")
	cmd.AddCommand(transfer)
	return cmd
}

func amountFlag(cmd *cobra.Command) {
	cmd.Flags().Uint64("amount", 0, "credits to move")
}

func identitySignerFlags(cmd *cobra.Command) {
	amountFlag(cmd)
	cmd.Flags().String("identity", "", "signing identity id")
	cmd.Flags().Uint8("key-index", 0, "index of the identity key --from holds")
}

// txKey loads the --from key of the home's keyring.
func txKey(cmd *cobra.Command) (keyring.Key, error) {
	name := flagString(cmd, "from")
	if name == "" {
		return keyring.Key{}, errMissingFlag{"from"}
	}
	return keyring.Open(globalFlags(cmd).Home).Get(name)
}

// parsePubKeys reads hex ed25519 public keys; none given means def alone.
func parsePubKeys(in []string, def ed25519.PublicKey) ([]ed25519.PublicKey, error) {
	if len(in) == 0 {
		return []ed25519.PublicKey{def}, nil
	}
	out := make([]ed25519.PublicKey, len(in))
	for i, s := range in {
		b, err := hex.DecodeString(strings.TrimSpace(s))
		if err != nil || len(b) != ed25519.PublicKeySize {
			return nil, errUsage{Flag: "keys", Value: s, Want: fmt.Sprintf("ed25519 public keys of %d hex digits each", 2*ed25519.PublicKeySize)}
		}
		out[i] = b
	}
	return out, nil
}

// runTx signs t (with --nonce, or the signer's next nonce), broadcasts it and prints
// the result; extra adds to the output once the nonce is known.
func runTx(cmd *cobra.Command, t protocol.Transition, priv ed25519.PrivateKey, extra func(*txOutput)) error {
	if n := flagUint64(cmd, "nonce"); n != 0 {
		t.SetNonce(n)
	}
	c, err := dialNode(cmd, client.Options{ChainID: flagString(cmd, "chain-id")})
	if err != nil {
		return err
	}
	ctx := cmd.Context()
	if ctx == nil {
		ctx = context.Background()
	}
	tx, err := c.Sign(ctx, t, priv)
	if err != nil {
		return err
	}
	res, err := c.Broadcast(ctx, tx, flagBool(cmd, "commit"))
	out := txOutput{
		Code:        uint32(res.Code),
		Log:         res.Log,
		Committed:   res.Committed,
		Height:      res.Height,
		FeeEstimate: res.FeeEstimate,
		TxHash:      strings.ToUpper(hex.EncodeToString(res.Hash)),
		Nonce:       t.GetNonce(),
	}
	var timeout client.ErrCommitTimeout
	var inCache client.ErrTxInCache
	switch {
	case errors.As(err, &timeout):
		out.Status = txCommitTimeout
	case errors.As(err, &inCache):
		out.Status = txInCache
	case err != nil:
		return err
	case res.Committed:
		out.Status = txCommitted
		fee := res.Fee
		out.Fee = &fee
	case res.Refused():
		out.Status = txRefused
	default:
		out.Status = txAccepted
	}
	if extra != nil {
		extra(&out)
	}
	if perr := printResult(cmd, out.text, out); perr != nil {
		return perr
	}
	if err != nil {
		return err
	}
	if res.Refused() {
		return errRefused{Code: res.Code, Log: res.Log}
	}
	return nil
}

// The flag readers: a flag a command defines always reads, so their errors (an
// undefined flag or another type) are programming errors of this file.

func flagString(cmd *cobra.Command, name string) string {
	v, err := cmd.Flags().GetString(name)
	if err != nil {
		panic(err)
	}
	return v
}

func flagStringSlice(cmd *cobra.Command, name string) []string {
	v, err := cmd.Flags().GetStringSlice(name)
	if err != nil {
		panic(err)
	}
	return v
}

func flagUint64(cmd *cobra.Command, name string) uint64 {
	v, err := cmd.Flags().GetUint64(name)
	if err != nil {
		panic(err)
	}
	return v
}

func flagInt64(cmd *cobra.Command, name string) int64 {
	v, err := cmd.Flags().GetInt64(name)
	if err != nil {
		panic(err)
	}
	return v
}

func flagUint8(cmd *cobra.Command, name string) uint8 {
	v, err := cmd.Flags().GetUint8(name)
	if err != nil {
		panic(err)
	}
	return v
}

func flagBool(cmd *cobra.Command, name string) bool {
	v, err := cmd.Flags().GetBool(name)
	if err != nil {
		panic(err)
	}
	return v
}
