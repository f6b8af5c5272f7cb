package main

import (
	"bytes"
	"context"
	"crypto/ed25519"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"reflect"
	"slices"
	"strings"
	"time"

	"github.com/spf13/cobra"

	"github.com/ttld-dev/ttld/client"
	"github.com/ttld-dev/ttld/protocol"
)

// `ttld tx document batch FILE`: the document actions of a file, several to a
// documents batch (docs/TX.md, "Batches from a file"). Each action is built by its
// kind as its own command builds it (document_action.go); this file reads the file,
// cuts the actions into batches within the protocol version's limits and sends them.

func init() {
	registerTx(txCommand{
		Kind:  protocol.TypeDocumentsBatch,
		Group: "document",
		Use:   "batch FILE --identity ID --from KEY [--split] [--key-index 0]",
		Short: "Send the document actions of a file (JSON lines or an array) in batches: many actions, one transaction and nonce",
		Long:  batchLong(),
		Args:  cobra.ExactArgs(1),
		Flags: func(cmd *cobra.Command) {
			documentSignerFlags(cmd)
			cmd.Flags().Bool("split", false, "cut a file over the limits (or naming several contracts) into as few transactions as they allow, sent in file order")
			cmd.Flags().Duration("wait", defaultBatchWait, "how long to wait for the blocks of the transactions sent (without --commit); 0: do not wait, and report them accepted")
		},
		Run: runDocumentsBatchFile,
	})
}

// batchLong is the batch command's help, with the limits of the latest version.
func batchLong() string {
	lim, err := protocol.LimitsFor(protocol.Newest())
	if err != nil {
		panic(err) // Latest is a version this build implements
	}
	return fmt.Sprintf(`Send the document actions FILE holds (-: standard input), signed by the identity, as one
documents batch: one transaction and one nonce for up to the protocol version's limits
(version %d: %d actions, a signed transaction of %d bytes).

FILE is JSON lines (an action object a line; blank lines are skipped) or one JSON array of
action objects. An action names its kind, the name of its command, and the fields that
command takes, under the names of its arguments and flags:

  {"action":"create","contract":"HEX","type":"note","data":{"text":"hi"}}   (optional "entropy")
  {"action":"replace","contract":"HEX","type":"note","id":"HEX","data":{...}}   (optional "revision")
  {"action":"delete","contract":"HEX","type":"note","id":"HEX"}
  {"action":"transfer",...,"id":"HEX","to":"IDENTITY"}   (optional "revision")
  {"action":"purchase",...,"id":"HEX"}   (optional "price", "revision")
  {"action":"set-price",...,"id":"HEX","price":5000}   (optional "revision")
  {"action":"renew",...,"id":"HEX"}   (optional "revision"; protocol version 15)
  {"action":"moderate-delete",...,"id":"HEX","reason":"spam"}
  {"action":"restore",...,"id":"HEX","document":"HEX"}

As with those commands, data is converted under the contract's type, and a revision or a
purchase's price not given is read from the node. A malformed action, a file naming a
document twice, and, without --split, a file over the limits or naming two contracts are
refused before anything is signed, naming the line (or array element) and the limit.
--split cuts the file, in order, into as few batches as the limits allow, one contract
each, signs them with consecutive nonces (from --nonce, or the signer's next), sends them
in turn (with --commit, each after the block of the one before) and stops at the first
refusal or failed send. Then, without --commit, it waits (--wait) for the blocks that
include them, and reports each transaction: committed (its height, code and fee),
refused (its code: nothing was charged), or not known (no block held it when the wait
ended: it may still commit; look it up by its hash before sending it again), and the
actions not sent. It exits non-zero unless every transaction was committed with code 0
(with --wait 0: accepted by the node). --dry-run asks the node about the first
batch only: its dry run keeps nothing, so it would judge later batches without the
earlier ones. The output names every action's document (a create's, the id it creates).
docs/TX.md, "Batches from a file", has the details.`,
		protocol.Newest(), lim.MaxDocumentActions, lim.MaxTxBytes)
}

