package main

import (
	"context"
	"encoding/hex"
	"errors"
	"os"
	"slices"
	"strings"

	"github.com/spf13/cobra"

	"github.com/ttld-dev/ttld/client"
	"github.com/ttld-dev/ttld/protocol"
)

// The commands of `ttld tx document`: each sends a documents_batch of one action, built
// by the action's kind (document_action.go) from the command line; `batch` sends the
// actions of a file (tx_documents_batch_file.go).

// dataHelp says how DATA is given, for every command that takes it.
const dataHelp = `DATA is the document's properties as a JSON object, given inline or as @FILE (a file holding it).
A byte array or identifier property is an array of integers 0..255, or a string "0x<hex>" or
64 hex digits, which the command converts using the contract's type. The platform sets the
system fields ($id, $ownerId, $revision, $createdAt, ...): DATA carries none.`

// revisionHelp says where a command's revision comes from.
const revisionHelp = "the document's next revision (0: the stored revision plus one, read from the node)"

func init() {
	registerTx(txCommand{
		Kind:  protocol.TypeDocumentsBatch,
		Group: "document",
		Use:   "create CONTRACT TYPE DATA --identity ID --from KEY [--entropy HEX] [--key-index 0]",
		Short: "Create a document of a contract's type, owned by the identity",
		Long: "Create a document of type TYPE of contract CONTRACT, owned by the signing identity.\n\n" + dataHelp + "\n\n" +
			"The document's id derives from the contract, the identity, the type and 32 bytes of entropy (random unless --entropy gives them); the output names it.",
		Args: cobra.ExactArgs(3),
		Flags: func(cmd *cobra.Command) {
			documentSignerFlags(cmd)
			cmd.Flags().String("entropy", "", "the 32 bytes the document id derives from, 64 hex digits (empty: random)")
		},
		Build:    documentBuild("create"),
		Describe: describeDocument,
	})
	registerTx(txCommand{
		Kind:  protocol.TypeDocumentsBatch,
		Group: "document",
		Use:   "replace CONTRACT TYPE ID DATA --identity ID --from KEY [--renew] [--revision N] [--key-index 0]",
		Short: "Replace the properties of a document the identity owns",
		Long: "Replace every property of document ID (type TYPE of contract CONTRACT) by those of DATA.\n\n" + dataHelp + "\n\n" +
			"Where the type declares renewOnReplace (protocol version 15), the replace also renews the document: it expires\n" +
			"the type's ttl after this block, and the replace pays for the lifetime it adds (docs/STATE.md, \"Renewal\").\n" +
			"--renew asks for that: the command refuses, before signing, a type that does not renew on replace. A committed\n" +
			"renewing replace prints the document's renewed_at and expires_at.",
		Args: cobra.ExactArgs(4),
		Flags: func(cmd *cobra.Command) {
			revisionFlags(cmd)
			cmd.Flags().Bool("renew", false, "require that the replace renew the document (its type declares renewOnReplace)")
		},
		Build:    documentBuild("replace"),
		Describe: describeDocument,
	})
	registerTx(txCommand{
		Kind:     protocol.TypeDocumentsBatch,
		Group:    "document",
		Use:      "delete CONTRACT TYPE ID --identity ID --from KEY [--key-index 0]",
		Short:    "Delete a document the identity owns (its storage fee is refunded as far as it has not paid out)",
		Args:     cobra.ExactArgs(3),
		Flags:    documentSignerFlags,
		Build:    documentBuild("delete"),
		Describe: describeDocument,
	})
	registerTx(txCommand{
		Kind:  protocol.TypeDocumentsBatch,
		Group: "document",
		Use:   "transfer CONTRACT TYPE ID --to IDENTITY --identity ID --from KEY [--revision N] [--key-index 0]",
		Short: "Give a document the identity owns to another identity (the type must be transferable)",
		Args:  cobra.ExactArgs(3),
		Flags: func(cmd *cobra.Command) {
			revisionFlags(cmd)
			cmd.Flags().String("to", "", "the identity that receives the document")
		},
		Build:    documentBuild("transfer"),
		Describe: describeDocument,
	})
	registerTx(txCommand{
		Kind:  protocol.TypeDocumentsBatch,
		Group: "document",
		Use:   "purchase CONTRACT TYPE ID --identity ID --from KEY [--price N] [--revision N] [--key-index 0]",
		Short: "Buy a document on sale: the identity pays its price to the owner and becomes its owner",
		Args:  cobra.ExactArgs(3),
		Flags: func(cmd *cobra.Command) {
			revisionFlags(cmd)
			cmd.Flags().Uint64("price", 0, "the price offered, which must be the document's (0: the document's price, read from the node)")
		},
		Build:    documentBuild("purchase"),
		Describe: describeDocument,
	})
	registerTx(txCommand{
		Kind:  protocol.TypeDocumentsBatch,
		Group: "document",
		Use:   "set-price CONTRACT TYPE ID --price N --identity ID --from KEY [--revision N] [--key-index 0]",
		Short: "Put a document the identity owns on sale at a price (0 takes it off sale)",
		Args:  cobra.ExactArgs(3),
		Flags: func(cmd *cobra.Command) {
			revisionFlags(cmd)
			cmd.Flags().Uint64("price", 0, "the price a buyer pays, in credits (0: not for sale)")
		},
		Build:    documentBuild("set-price"),
		Describe: describeDocument,
	})
	registerTx(txCommand{
		Kind:  protocol.TypeDocumentsBatch,
		Group: "document",
		Use:   "renew CONTRACT TYPE ID --identity ID --from KEY [--revision N] [--key-index 0]",
		Short: "Renew a document the identity owns, of a type with a ttl: it expires a ttl after this block (protocol version 15)",
		Long: "Renew document ID (type TYPE of contract CONTRACT): its $renewedAt becomes the block time, and it expires\n" +
			"the type's ttl after it. The renewal pays, per byte the document holds, the lifetime price of the ttl less\n" +
			"that of the lifetime it had left (docs/STATE.md, \"Renewal\"), plus processing; a document at or past its\n" +
			"expiry is not renewed (40140). Committed, the command prints the document's renewed_at and expires_at.",
		Args:     cobra.ExactArgs(3),
		Flags:    revisionFlags,
		Build:    documentBuild("renew"),
		Describe: describeDocument,
	})
	registerTx(txCommand{
		Kind:  protocol.TypeDocumentsBatch,
		Group: "document",
		Use:   "moderate-delete CONTRACT TYPE ID --reason TEXT --identity ID --from KEY [--save FILE] [--key-index 0]",
		Short: "Delete a document as a moderator of its contract (the type's moderatorAbilities.delete)",
		Long: "Delete document ID (type TYPE of contract CONTRACT) as one of the contract's moderators or its owner, whatever\n" +
			"canBeDeleted says. Where the type keeps a removal record (deleteKeepsRecord), a moderator may restore the\n" +
			"document for a week with `ttld tx document restore`, which takes the document exactly as it was: the command\n" +
			"reads it from the node first, prints its encoding as restore_document and, with --save, writes it to FILE.",
		Args: cobra.ExactArgs(3),
		Flags: func(cmd *cobra.Command) {
			documentSignerFlags(cmd)
			cmd.Flags().String("reason", "", "why, for the removal record (at most 256 bytes)")
			cmd.Flags().String("save", "", "write the document's encoding (hex) to this file before sending")
		},
		Build: func(in *txInput) (protocol.Transition, error) {
			t, err := buildDocument(in, "moderate-delete")
			if err != nil {
				return nil, err
			}
			if name := flagString(in.cmd, "save"); name != "" {
				if err := os.WriteFile(name, []byte(hex.EncodeToString(in.document)+"\n"), 0o600); err != nil {
					return nil, err
				}
			}
			return t, nil
		},
		Describe: func(t protocol.Transition, in *txInput, o *txOutput) {
			describeDocument(t, in, o)
			o.RestoreDocument = hex.EncodeToString(in.document)
		},
	})
	registerTx(txCommand{
		Kind:  protocol.TypeDocumentsBatch,
		Group: "document",
		Use:   "restore CONTRACT TYPE ID --document HEX|@FILE --identity ID --from KEY [--key-index 0]",
		Short: "Put back a document a moderator deleted, from its removal record (within a week)",
		Long: "Restore document ID (type TYPE of contract CONTRACT) as a moderator of the contract or its owner. --document is\n" +
			"the document's encoding as `ttld tx document moderate-delete` printed or saved it: the node checks it against\n" +
			"the removal record's hash and puts it back with its original $createdAt, owner and revision. A document past\n" +
			"its expiry is not restored (40140).",
		Args: cobra.ExactArgs(3),
		Flags: func(cmd *cobra.Command) {
			documentSignerFlags(cmd)
			cmd.Flags().String("document", "", "the document's encoding: hex digits, or @FILE holding them")
		},
		Build:    documentBuild("restore"),
		Describe: describeDocument,
	})
}

