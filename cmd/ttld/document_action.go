package main

import (
	"crypto/rand"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"slices"
	"strings"

	"github.com/spf13/cobra"

	"github.com/ttld-dev/ttld/client"
	"github.com/ttld-dev/ttld/drive"
	"github.com/ttld-dev/ttld/protocol"
)

// One document action, built the same way whether `ttld tx document KIND` sends it
// alone or `ttld tx document batch` reads it from a file (docs/TX.md, "Batches from a
// file"): the command line or the file gives its fields (actionFields), parseAction
// reads what needs no node, completeAction what the node holds.

// actionFields is one document action as a writer gives it. Each field's key in a
// batch file is also the flag of `ttld tx document KIND` that gives it, or, upper
// case, its argument (CONTRACT, TYPE, ID, DATA). A field left empty ("", nil, 0) is not
// given.
type actionFields struct {
	// Action is the kind: the name of its command (documentKind.Name).
	Action   string `json:"action"`
	Contract string `json:"contract"`
	Type     string `json:"type"`
	ID       string `json:"id,omitempty"`
	// Data is the document's properties as a JSON object (dataHelp).
	Data    json.RawMessage `json:"data,omitempty"`
	Entropy string          `json:"entropy,omitempty"`
	// Revision is the document's next revision; 0: the stored one plus one.
	Revision uint64 `json:"revision,omitempty"`
	// Price is nil when not given: a price of 0 takes a document off sale.
	Price    *uint64 `json:"price,omitempty"`
	To       string  `json:"to,omitempty"`
	Reason   string  `json:"reason,omitempty"`
	Document string  `json:"document,omitempty"`
	// Renew, on a replace, asks that the replace renew the document: its type must
	// declare renewOnReplace, which renews every replace (docs/STATE.md, "Renewal").
	Renew bool `json:"renew,omitempty"`
}

// optional returns the keys of the fields given beyond action, contract and type, which
// only some kinds take.
func (f actionFields) optional() []string {
	var keys []string
	for _, field := range []struct {
		key   string
		given bool
	}{
		{"id", f.ID != ""},
		{"data", f.Data != nil},
		{"entropy", f.Entropy != ""},
		{"revision", f.Revision != 0},
		{"price", f.Price != nil},
		{"to", f.To != ""},
		{"reason", f.Reason != ""},
		{"document", f.Document != ""},
		{"renew", f.Renew},
	} {
		if field.given {
			keys = append(keys, field.key)
		}
	}
	return keys
}

// builtAction is a document action ready to be signed in a batch, with the contract it
// writes (a batch's, which names one) and what a command prints of it.
type builtAction struct {
	protocol.DocumentAction
	Contract protocol.ContractID
	// Restore is, for a moderator's deletion, the document's encoding as read before
	// the deletion is sent: what `ttld tx document restore --document` takes back.
	Restore []byte
	// Renews: the action renews the document (a renewal, or a replace of a type that
	// declares renewOnReplace), so a command prints the expiry it moved to.
	Renews bool
}

// documentKind is one kind of document action: the command that sends it alone
// (`ttld tx document NAME`) and a batch file's "action" are both Name.
type documentKind struct {
	Name string
	Kind protocol.DocumentActionKind
	// Takes are the keys of the fields the action takes beyond action, contract and
	// type; a batch file's action that gives another is refused.
	Takes []string
	// Parse reads the fields of the kind that need no node into a, refusing a missing
	// or malformed one (errField).
	Parse func(f actionFields, a *builtAction) error
	// Complete reads from the node what the fields leave to it: the type that converts
	// the data, the stored revision, price or encoding. Nil when nothing is left.
	Complete func(r *actionReads, f actionFields, a *builtAction) error
}