// runDocumentsBatchFile is `ttld tx document batch FILE`: every action of the file
// parsed before the node is asked anything (parseBatchFile), then completed from the
// node and cut into batches within the limits of the version in force (cutBatches),
// then signed and sent one batch after the other, or the first dry-run.
func runDocumentsBatchFile(cmd *cobra.Command, args []string) error {
	signer, err := identityArg(cmd, "identity")
	if err != nil {
		return err
	}
	items, err := parseBatchFile(cmd, args[0], signer)
	if err != nil {
		return err
	}
	key, err := txKey(cmd)
	if err != nil {
		return err
	}
	r := newActionReads(cmd)
	c, err := r.client()
	if err != nil {
		return err
	}
	ctx := cmdContext(cmd)
	version, lim, err := c.TxLimits(ctx)
	if err != nil {
		return err
	}
	batches, err := cutBatches(r, items, signer, flagUint8(cmd, "key-index"), version, lim, flagBool(cmd, "split"))
	if err != nil {
		return err
	}
	if flagBool(cmd, "dry-run") {
		return dryRunFirstBatch(ctx, cmd, c, batches, key.Priv)
	}
	return sendBatches(ctx, cmd, c, batches, key.Priv)
}

// actionAt is where an action sits in a batch file.
type actionAt struct {
	// Index is its place among the file's actions, from 0: in an array, its element.
	Index int
	// Line is the line it starts on, from 1.
	Line int
	// Array: the file is one JSON array (otherwise JSON lines).
	Array bool
}

func (p actionAt) String() string {
	if p.Array {
		return fmt.Sprintf("element %d (line %d)", p.Index, p.Line)
	}
	return fmt.Sprintf("line %d", p.Line)
}

// batchItem is one action of a batch file: where it sits, its kind and fields, and the
// action they build.
type batchItem struct {
	At     actionAt
	Kind   documentKind
	Fields actionFields
	Action builtAction
}

// parseBatchFile reads FILE (-: standard input) and parses every action in it, signed
// by signer, without asking the node (parseAction): the first malformed action, or the
// second to name a document, is refused at its place.
func parseBatchFile(cmd *cobra.Command, name string, signer protocol.IdentityID) ([]batchItem, error) {
	var data []byte
	var err error
	if name == "-" {
		data, err = io.ReadAll(cmd.InOrStdin())
	} else {
		data, err = os.ReadFile(name)
	}
	if err != nil {
		return nil, err
	}
	items, err := decodeBatchFile(data)
	if err != nil {
		return nil, err
	}
	if len(items) == 0 {
		return nil, errNoActions{File: name}
	}
	named := make(map[protocol.DocumentID]actionAt, len(items))
	for i := range items {
		it := &items[i]
		refuse := func(err error) error { return errBatchAction{At: it.At, Action: it.Fields.Action, Err: err} }
		if it.Kind, err = documentKindNamed(it.Fields.Action); err != nil {
			return nil, refuse(err)
		}
		if it.Action, err = parseAction(it.Kind, it.Fields, signer); err != nil {
			return nil, refuse(err)
		}
		if first, ok := named[it.Action.ID]; ok {
			return nil, refuse(errDocumentTwice{ID: it.Action.ID, First: first})
		}
		named[it.Action.ID] = it.At
	}
	return items, nil
}

// decodeBatchFile reads the action objects of a batch file in file order: one JSON
// array when its first character (after white space) is '[', JSON lines otherwise.
func decodeBatchFile(data []byte) ([]batchItem, error) {
	if rest := bytes.TrimLeft(data, " \t\r\n"); len(rest) > 0 && rest[0] == '[' {
		return decodeBatchArray(data)
	}
	var items []batchItem
	for i, line := range bytes.Split(data, []byte("\n")) {
		if len(bytes.TrimSpace(line)) == 0 {
			continue
		}
		at := actionAt{Index: len(items), Line: i + 1}
		f, err := decodeAction(line)
		if err != nil {
			return nil, errBatchAction{At: at, Err: err}
		}
		items = append(items, batchItem{At: at, Fields: f})
	}
	return items, nil
}