// documentSignerFlags are the flags of every document command: the signing identity
// and the index of its key.
func documentSignerFlags(cmd *cobra.Command) {
	cmd.Flags().String("identity", "", "signing identity id")
	cmd.Flags().Uint8("key-index", 0, "index of the identity key --from holds")
}

// revisionFlags are the flags of the commands on a stored document that carry its
// next revision.
func revisionFlags(cmd *cobra.Command) {
	documentSignerFlags(cmd)
	cmd.Flags().Uint64("revision", 0, revisionHelp)
}

// documentBuild is the Build of `ttld tx document NAME`: buildDocument.
func documentBuild(name string) func(in *txInput) (protocol.Transition, error) {
	return func(in *txInput) (protocol.Transition, error) { return buildDocument(in, name) }
}

// buildDocument reads the command line of `ttld tx document NAME` as the fields of one
// action (commandFields), builds it as a batch file's action is built, refusing a
// missing or malformed field before any node is asked, and returns the batch of that
// one action. A moderator's deletion leaves the document's encoding in in.document.
func buildDocument(in *txInput, name string) (protocol.Transition, error) {
	k, err := documentKindNamed(name)
	if err != nil {
		return nil, err
	}
	signer, err := identityArg(in.cmd, "identity")
	if err != nil {
		return nil, err
	}
	f, err := commandFields(k, in)
	if err != nil {
		return nil, err
	}
	a, err := parseAction(k, f, signer)
	if err != nil {
		return nil, commandError(err)
	}
	if err := completeAction(newActionReads(in.cmd), k, f, &a); err != nil {
		return nil, err
	}
	in.document, in.renews = a.Restore, a.Renews
	return &protocol.DocumentsBatch{Identity: signer, KeyIndex: flagUint8(in.cmd, "key-index"), Contract: a.Contract, Actions: []protocol.DocumentAction{a.DocumentAction}}, nil
}