// documentKinds are the kinds of document action, in the order help lists their
// commands.
var documentKinds = []documentKind{
	{
		Name: "create", Kind: protocol.ActionCreate, Takes: []string{"data", "entropy"},
		Parse: func(f actionFields, a *builtAction) (err error) {
			if a.Entropy, err = parseEntropy(f.Entropy); err != nil {
				return err
			}
			return requireData(f)
		},
		Complete: completeData,
	},
	{
		Name: "replace", Kind: protocol.ActionReplace, Takes: []string{"id", "data", "revision", "renew"},
		Parse: func(f actionFields, _ *builtAction) error { return requireData(f) },
		// A replace renews where its type declares renewOnReplace; asked to renew, it
		// is refused before signing where the type does not.
		Complete: func(r *actionReads, f actionFields, a *builtAction) error {
			if err := completeData(r, f, a); err != nil {
				return err
			}
			dt, err := r.documentType(a.Contract, a.Type)
			if err != nil {
				return err
			}
			if f.Renew && !dt.RenewOnReplace {
				return errReplaceDoesNotRenew{Type: a.Type, TTL: dt.TTLSeconds > 0}
			}
			a.Renews = dt.RenewOnReplace
			return r.nextRevision(a)
		},
	},
	{
		Name: "delete", Kind: protocol.ActionDelete, Takes: []string{"id"},
	},
	{
		Name: "transfer", Kind: protocol.ActionTransfer, Takes: []string{"id", "to", "revision"},
		Parse: func(f actionFields, a *builtAction) (err error) {
			a.Recipient, err = parseIdentityField("to", f.To)
			return err
		},
		Complete: func(r *actionReads, _ actionFields, a *builtAction) error { return r.nextRevision(a) },
	},
	{
		Name: "purchase", Kind: protocol.ActionPurchase, Takes: []string{"id", "price", "revision"},
		Parse: func(f actionFields, a *builtAction) error {
			if f.Price != nil {
				a.Price = *f.Price
			}
			return nil
		},
		// A price or revision not given is the stored document's (its price, its
		// revision plus one).
		Complete: func(r *actionReads, _ actionFields, a *builtAction) error {
			if a.Price != 0 && a.Revision != 0 {
				return nil
			}
			_, d, err := r.stored(a)
			if err != nil {
				return err
			}
			if a.Revision == 0 {
				a.Revision = d.Revision + 1
			}
			if a.Price == 0 {
				if d.Price == 0 {
					return protocol.ErrDocumentNotForSale{ID: a.ID}
				}
				a.Price = d.Price
			}
			return nil
		},
	},
	{
		Name: "set-price", Kind: protocol.ActionUpdatePrice, Takes: []string{"id", "price", "revision"},
		Parse: func(f actionFields, a *builtAction) error {
			if f.Price == nil {
				return errField{Field: "price", Missing: true, Want: "the price a buyer pays, in credits (0: not for sale)"}
			}
			a.Price = *f.Price
			return nil
		},
		Complete: func(r *actionReads, _ actionFields, a *builtAction) error { return r.nextRevision(a) },
	},
	{
		Name: "renew", Kind: protocol.ActionRenew, Takes: []string{"id", "revision"},
		Complete: func(r *actionReads, _ actionFields, a *builtAction) error {
			a.Renews = true
			return r.nextRevision(a)
		},
	},
	{
		Name: "moderate-delete", Kind: protocol.ActionModerateDelete, Takes: []string{"id", "reason"},
		Parse: func(f actionFields, a *builtAction) error {
			a.Reason = f.Reason
			return nil
		},
		// The document is read before it is deleted, so that a moderator can restore
		// it exactly as it was (docs/STATE.md, "Removal records").
		Complete: func(r *actionReads, _ actionFields, a *builtAction) error {
			dt, d, err := r.stored(a)
			if err != nil {
				return err
			}
			a.Restore = d.Encode(dt.DocumentType)
			return nil
		},
	},
	{
		Name: "restore", Kind: protocol.ActionRestore, Takes: []string{"id", "document"},
		Parse: func(f actionFields, a *builtAction) error {
			const want = "the document's encoding in hex, as moderate-delete printed it"
			if f.Document == "" {
				return errField{Field: "document", Missing: true, Want: want}
			}
			b, err := hex.DecodeString(strings.TrimSpace(f.Document))
			if err != nil {
				return errField{Field: "document", Value: f.Document, Want: want}
			}
			a.Document = b
			return nil
		},
	},
}

