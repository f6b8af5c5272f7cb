package main

import (
	"context"
	"crypto/ed25519"
	"encoding/hex"
	"errors"
	"fmt"
	"io"
	"strconv"
	"strings"
	"time"

	cmttypes "github.com/cometbft/cometbft/types"
	"github.com/spf13/cobra"

	"github.com/ttld-dev/ttld/client"
	"github.com/ttld-dev/ttld/keyring"
	"github.com/ttld-dev/ttld/protocol"
)

// errRefused is returned by a tx command whose transaction the node refused, after
// the result is printed, so the command exits non-zero.
type errRefused struct {
	Code protocol.Code
	// Codespace is not empty for a refusal by the node rather than the chain
	// (client.BroadcastResult.Codespace).
	Codespace string
	Log       string
}

func (e errRefused) Error() string {
	if e.Codespace != "" {
		return fmt.Sprintf("transaction refused by the node (codespace %s, code %d): %s", e.Codespace, e.Code, e.Log)
	}
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
	// txSendFailed: the RPC call that sent it failed: the node may or may not have
	// received it.
	txSendFailed = "send_failed"
)

// txHash is a transaction's hash as outputs print it (CometBFT's, upper-case hex).
func txHash(tx []byte) string { return strings.ToUpper(hex.EncodeToString(cmttypes.Tx(tx).Hash())) }

// txOutput is what a tx command prints (-o json: this object).
type txOutput struct {
	Status string `json:"status"`
	Code   uint32 `json:"code"`
	// Codespace is empty for a protocol code; "ttld-node" for a refusal that says
	// something of the node rather than of the transaction (docs/ERRORS.md, "CheckTx's
	// node codes").
	Codespace string `json:"codespace,omitempty"`
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
	Contract    string `json:"contract,omitempty"`
	// DocumentType and Document name the document a documents_batch command writes.
	DocumentType string `json:"document_type,omitempty"`
	Document     string `json:"document,omitempty"`
	// RestoreDocument is, for a moderator's deletion, the document's encoding in hex as
	// it was read before the deletion: what `ttld tx document restore --document` takes.
	RestoreDocument string `json:"restore_document,omitempty"`
	// RenewedAt and ExpiresAt are, for a committed action that renewed a document, its
	// $renewedAt and the expiry it moved to (unix ms), as the block left them.
	RenewedAt uint64 `json:"renewed_at,omitempty"`
	ExpiresAt uint64 `json:"expires_at,omitempty"`
	// Validator is the consensus address a validator set proposal adds or changes;
	// Proposal the proposal's number (a proposal, once committed, or an approval),
	// Passed whether the transaction passed it (once committed).
	Validator string `json:"validator,omitempty"`
	Proposal  uint64 `json:"proposal,omitempty"`
	Passed    *bool  `json:"passed,omitempty"`
}