// decodeBatchArray reads a batch file that is one JSON array of action objects.
func decodeBatchArray(data []byte) ([]batchItem, error) {
	lineAt := func(offset int64) int { return 1 + bytes.Count(data[:min(offset, int64(len(data)))], []byte("\n")) }
	dec := json.NewDecoder(bytes.NewReader(data))
	var items []batchItem
	// bad places an error reading the array at its line: a syntax error where the whole
	// file's check finds it (NB: a Decoder's SyntaxError.Offset does not count from the
	// start of its input once it has read a value), an early end at the file's end.
	bad := func(err error) error {
		at := actionAt{Index: len(items), Line: lineAt(dec.InputOffset()), Array: true}
		var syntax *json.SyntaxError
		switch {
		case errors.As(err, &syntax):
			if errors.As(json.Unmarshal(data, new(json.RawMessage)), &syntax) {
				at.Line = lineAt(syntax.Offset)
			}
		case err == io.EOF || errors.Is(err, io.ErrUnexpectedEOF):
			at.Line = lineAt(int64(len(data)))
			err = errors.New("the file ends inside the array")
		}
		return errBatchAction{At: at, Err: errNotAnAction{Reason: "not JSON: " + err.Error()}}
	}
	if _, err := dec.Token(); err != nil {
		return nil, bad(err)
	}
	for dec.More() {
		start := dec.InputOffset()
		for start < int64(len(data)) && strings.IndexByte(" \t\r\n,", data[start]) >= 0 {
			start++
		}
		var raw json.RawMessage
		if err := dec.Decode(&raw); err != nil {
			return nil, bad(err)
		}
		at := actionAt{Index: len(items), Line: lineAt(start), Array: true}
		f, err := decodeAction(raw)
		if err != nil {
			return nil, errBatchAction{At: at, Err: err}
		}
		items = append(items, batchItem{At: at, Fields: f})
	}
	if _, err := dec.Token(); err != nil {
		return nil, bad(err)
	}
	if _, err := dec.Token(); err != io.EOF {
		return nil, bad(errors.New("something follows the array"))
	}
	return items, nil
}

// decodeAction reads one action object, strictly: a key that is no field of an action
// is refused, as is a field of the wrong JSON type, or more than one value.
func decodeAction(raw []byte) (actionFields, error) {
	dec := json.NewDecoder(bytes.NewReader(raw))
	dec.DisallowUnknownFields()
	var f actionFields
	if err := dec.Decode(&f); err != nil {
		var typ *json.UnmarshalTypeError
		var syntax *json.SyntaxError
		switch {
		case errors.As(err, &typ) && typ.Field != "":
			want := "a string"
			if typ.Type.Kind() == reflect.Uint64 {
				want = "a whole number, at least 0"
			}
			return f, errField{Field: typ.Field, Value: "a JSON " + typ.Value, Want: want}
		case errors.As(err, &typ):
			return f, errNotAnAction{Reason: "a JSON " + typ.Value + ", not an object"}
		case errors.As(err, &syntax) || errors.Is(err, io.ErrUnexpectedEOF):
			return f, errNotAnAction{Reason: "not JSON: " + err.Error()}
		}
		return f, errNotAnAction{Reason: err.Error()}
	}
	if _, err := dec.Token(); err != io.EOF {
		return f, errNotAnAction{Reason: "more than one JSON value"}
	}
	return f, nil
}

// fileBatch is one transaction a batch file makes: its batch and the file's actions in
// it, in file order.
type fileBatch struct {
	Batch *protocol.DocumentsBatch
	Items []batchItem
}