// documentKindNamed returns the kind of action name, refusing a name no command has.
func documentKindNamed(name string) (documentKind, error) {
	names := make([]string, len(documentKinds))
	for i, k := range documentKinds {
		if k.Name == name {
			return k, nil
		}
		names[i] = k.Name
	}
	return documentKind{}, errField{Field: "action", Value: name, Missing: name == "", Want: "one of " + strings.Join(names, ", ")}
}

// parseAction reads what f gives of an action of kind k without asking the node: the
// contract, the type, the document id (a create's derives from signer, the identity
// that signs, and the entropy), the revision, then the kind's own fields. A field k
// does not take is refused.
func parseAction(k documentKind, f actionFields, signer protocol.IdentityID) (builtAction, error) {
	for _, key := range f.optional() {
		if !slices.Contains(k.Takes, key) {
			return builtAction{}, errFieldNotTaken{Action: k.Name, Field: key, Takes: k.Takes}
		}
	}
	var a builtAction
	var err error
	if a.Contract, err = protocol.ParseContractID(f.Contract); err != nil {
		return a, errField{Field: "contract", Value: f.Contract, Missing: f.Contract == "", Want: fmt.Sprintf("a contract id of %d hex digits", 2*protocol.ContractIDLen)}
	}
	a.Kind, a.Type, a.Revision = k.Kind, f.Type, f.Revision
	if reason := protocol.ValidName(f.Type); reason != "" {
		return a, errField{Field: "type", Value: f.Type, Missing: f.Type == "", Want: "a document type name: " + reason}
	}
	if slices.Contains(k.Takes, "id") {
		if a.ID, err = protocol.ParseDocumentID(f.ID); err != nil {
			return a, errField{Field: "id", Value: f.ID, Missing: f.ID == "", Want: fmt.Sprintf("a document id of %d hex digits", 2*protocol.DocumentIDLen)}
		}
	}
	if k.Parse != nil {
		if err := k.Parse(f, &a); err != nil {
			return a, err
		}
	}
	if a.Kind == protocol.ActionCreate {
		a.ID = (&protocol.DocumentsBatch{Identity: signer, Contract: a.Contract}).CreateID(a.DocumentAction)
	}
	return a, nil
}

// completeAction reads from the node what a, parsed from f, still needs.
func completeAction(r *actionReads, k documentKind, f actionFields, a *builtAction) error {
	if k.Complete == nil {
		return nil
	}
	return k.Complete(r, f, a)
}

// parseEntropy reads a create's entropy, 64 hex digits, or draws 32 random bytes when
// it is not given.
func parseEntropy(s string) ([32]byte, error) {
	var e [32]byte
	if s == "" {
		_, err := rand.Read(e[:])
		return e, err
	}
	b, err := hex.DecodeString(s)
	if err != nil || len(b) != len(e) {
		return e, errField{Field: "entropy", Value: s, Want: fmt.Sprintf("%d hex digits", 2*len(e))}
	}
	copy(e[:], b)
	return e, nil
}

// parseIdentityField reads the identity id of field key, which must be given.
func parseIdentityField(key, s string) (protocol.IdentityID, error) {
	want := fmt.Sprintf("an identity id of %d hex digits", 2*protocol.IdentityIDLen)
	if s == "" {
		return protocol.IdentityID{}, errField{Field: key, Missing: true, Want: want}
	}
	id, err := protocol.ParseIdentityID(s)
	if err != nil {
		return id, errField{Field: key, Value: s, Want: want}
	}
	return id, nil
}

// requireData refuses a create or replace without data.
func requireData(f actionFields) error {
	if f.Data == nil {
		return errField{Field: "data", Missing: true, Want: "the document's properties as a JSON object"}
	}
	return nil
}

// completeData converts a create's or replace's data to the wire form under its type
// (client.WireDocumentData), which it reads from the node.
func completeData(r *actionReads, f actionFields, a *builtAction) error {
	dt, err := r.documentType(a.Contract, a.Type)
	if err != nil {
		return err
	}
	a.Data, err = client.WireDocumentData(dt.DocumentType, f.Data)
	return err
}

// typeKey names a document type of a contract.
type typeKey struct {
	Contract protocol.ContractID
	Type     string
}

