package main

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"fmt"
	"os"
	"strings"

	"github.com/spf13/cobra"

	"github.com/ttld-dev/ttld/client"
	"github.com/ttld-dev/ttld/drive"
	"github.com/ttld-dev/ttld/protocol"
)

// The commands of `ttld tx document`: each sends a documents_batch of one action.

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
		Build: func(in *txInput) (protocol.Transition, error) {
			b, err := documentBatch(in, protocol.ActionCreate)
			if err != nil {
				return nil, err
			}
			a := &b.Actions[0]
			if a.Entropy, err = entropyFlag(in.cmd); err != nil {
				return nil, err
			}
			dt, err := documentType(in.cmd, b.Contract, a.Type)
			if err != nil {
				return nil, err
			}
			if a.Data, err = documentData(dt, in.args[2]); err != nil {
				return nil, err
			}
			a.ID = b.CreateID(*a)
			return b, nil
		},
		Describe: describeDocument,
	})
	registerTx(txCommand{
		Kind:  protocol.TypeDocumentsBatch,
		Group: "document",
		Use:   "replace CONTRACT TYPE ID DATA --identity ID --from KEY [--revision N] [--key-index 0]",
		Short: "Replace the properties of a document the identity owns",
		Long:  "Replace every property of document ID (type TYPE of contract CONTRACT) by those of DATA.\n\n" + dataHelp,
		Args:  cobra.ExactArgs(4),
		Flags: revisionFlags,
		Build: func(in *txInput) (protocol.Transition, error) {
			b, err := documentBatch(in, protocol.ActionReplace)
			if err != nil {
				return nil, err
			}
			dt, err := documentType(in.cmd, b.Contract, b.Actions[0].Type)
			if err != nil {
				return nil, err
			}
			if b.Actions[0].Data, err = documentData(dt, in.args[3]); err != nil {
				return nil, err
			}
			return b, nextRevision(in.cmd, dt, &b.Actions[0])
		},
		Describe: describeDocument,
	})
	registerTx(txCommand{
		Kind:  protocol.TypeDocumentsBatch,
		Group: "document",
		Use:   "delete CONTRACT TYPE ID --identity ID --from KEY [--key-index 0]",
		Short: "Delete a document the identity owns (its storage fee is refunded as far as it has not paid out)",
		Args:  cobra.ExactArgs(3),
		Flags: documentSignerFlags,
		Build: func(in *txInput) (protocol.Transition, error) {
			return documentBatch(in, protocol.ActionDelete)
		},
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
		Build: func(in *txInput) (protocol.Transition, error) {
			b, err := documentBatch(in, protocol.ActionTransfer)
			if err != nil {
				return nil, err
			}
			if b.Actions[0].Recipient, err = identityArg(in.cmd, "to"); err != nil {
				return nil, err
			}
			dt, err := documentType(in.cmd, b.Contract, b.Actions[0].Type)
			if err != nil {
				return nil, err
			}
			return b, nextRevision(in.cmd, dt, &b.Actions[0])
		},
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
		Build: func(in *txInput) (protocol.Transition, error) {
			b, err := documentBatch(in, protocol.ActionPurchase)
			if err != nil {
				return nil, err
			}
			a := &b.Actions[0]
			a.Price = flagUint64(in.cmd, "price")
			if a.Price != 0 && a.Revision != 0 {
				return b, nil
			}
			dt, err := documentType(in.cmd, b.Contract, a.Type)
			if err != nil {
				return nil, err
			}
			d, err := storedDocument(in.cmd, dt, a.ID)
			if err != nil {
				return nil, err
			}
			if a.Revision == 0 {
				a.Revision = d.Revision + 1
			}
			if a.Price == 0 {
				if d.Price == 0 {
					return nil, protocol.ErrDocumentNotForSale{ID: a.ID}
				}
				a.Price = d.Price
			}
			return b, nil
		},
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
		Build: func(in *txInput) (protocol.Transition, error) {
			if !in.cmd.Flags().Changed("price") {
				return nil, errMissingFlag{"price"}
			}
			b, err := documentBatch(in, protocol.ActionUpdatePrice)
			if err != nil {
				return nil, err
			}
			b.Actions[0].Price = flagUint64(in.cmd, "price")
			dt, err := documentType(in.cmd, b.Contract, b.Actions[0].Type)
			if err != nil {
				return nil, err
			}
			return b, nextRevision(in.cmd, dt, &b.Actions[0])
		},
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

// documentBatch reads what every document command has, before any node is asked: the
// contract, the type, the document id (all but a create), the signing identity and,
// for the commands that take it, --revision. It returns a batch of one action of kind.
func documentBatch(in *txInput, kind protocol.DocumentActionKind) (*protocol.DocumentsBatch, error) {
	c, err := protocol.ParseContractID(in.args[0])
	if err != nil {
		return nil, errBadArg{Name: "CONTRACT", Value: in.args[0], Want: fmt.Sprintf("a contract id of %d hex digits", 2*protocol.ContractIDLen)}
	}
	a := protocol.DocumentAction{Kind: kind, Type: in.args[1]}
	if reason := protocol.ValidName(a.Type); reason != "" {
		return nil, errBadArg{Name: "TYPE", Value: a.Type, Want: "a document type name: " + reason}
	}
	if kind != protocol.ActionCreate {
		if a.ID, err = protocol.ParseDocumentID(in.args[2]); err != nil {
			return nil, errBadArg{Name: "ID", Value: in.args[2], Want: fmt.Sprintf("a document id of %d hex digits", 2*protocol.DocumentIDLen)}
		}
	}
	if in.cmd.Flags().Lookup("revision") != nil {
		a.Revision = flagUint64(in.cmd, "revision")
	}
	owner, err := identityArg(in.cmd, "identity")
	if err != nil {
		return nil, err
	}
	return &protocol.DocumentsBatch{Identity: owner, KeyIndex: flagUint8(in.cmd, "key-index"), Contract: c, Actions: []protocol.DocumentAction{a}}, nil
}

// entropyFlag reads --entropy, or draws 32 random bytes when it is not given.
func entropyFlag(cmd *cobra.Command) ([32]byte, error) {
	var e [32]byte
	s := flagString(cmd, "entropy")
	if s == "" {
		_, err := rand.Read(e[:])
		return e, err
	}
	b, err := hex.DecodeString(s)
	if err != nil || len(b) != len(e) {
		return e, errUsage{Flag: "entropy", Value: s, Want: fmt.Sprintf("%d hex digits", 2*len(e))}
	}
	copy(e[:], b)
	return e, nil
}

// documentData reads DATA (inline JSON, or @FILE) and converts it to the wire form
// under type dt (client.WireDocumentData).
func documentData(dt drive.DocumentType, arg string) ([]byte, error) {
	data := []byte(arg)
	if name, ok := strings.CutPrefix(arg, "@"); ok {
		var err error
		if data, err = os.ReadFile(name); err != nil {
			return nil, err
		}
	}
	return client.WireDocumentData(dt.DocumentType, data)
}

// documentType reads type typeName of contract c from the node (unproven).
func documentType(cmd *cobra.Command, c protocol.ContractID, typeName string) (drive.DocumentType, error) {
	cl, err := dialNode(cmd, client.Options{ChainID: flagString(cmd, "chain-id")})
	if err != nil {
		return drive.DocumentType{}, err
	}
	return cl.TxDocumentType(cmdContext(cmd), c, typeName)
}

// storedDocument reads document id of type dt from the node (unproven: a wrong answer
// only makes the batch refused).
func storedDocument(cmd *cobra.Command, dt drive.DocumentType, id protocol.DocumentID) (drive.StoredDocument, error) {
	cl, err := dialNode(cmd, client.Options{ChainID: flagString(cmd, "chain-id")})
	if err != nil {
		return drive.StoredDocument{}, err
	}
	d, found, err := cl.TxStoredDocument(cmdContext(cmd), dt, id)
	if err != nil {
		return drive.StoredDocument{}, err
	}
	if !found {
		return drive.StoredDocument{}, protocol.ErrDocumentNotFound{ID: id}
	}
	return d, nil
}

// nextRevision fills in a's revision, when --revision did not give it, with the stored
// document's plus one.
func nextRevision(cmd *cobra.Command, dt drive.DocumentType, a *protocol.DocumentAction) error {
	if a.Revision != 0 {
		return nil
	}
	d, err := storedDocument(cmd, dt, a.ID)
	if err != nil {
		return err
	}
	a.Revision = d.Revision + 1
	return nil
}

func cmdContext(cmd *cobra.Command) context.Context {
	if ctx := cmd.Context(); ctx != nil {
		return ctx
	}
	return context.Background()
}

// describeDocument names the contract, type and document of a one-action batch.
func describeDocument(t protocol.Transition, _ *txInput, o *txOutput) {
	b := t.(*protocol.DocumentsBatch)
	o.Contract, o.DocumentType, o.Document = b.Contract.String(), b.Actions[0].Type, b.Actions[0].ID.String()
}

func init() {
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
			b, err := documentBatch(in, protocol.ActionModerateDelete)
			if err != nil {
				return nil, err
			}
			a := &b.Actions[0]
			a.Reason = flagString(in.cmd, "reason")
			dt, err := documentType(in.cmd, b.Contract, a.Type)
			if err != nil {
				return nil, err
			}
			d, err := storedDocument(in.cmd, dt, a.ID)
			if err != nil {
				return nil, err
			}
			in.document = d.Encode(dt.DocumentType)
			if name := flagString(in.cmd, "save"); name != "" {
				if err := os.WriteFile(name, []byte(hex.EncodeToString(in.document)+"\n"), 0o600); err != nil {
					return nil, err
				}
			}
			return b, nil
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
		Build: func(in *txInput) (protocol.Transition, error) {
			b, err := documentBatch(in, protocol.ActionRestore)
			if err != nil {
				return nil, err
			}
			arg := flagString(in.cmd, "document")
			if arg == "" {
				return nil, errMissingFlag{"document"}
			}
			text := []byte(arg)
			if name, ok := strings.CutPrefix(arg, "@"); ok {
				if text, err = os.ReadFile(name); err != nil {
					return nil, err
				}
			}
			if b.Actions[0].Document, err = hex.DecodeString(strings.TrimSpace(string(text))); err != nil {
				return nil, errUsage{Flag: "document", Value: arg, Want: "the document's encoding in hex, or @FILE holding it"}
			}
			return b, nil
		},
		Describe: describeDocument,
	})
}