func (o txOutput) text(w io.Writer) {
	fmt.Fprintf(w, "status: %s\n", o.Status)
	switch o.Status {
	case txCommitTimeout:
		fmt.Fprintln(w, "not known: the wait for the block ended before the transaction was included: it may still commit; look it up by its hash before sending it again")
	case txInCache:
		fmt.Fprintln(w, "the node already holds this exact transaction: it is pending in the mempool and will be included, or has been already")
	case txSendFailed:
		fmt.Fprintf(w, "not known: the node did not answer the broadcast (%s): it may or may not have received the transaction; look it up by its hash before sending it again\n", o.Log)
	case txAccepted:
		fmt.Fprintln(w, "accepted, not committed: the node's CheckTx took the transaction into its mempool, which says it is valid on the node's state now, not that a block will include it (docs/TX.md, \"What accepted means\"); pass --commit to wait for its block, or look it up by its hash")
	default:
		if o.Codespace != "" {
			fmt.Fprintf(w, "refused by the node, not the chain: codespace %s, code %d (nothing was charged; it may be sent again later or to another node)\n", o.Codespace, o.Code)
		} else {
			fmt.Fprintf(w, "code: %d\n", o.Code)
		}
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
		fmt.Fprintln(w, "height: none yet (not committed)")
	}
	fmt.Fprintf(w, "tx hash: %s\n", o.TxHash)
	fmt.Fprintf(w, "nonce: %d\n", o.Nonce)
	if o.Identity != "" {
		fmt.Fprintf(w, "identity: %s\n", o.Identity)
	}
	if o.Contract != "" {
		fmt.Fprintf(w, "contract: %s\n", o.Contract)
	}
	if o.DocumentType != "" {
		fmt.Fprintf(w, "document type: %s\n", o.DocumentType)
	}
	if o.Document != "" {
		fmt.Fprintf(w, "document: %s\n", o.Document)
	}
	if o.RestoreDocument != "" {
		fmt.Fprintf(w, "restore document: %s\n", o.RestoreDocument)
	}
	if o.RenewedAt != 0 {
		fmt.Fprintf(w, "renewed at: %d\nexpires at: %d\n", o.RenewedAt, o.ExpiresAt)
	}
	if o.Validator != "" {
		fmt.Fprintf(w, "validator: %s\n", o.Validator)
	}
	if o.Proposal != 0 {
		fmt.Fprintf(w, "proposal: %d\n", o.Proposal)
	}
	if o.Passed != nil && *o.Passed {
		fmt.Fprintln(w, "passed: yes: the block applied it to the set (CometBFT's set changes two blocks later)")
	} else if o.Passed != nil {
		fmt.Fprintln(w, "passed: not yet: it passes once validators holding more than two thirds of the power approved it")
	}
}

// txCommand is a command under `ttld tx GROUP` that sends one transition kind. Each
// kind's commands live in their own file (tx_*.go) and register themselves with
// registerTx: one command per kind, or a group of them for a kind whose transition
// carries several actions (documents_batch: one command per action).
type txCommand struct {
	// Kind is the transition kind the command sends.
	Kind protocol.TransitionType
	// Group is the subcommand of `ttld tx` it sits under: "identity", "address",
	// "contract" or "document".
	Group string
	Use   string
	Short string
	// Long is the help's longer text; may be empty.
	Long string
	Args cobra.PositionalArgs
	// Flags declares the command's own flags.
	Flags func(cmd *cobra.Command)
	// Build reads the arguments and flags, refusing a missing or malformed one before
	// anything is signed, and returns the transition (its nonce is filled in later).
	Build func(in *txInput) (protocol.Transition, error)
	// Describe adds to the output what only the signed transition tells (the id of a
	// created identity); may be nil.
	Describe func(t protocol.Transition, in *txInput, o *txOutput)
	// Run, when set, replaces Build and Describe: the command signs and sends by
	// itself, for a command that sends several transitions (`tx document batch`).
	Run func(cmd *cobra.Command, args []string) error
}

// txGroups are the subcommands of `ttld tx`, in the order help lists them.
var txGroups = []struct{ Name, Short, Long string }{
	{"identity", "Identity transitions", ""},
	{"address", "Address transitions", ""},
	{"contract", "Data contract transitions", ""},
	{"document", "Document transitions (documents_batch)",
		"Document transitions (documents_batch). Each command but batch sends a batch of one action; `batch FILE`\n" +
			"sends the actions of a file, as many to a transaction (and nonce) as the protocol version's limits allow."},
	{"validator", "Validator set transitions (protocol version 16 on)",
		"Validator set transitions (docs/STATE.md, \"Validators\"): the operator of a validator of the set proposes a\n" +
			"change of the set or approves a pending one, signing with its operator identity's key, which lives in the\n" +
			"client home's keyring (--home), not in a node's home. A proposal passes when validators holding more\n" +
			"than two thirds of the set's power approved it, and the block it passes in applies it."},
}

// txCommands are written only by registerTx, from init functions.
var txCommands []txCommand

func registerTx(c txCommand) { txCommands = append(txCommands, c) }

// txInput is what a transition's Build reads: the command line and the --from key.
type txInput struct {
	cmd  *cobra.Command
	args []string
	key  *keyring.Key
	// document is what a moderator's deletion read before it is sent: the document's
	// encoding, which a restore takes back.
	document []byte
	// renews: the document action renews its document (builtAction.Renews).
	renews bool
}