// actionReads is what completing document actions reads from the node, unproven
// (client.TxDocumentType, client.TxStoredDocument: a wrong or stale answer only makes
// the batch refused). The node is dialled on first use and each type read once, so a
// file of many actions of one type reads its contract once.
type actionReads struct {
	cmd   *cobra.Command
	node  *client.Client
	types map[typeKey]drive.DocumentType
}

func newActionReads(cmd *cobra.Command) *actionReads {
	return &actionReads{cmd: cmd, types: map[typeKey]drive.DocumentType{}}
}

// client returns the client of --node, dialled once.
func (r *actionReads) client() (*client.Client, error) {
	if r.node == nil {
		c, err := dialNode(r.cmd, client.Options{ChainID: flagString(r.cmd, "chain-id")})
		if err != nil {
			return nil, err
		}
		r.node = c
	}
	return r.node, nil
}

// documentType reads type typeName of contract c.
func (r *actionReads) documentType(c protocol.ContractID, typeName string) (drive.DocumentType, error) {
	key := typeKey{c, typeName}
	if dt, ok := r.types[key]; ok {
		return dt, nil
	}
	cl, err := r.client()
	if err != nil {
		return drive.DocumentType{}, err
	}
	dt, err := cl.TxDocumentType(cmdContext(r.cmd), c, typeName)
	if err != nil {
		return drive.DocumentType{}, err
	}
	r.types[key] = dt
	return dt, nil
}

// stored reads the document a names, with its type; a missing one is
// protocol.ErrDocumentNotFound.
func (r *actionReads) stored(a *builtAction) (drive.DocumentType, drive.StoredDocument, error) {
	dt, err := r.documentType(a.Contract, a.Type)
	if err != nil {
		return dt, drive.StoredDocument{}, err
	}
	cl, err := r.client()
	if err != nil {
		return dt, drive.StoredDocument{}, err
	}
	d, found, err := cl.TxStoredDocument(cmdContext(r.cmd), dt, a.ID)
	if err != nil {
		return dt, drive.StoredDocument{}, err
	}
	if !found {
		return dt, drive.StoredDocument{}, protocol.ErrDocumentNotFound{ID: a.ID}
	}
	return dt, d, nil
}

// nextRevision fills in a's revision, when its fields did not give it, with the stored
// document's plus one.
func (r *actionReads) nextRevision(a *builtAction) error {
	if a.Revision != 0 {
		return nil
	}
	_, d, err := r.stored(a)
	if err != nil {
		return err
	}
	a.Revision = d.Revision + 1
	return nil
}

// errField: a field of a document action is missing or malformed. Field is its key
// (actionFields); the single-action commands report it as the flag or argument that
// gives it (commandError).
type errField struct {
	Field, Value, Want string
	// Missing: the field is not given (Value is empty).
	Missing bool
}

func (e errField) Error() string {
	if e.Missing {
		return fmt.Sprintf("%q is missing: want %s", e.Field, e.Want)
	}
	return fmt.Sprintf("%q is %q: want %s", e.Field, clip(e.Value), e.Want)
}

// errFieldNotTaken: a batch file's action gives a field its kind does not take (the
// command of that kind has no such flag).
type errFieldNotTaken struct {
	Action, Field string
	Takes         []string
}

func (e errFieldNotTaken) Error() string {
	return fmt.Sprintf("%s takes no %q (besides contract and type it takes: %s)", e.Action, e.Field, strings.Join(e.Takes, ", "))
}

// clip shortens a long value for an error message.
func clip(s string) string {
	const n = 80
	if len(s) <= n {
		return s
	}
	return s[:n-3] + "..."
}

// errReplaceDoesNotRenew: a replace asked to renew (--renew, or "renew": true in a
// batch file) names a type that does not declare renewOnReplace. Its documents are
// renewed by a renewal of their own (`ttld tx document renew`) where the type has a ttl.
type errReplaceDoesNotRenew struct {
	Type string
	// TTL: the type has a ttl.
	TTL bool
}

func (e errReplaceDoesNotRenew) Error() string {
	if !e.TTL {
		return fmt.Sprintf("a replace of a %q document does not renew it: the type has no ttl", e.Type)
	}
	return fmt.Sprintf("a replace of a %q document does not renew it: the type does not declare renewOnReplace (renew it with `ttld tx document renew`)", e.Type)
}