// cutBatches completes the actions from the node in file order and puts each in the
// current batch while the limits of version (lim) allow: one contract, at most
// MaxDocumentActions actions and a signed transaction of at most MaxTxBytes. Where an
// action does not fit, split starts the next batch with it, so that the batches are as
// few as the limits allow; without split the file is refused at that action. An action
// that does not fit in a batch of its own is refused either way. Every batch is signed
// by signer's key keyIndex.
func cutBatches(r *actionReads, items []batchItem, signer protocol.IdentityID, keyIndex uint8, version protocol.Version, lim protocol.Limits, split bool) ([]fileBatch, error) {
	var out []fileBatch
	for i := range items {
		it := &items[i]
		refuse := func(err error) error { return errBatchAction{At: it.At, Action: it.Kind.Name, Err: err} }
		var cur *fileBatch
		if len(out) > 0 {
			cur = &out[len(out)-1]
		}
		if cur != nil {
			var over error
			switch {
			case it.Action.Contract != cur.Batch.Contract:
				over = errMixedContracts{Contract: it.Action.Contract, Batch: cur.Batch.Contract, First: cur.Items[0].At}
			case len(cur.Items) == lim.MaxDocumentActions:
				over = errTooManyActions{Count: len(items), Max: lim.MaxDocumentActions, Version: version}
			}
			if over != nil {
				if !split {
					return nil, refuse(over)
				}
				cur = nil
			}
		}
		if err := completeAction(r, it.Kind, it.Fields, &it.Action); err != nil {
			return nil, refuse(err)
		}
		alone := &protocol.DocumentsBatch{Identity: signer, KeyIndex: keyIndex, Contract: it.Action.Contract}
		if size := signedSize(alone, it.Action.DocumentAction); size > lim.MaxTxBytes {
			return nil, refuse(errBatchTooLarge{Size: size, Max: lim.MaxTxBytes})
		}
		if cur != nil {
			if size := signedSize(cur.Batch, it.Action.DocumentAction); size > lim.MaxTxBytes {
				if !split {
					return nil, refuse(errBatchTooLarge{Size: size, Max: lim.MaxTxBytes, Before: len(cur.Items)})
				}
				cur = nil
			}
		}
		if cur == nil {
			out = append(out, fileBatch{Batch: alone})
			cur = &out[len(out)-1]
		}
		cur.Batch.Actions = append(cur.Batch.Actions, it.Action.DocumentAction)
		cur.Items = append(cur.Items, *it)
	}
	return out, nil
}

// signedSize is the length of b's signed transaction with a appended: its encoding and
// the signature. The nonce is fixed-width, so the size is known before signing.
func signedSize(b *protocol.DocumentsBatch, a protocol.DocumentAction) int {
	with := *b
	with.Actions = append(slices.Clip(b.Actions), a)
	return len(protocol.EncodeUnsigned(&with)) + protocol.SignatureLen
}

// defaultBatchWait is how long `tx document batch` waits for the blocks of what it
// sent: many blocks at the default block time.
const defaultBatchWait = time.Minute

// sendBatches signs the batches with consecutive nonces (the first --nonce's, or the
// signer's next) and sends them in order, stopping at the first that is refused or
// whose send failed; then, without --commit, it waits up to --wait for the blocks of
// those sent. It prints what became of each transaction and which actions were not
// sent, and returns errBatchNotCommitted unless every transaction was committed with
// code 0 (with --wait 0: accepted).
func sendBatches(ctx context.Context, cmd *cobra.Command, c *client.Client, batches []fileBatch, priv ed25519.PrivateKey) error {
	out := batchOutput{Identity: batches[0].Batch.Identity.String(), Transactions: len(batches), Sent: []batchTxOutput{}, NotSent: []batchActionOutput{}}
	wait, commit := flagDuration(cmd, "wait"), flagBool(cmd, "commit")
	from, err := c.LatestHeight(ctx)
	if err != nil {
		return err
	}
	var stop error
	for k, b := range batches {
		if k == 0 {
			applyNonceFlag(cmd, b.Batch)
		} else {
			b.Batch.SetNonce(batches[k-1].Batch.Nonce + 1)
		}
		tx, err := c.Sign(ctx, b.Batch, priv)
		if err == nil {
			var sent txOutput
			sent, err = broadcastTx(ctx, cmd, c, tx, b.Batch.Nonce)
			if sent.Status == "" {
				// The RPC failed: the node may or may not have the transaction.
				sent = txOutput{Status: txSendFailed, Log: err.Error(), TxHash: txHash(tx), Nonce: b.Batch.Nonce}
			}
			sent.Contract = b.Batch.Contract.String()
			out.Sent = append(out.Sent, batchTxOutput{txOutput: sent, Actions: actionOutputs(b.Items)})
		}
		if err != nil {
			// Refused, of unknown fate, or not sent: the later batches are not sent.
			stop = err
			for _, rest := range batches[len(out.Sent):] {
				out.NotSent = append(out.NotSent, actionOutputs(rest.Items)...)
			}
			break
		}
	}
	if !commit && wait > 0 {
		if err := awaitBatches(ctx, c, from+1, wait, out.Sent); err != nil {
			return err
		}
	}
	if err := printResult(cmd, out.text, out); err != nil {
		return err
	}
	return out.outcome(wait, stop)
}