// Key loads the --from key of the home's keyring (once).
func (in *txInput) Key() (keyring.Key, error) {
	if in.key == nil {
		k, err := txKey(in.cmd)
		if err != nil {
			return keyring.Key{}, err
		}
		in.key = &k
	}
	return *in.key, nil
}

func newTxCmd() *cobra.Command {
	cmd := &cobra.Command{
		Use:   "tx",
		Short: "Sign and broadcast a state transition",
	}
	f := cmd.PersistentFlags()
	f.String("from", "", "name of the signing key in the home's keyring")
	f.Bool("commit", false, "wait for the block that includes the transaction (broadcast_tx_commit)")
	f.Bool("dry-run", false, "sign and run the transaction against the node's check state without sending it: its code and fee")
	f.Uint64("nonce", 0, "signer nonce to use (0: the signer's last nonce plus one)")
	f.String("chain-id", "", "chain id to sign for (empty: the node's)")
	for _, g := range txGroups {
		group := &cobra.Command{Use: g.Name, Short: g.Short, Long: g.Long}
		for _, c := range txCommands {
			if c.Group == g.Name {
				group.AddCommand(c.command())
			}
		}
		cmd.AddCommand(group)
	}
	return cmd
}

// command builds the cobra command of one transition kind.
func (c txCommand) command() *cobra.Command {
	cmd := &cobra.Command{
		Use:   c.Use,
		Short: c.Short,
		Long:  c.Long,
		Args:  c.Args,
		RunE:  c.Run,
	}
	if c.Run == nil {
		cmd.RunE = func(cmd *cobra.Command, args []string) error {
			in := &txInput{cmd: cmd, args: args}
			t, err := c.Build(in)
			if err != nil {
				return err
			}
			key, err := in.Key()
			if err != nil {
				return err
			}
			var describe func(*txOutput)
			if c.Describe != nil {
				describe = func(o *txOutput) { c.Describe(t, in, o) }
			}
			return runTx(cmd, t, key.Priv, describe)
		}
	}
	if c.Flags != nil {
		c.Flags(cmd)
	}
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
	applyNonceFlag(cmd, t)
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
	if flagBool(cmd, "dry-run") {
		return dryRun(ctx, cmd, c, tx, t, extra)
	}
	out, err := broadcastTx(ctx, cmd, c, tx, t.GetNonce())
	if out.Status == "" {
		return err
	}
	if extra != nil {
		extra(&out)
	}
	if perr := printResult(cmd, out.text, out); perr != nil {
		return perr
	}
	return err
}

// applyNonceFlag sets t's nonce to --nonce when it is given; otherwise client.Sign
// fills in the signer's next.
func applyNonceFlag(cmd *cobra.Command, t protocol.Transition) {
	if n := flagUint64(cmd, "nonce"); n != 0 {
		t.SetNonce(n)
	}
}

// broadcastTx sends tx, signed with nonce, with --commit or not, and says what became
// of it. A zero Status means the send failed and nothing is known of tx: err is the
// RPC's. Otherwise out is to be printed, and err, when not nil, is what the command
// returns after it: errRefused, client.ErrCommitTimeout or client.ErrTxInCache.
func broadcastTx(ctx context.Context, cmd *cobra.Command, c *client.Client, tx []byte, nonce uint64) (txOutput, error) {
	res, err := c.Broadcast(ctx, tx, flagBool(cmd, "commit"))
	out := txOutput{
		Code:        uint32(res.Code),
		Codespace:   res.Codespace,
		Log:         res.Log,
		Committed:   res.Committed,
		Height:      res.Height,
		FeeEstimate: res.FeeEstimate,
		TxHash:      strings.ToUpper(hex.EncodeToString(res.Hash)),
		Nonce:       nonce,
	}
	var timeout client.ErrCommitTimeout
	var inCache client.ErrTxInCache
	switch {
	case errors.As(err, &timeout):
		out.Status = txCommitTimeout
	case errors.As(err, &inCache):
		out.Status = txInCache
	case err != nil:
		return txOutput{}, err
	case res.Committed:
		out.Status = txCommitted
		fee := res.Fee
		out.Fee = &fee
		if id, ok := res.Attr(protocol.EventValidatorApproval, protocol.AttrProposal); ok {
			out.Proposal, _ = strconv.ParseUint(id, 10, 64)
			passed, _ := res.Attr(protocol.EventValidatorApproval, protocol.AttrPassed)
			p := passed == "true"
			out.Passed = &p
		}
	case res.Refused():
		out.Status = txRefused
	default:
		out.Status = txAccepted
	}
	if err == nil && res.Refused() {
		err = errRefused{Code: res.Code, Codespace: res.Codespace, Log: res.Log}
	}
	return out, err
}