// commandFields reads the command line of kind k's command as the fields of its
// action: the arguments CONTRACT TYPE, then ID for the kinds that take an id and DATA
// (inline, or @FILE) for those that take data; then the flags of the fields k takes,
// --document as hex or @FILE. A flag not given is a field not given.
func commandFields(k documentKind, in *txInput) (actionFields, error) {
	f := actionFields{Action: k.Name, Contract: in.args[0], Type: in.args[1]}
	rest := in.args[2:]
	if slices.Contains(k.Takes, "id") {
		f.ID, rest = rest[0], rest[1:]
	}
	flags := in.cmd.Flags()
	for _, key := range k.Takes {
		switch key {
		case "data":
			data, err := argOrFile(rest[0])
			if err != nil {
				return f, err
			}
			f.Data = data
		case "entropy":
			f.Entropy = flagString(in.cmd, key)
		case "revision":
			f.Revision = flagUint64(in.cmd, key)
		case "price":
			if flags.Changed(key) {
				p := flagUint64(in.cmd, key)
				f.Price = &p
			}
		case "to":
			f.To = flagString(in.cmd, key)
		case "reason":
			f.Reason = flagString(in.cmd, key)
		case "document":
			text, err := argOrFile(flagString(in.cmd, key))
			if err != nil {
				return f, err
			}
			f.Document = string(text)
		case "renew":
			f.Renew = flagBool(in.cmd, key)
		}
	}
	return f, nil
}

// argOrFile reads an argument given inline or as @FILE.
func argOrFile(arg string) ([]byte, error) {
	if name, ok := strings.CutPrefix(arg, "@"); ok {
		return os.ReadFile(name)
	}
	return []byte(arg), nil
}

// commandError reports an errField as the command line gives the field: an argument's
// (CONTRACT, TYPE, ID, DATA) as errBadArg, a flag's as errMissingFlag or errUsage.
func commandError(err error) error {
	var fe errField
	if !errors.As(err, &fe) {
		return err
	}
	switch fe.Field {
	case "contract", "type", "id", "data":
		return errBadArg{Name: strings.ToUpper(fe.Field), Value: fe.Value, Want: fe.Want}
	}
	if fe.Missing {
		return errMissingFlag{fe.Field}
	}
	return errUsage{Flag: fe.Field, Value: clip(fe.Value), Want: fe.Want}
}

func cmdContext(cmd *cobra.Command) context.Context {
	if ctx := cmd.Context(); ctx != nil {
		return ctx
	}
	return context.Background()
}

// describeDocument names the contract, type and document of a one-action batch. Of an
// action that renews the document, once committed, it adds the document's $renewedAt
// and expiry as the committed block left them (read unproven; left out when the read
// fails, the transaction's result being known all the same).
func describeDocument(t protocol.Transition, in *txInput, o *txOutput) {
	b := t.(*protocol.DocumentsBatch)
	a := b.Actions[0]
	o.Contract, o.DocumentType, o.Document = b.Contract.String(), a.Type, a.ID.String()
	if !in.renews || !o.Committed || o.Code != 0 {
		return
	}
	c, err := dialNode(in.cmd, client.Options{ChainID: flagString(in.cmd, "chain-id")})
	if err != nil {
		return
	}
	st, err := c.Document(cmdContext(in.cmd), b.Contract, a.Type, a.ID, o.Height, false)
	if err != nil || !st.Present {
		return
	}
	o.RenewedAt, o.ExpiresAt = st.RenewedAt, st.ExpiresAtMs
}