// awaitBatches waits up to wait for the blocks, from height from on, of the
// transactions sent whose fate is open (accepted, already in the node's cache, or
// whose send failed), and records what the blocks say: committed, or, when the wait
// ends, not known (txCommitTimeout).
func awaitBatches(ctx context.Context, c *client.Client, from int64, wait time.Duration, sent []batchTxOutput) error {
	var open []int
	var hashes [][]byte
	for i, s := range sent {
		switch s.Status {
		case txAccepted, txInCache, txSendFailed:
			h, err := hex.DecodeString(s.TxHash)
			if err != nil {
				return err
			}
			open, hashes = append(open, i), append(hashes, h)
		}
	}
	if len(open) == 0 {
		return nil
	}
	waitCtx, cancel := context.WithTimeout(ctx, wait)
	defer cancel()
	outcomes, err := c.Await(waitCtx, from, hashes)
	if err != nil {
		return err
	}
	for k, i := range open {
		o, s := outcomes[k], &sent[i]
		switch {
		case o.Committed:
			fee := o.Fee
			s.Status, s.Committed, s.Height, s.Code, s.Log, s.Fee = txCommitted, true, o.Height, uint32(o.Code), o.Log, &fee
		case s.Status != txSendFailed:
			s.Status = txCommitTimeout
		}
	}
	return nil
}

// outcome is the error a batch run returns after printing o: nil when every
// transaction was committed with code 0, or, without a wait, accepted.
func (o batchOutput) outcome(wait time.Duration, stop error) error {
	e := errBatchNotCommitted{Transactions: o.Transactions, Stop: stop}
	for _, s := range o.Sent {
		switch {
		case s.Status == txCommitted && s.Code == 0:
			e.Committed++
		case s.Status == txAccepted && wait == 0:
			e.Accepted++
		case s.Status == txCommitted, s.Status == txRefused:
			e.Refused++
		default:
			e.Unknown++
		}
	}
	if e.Committed+e.Accepted == o.Transactions {
		return nil
	}
	return e
}

// errBatchNotCommitted: a batch run ended with transactions that were not committed
// with code 0: refused (by CheckTx, or by their block), of unknown fate, or not sent.
type errBatchNotCommitted struct {
	Transactions                          int
	Committed, Accepted, Refused, Unknown int
	// Stop is what stopped the run before its last transaction was sent, if anything
	// did: a refusal (errRefused), an unknown fate (client.ErrCommitTimeout,
	// client.ErrTxInCache) or the RPC's error.
	Stop error
}

func (e errBatchNotCommitted) Error() string {
	msg := fmt.Sprintf("of %d transactions, %d committed with code 0", e.Transactions, e.Committed)
	if e.Accepted > 0 {
		msg += fmt.Sprintf(", %d accepted", e.Accepted)
	}
	msg += fmt.Sprintf(", %d refused, %d of unknown fate (no block held them when the wait ended: they may still commit), and the actions of %d not sent",
		e.Refused, e.Unknown, e.Transactions-e.Committed-e.Accepted-e.Refused-e.Unknown)
	if e.Stop != nil {
		msg += "; the run stopped at: " + e.Stop.Error()
	}
	return msg
}

func (e errBatchNotCommitted) Unwrap() error { return e.Stop }