// dryRunOutput is what `tx ... --dry-run` prints (-o json: this object).
type dryRunOutput struct {
	Status   string `json:"status"` // always "dry_run": nothing was sent
	Code     uint32 `json:"code"`
	Log      string `json:"log,omitempty"`
	Fee      uint64 `json:"fee"`
	MaxFee   uint64 `json:"max_fee"`
	TxHash   string `json:"tx_hash"`
	Nonce    uint64 `json:"nonce"`
	Identity string `json:"identity,omitempty"`
	Contract string `json:"contract,omitempty"`
	// DocumentType and Document: see txOutput.
	DocumentType string `json:"document_type,omitempty"`
	Document     string `json:"document,omitempty"`
}

func (o dryRunOutput) text(w io.Writer) {
	fmt.Fprintln(w, "status: dry run (nothing was sent)")
	fmt.Fprintf(w, "code: %d\n", o.Code)
	if o.Code != 0 {
		fmt.Fprintf(w, "error: %s\n", o.Log)
	}
	fmt.Fprintf(w, "fee: %d on the node's current check state, at most %d once sent\n", o.Fee, o.MaxFee)
	fmt.Fprintf(w, "tx hash: %s\n", o.TxHash)
	fmt.Fprintf(w, "nonce: %d\n", o.Nonce)
	if o.Identity != "" {
		fmt.Fprintf(w, "identity: %s\n", o.Identity)
	}
	if o.Contract != "" {
		fmt.Fprintf(w, "contract: %s\n", o.Contract)
	}
	if o.DocumentType != "" {
		fmt.Fprintf(w, "document type: %s\n", o.DocumentType)
	}
	if o.Document != "" {
		fmt.Fprintf(w, "document: %s\n", o.Document)
	}
}

// dryRun asks the node what tx would do and prints it; a refusal exits non-zero.
func dryRun(ctx context.Context, cmd *cobra.Command, c *client.Client, tx []byte, t protocol.Transition, extra func(*txOutput)) error {
	out, err := dryRunTx(ctx, c, tx, t.GetNonce())
	if err != nil {
		return err
	}
	if extra != nil {
		var o txOutput
		extra(&o)
		out.Identity, out.Contract, out.DocumentType, out.Document = o.Identity, o.Contract, o.DocumentType, o.Document
	}
	if err := printResult(cmd, out.text, out); err != nil {
		return err
	}
	return out.refusal()
}

// dryRunTx asks the node what tx, signed with nonce, would do (client.DryRun).
func dryRunTx(ctx context.Context, c *client.Client, tx []byte, nonce uint64) (dryRunOutput, error) {
	res, err := c.DryRun(ctx, tx)
	if err != nil {
		return dryRunOutput{}, err
	}
	return dryRunOutput{Status: "dry_run", Code: uint32(res.Code), Log: res.Log, Fee: res.Fee, MaxFee: res.MaxFee,
		TxHash: strings.ToUpper(hex.EncodeToString(cmttypes.Tx(tx).Hash())), Nonce: nonce}, nil
}

// refusal is the error a dry-run command returns after printing o: errRefused when
// the transaction would be refused.
func (o dryRunOutput) refusal() error {
	if o.Code != uint32(protocol.CodeOK) {
		return errRefused{Code: protocol.Code(o.Code), Log: o.Log}
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

func flagDuration(cmd *cobra.Command, name string) time.Duration {
	v, err := cmd.Flags().GetDuration(name)
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