// dryRunFirstBatch asks the node what the first batch would do, and prints it with how
// many batches the file makes. NB: the node's dry run keeps nothing of what it runs, so
// a later batch's would be judged without the earlier ones (its nonce, its documents):
// only the first is dry-run.
func dryRunFirstBatch(ctx context.Context, cmd *cobra.Command, c *client.Client, batches []fileBatch, priv ed25519.PrivateKey) error {
	b := batches[0]
	applyNonceFlag(cmd, b.Batch)
	tx, err := c.Sign(ctx, b.Batch, priv)
	if err != nil {
		return err
	}
	res, err := dryRunTx(ctx, c, tx, b.Batch.Nonce)
	if err != nil {
		return err
	}
	res.Identity, res.Contract = b.Batch.Identity.String(), b.Batch.Contract.String()
	out := batchDryRunOutput{dryRunOutput: res, Actions: actionOutputs(b.Items), Transactions: len(batches)}
	if err := printResult(cmd, out.text, out); err != nil {
		return err
	}
	return res.refusal()
}

// batchActionOutput names one action of a batch file in the output.
type batchActionOutput struct {
	// Line is the line the action starts on, from 1.
	Line int `json:"line"`
	// Element is, in a file that is a JSON array, the action's index from 0.
	Element      *int   `json:"element,omitempty"`
	Action       string `json:"action"`
	DocumentType string `json:"document_type"`
	// Document is the document's id: for a create, the id it creates
	// (DocumentsBatch.CreateID).
	Document string `json:"document"`
	// RestoreDocument is, for a moderator's deletion, what txOutput's is.
	RestoreDocument string `json:"restore_document,omitempty"`
}

func actionOutputs(items []batchItem) []batchActionOutput {
	out := make([]batchActionOutput, len(items))
	for i, it := range items {
		o := batchActionOutput{Line: it.At.Line, Action: it.Kind.Name, DocumentType: it.Action.Type, Document: it.Action.ID.String()}
		if it.At.Array {
			o.Element = &it.At.Index
		}
		if it.Action.Restore != nil {
			o.RestoreDocument = hex.EncodeToString(it.Action.Restore)
		}
		out[i] = o
	}
	return out
}

func (o batchActionOutput) at() string {
	if o.Element != nil {
		return actionAt{Index: *o.Element, Line: o.Line, Array: true}.String()
	}
	return actionAt{Line: o.Line}.String()
}

func writeActions(w io.Writer, actions []batchActionOutput) {
	fmt.Fprintln(w, "actions:")
	for _, a := range actions {
		fmt.Fprintf(w, "  %s: %s %s %s\n", a.at(), a.Action, a.DocumentType, a.Document)
		if a.RestoreDocument != "" {
			fmt.Fprintf(w, "    restore document: %s\n", a.RestoreDocument)
		}
	}
}

// batchTxOutput is one transaction of `tx document batch`: what txOutput says of it
// and the actions it carries.
type batchTxOutput struct {
	txOutput
	Actions []batchActionOutput `json:"actions"`
}

// batchOutput is what `tx document batch` prints (-o json: this object).
type batchOutput struct {
	Identity string `json:"identity"`
	// Transactions is how many transactions the file was cut into (one without
	// --split).
	Transactions int `json:"transactions"`
	// Sent are the transactions sent, in order: all of them, or up to the first that
	// was refused or whose send failed, which is the last; each with what became of it
	// (its status: committed, refused, accepted without a wait, or of unknown fate:
	// commit_timeout, send_failed).
	Sent []batchTxOutput `json:"sent"`
	// NotSent are the actions of the transactions not sent, in file order.
	NotSent []batchActionOutput `json:"not_sent"`
}

func (o batchOutput) text(w io.Writer) {
	fmt.Fprintf(w, "identity: %s\n", o.Identity)
	for k, t := range o.Sent {
		fmt.Fprintf(w, "\ntransaction %d of %d (%d actions)\n", k+1, o.Transactions, len(t.Actions))
		t.txOutput.text(w)
		writeActions(w, t.Actions)
	}
	fmt.Fprintf(w, "\ntransactions sent: %d of %d\n", len(o.Sent), o.Transactions)
	counts := map[string]int{}
	for _, t := range o.Sent {
		switch {
		case t.Status == txCommitted && t.Code == 0:
			counts["committed"]++
		case t.Status == txCommitted || t.Status == txRefused:
			counts["refused"]++
		case t.Status == txAccepted:
			counts["accepted (not committed: not waited for)"]++
		default:
			counts["not known (may still commit: look them up by hash)"]++
		}
	}
	for _, k := range []string{"committed", "refused", "accepted (not committed: not waited for)", "not known (may still commit: look them up by hash)"} {
		if counts[k] > 0 {
			fmt.Fprintf(w, "%s: %d\n", k, counts[k])
		}
	}
	if len(o.NotSent) > 0 {
		fmt.Fprintf(w, "not sent: the %d actions from %s on\n", len(o.NotSent), o.NotSent[0].at())
	}
}

// batchDryRunOutput is what `tx document batch --dry-run` prints (-o json: this
// object): the node's dry run of the first transaction of the file.
type batchDryRunOutput struct {
	dryRunOutput
	Actions []batchActionOutput `json:"actions"`
	// Transactions is how many transactions the file makes; only the first is dry-run.
	Transactions int `json:"transactions"`
}

func (o batchDryRunOutput) text(w io.Writer) {
	o.dryRunOutput.text(w)
	writeActions(w, o.Actions)
	if o.Transactions > 1 {
		fmt.Fprintf(w, "transactions: %d; only the first was dry-run: the node's dry run keeps nothing, so it would judge the later ones without the earlier ones\n", o.Transactions)
	}
}

// errBatchAction: the action at At of a batch file (of kind Action, when it names one)
// is refused before anything is signed.
type errBatchAction struct {
	At     actionAt
	Action string
	Err    error
}

func (e errBatchAction) Error() string {
	if e.Action == "" {
		return fmt.Sprintf("%s: %v", e.At, e.Err)
	}
	return fmt.Sprintf("%s, %s: %v", e.At, e.Action, e.Err)
}

func (e errBatchAction) Unwrap() error { return e.Err }

// errNotAnAction: a batch file's line or element is not one JSON action object.
type errNotAnAction struct{ Reason string }

func (e errNotAnAction) Error() string { return "not an action object: " + e.Reason }

// errNoActions: a batch file holds no action.
type errNoActions struct{ File string }

func (e errNoActions) Error() string { return fmt.Sprintf("%s holds no action", e.File) }

// errDocumentTwice: a batch file names a document it named already. A batch carries one
// action per document, and a later batch's action would be built on the node's state
// before the file (its revision), so a file names each document once.
type errDocumentTwice struct {
	ID    protocol.DocumentID
	First actionAt
}

func (e errDocumentTwice) Error() string {
	return fmt.Sprintf("document %s is the subject of %s already: a batch file names each document once", e.ID, e.First)
}

// errMixedContracts: an action writes another contract than the batch it would join (a
// documents batch writes one contract).
type errMixedContracts struct {
	Contract, Batch protocol.ContractID
	// First is where the batch's first action sits.
	First actionAt
}

func (e errMixedContracts) Error() string {
	return fmt.Sprintf("contract %s, where the batch from %s writes %s: a documents batch writes one contract; --split sends each run of actions on one contract as its own transactions",
		e.Contract, e.First, e.Batch)
}

// errTooManyActions: a batch file holds more actions than one batch carries
// (MaxDocumentActions of the version in force), and --split is not given.
type errTooManyActions struct {
	Count, Max int
	Version    protocol.Version
}

func (e errTooManyActions) Error() string {
	return fmt.Sprintf("over the limit of %d actions per documents batch (protocol version %d): the file holds %d; --split sends it as several transactions",
		e.Max, e.Version, e.Count)
}

// errBatchTooLarge: the signed transaction of a batch would be over MaxTxBytes with this
// action: alone (Before 0: no cut makes it fit), or after the Before actions ahead of
// it in the batch, without --split.
type errBatchTooLarge struct{ Size, Max, Before int }

func (e errBatchTooLarge) Error() string {
	if e.Before == 0 {
		return fmt.Sprintf("this action alone makes a signed transaction of %d bytes, over the limit of %d: no batch carries it", e.Size, e.Max)
	}
	return fmt.Sprintf("with the %d actions before it, the signed transaction would be %d bytes, over the limit of %d; --split sends the file as several transactions",
		e.Before, e.Size, e.Max)
}

// Unwrap: the refusal the node would give the transaction (10002).
func (e errBatchTooLarge) Unwrap() error { return protocol.ErrTxTooLarge{Size: e.Size, Max: e.Max} }
