package web

import (
	"crypto/ed25519"
	"encoding/hex"
	"fmt"
	"strconv"

	"github.com/ttld-dev/ttld/protocol"
	"github.com/ttld-dev/ttld/web/check"
)

// field is one field of a decoded transition as the transaction page shows it: its
// value, and the page of what the value names (Href, "" when none).
type field struct {
	Name  string `json:"name"`
	Value string `json:"value"`
	Href  string `json:"-"`
}

// describe lists the fields of transition t, every kind's in its own case: the
// accounts, contracts and documents it names linked to their pages, amounts in
// credits, definitions and document data as the JSON they carry. A kind without a
// case is an error (TestEveryKindIsDescribed): adding a kind adds its case here
// (docs/ARCHITECTURE.md, "Adding a transition kind").
func describe(t protocol.Transition) ([]field, error) {
	switch t := t.(type) {
	case *protocol.AddressFundsTransfer:
		return append(addressSigner(t.PubKey, t.Nonce),
			field{"recipient", t.Recipient.String(), accountHref(t.Recipient.String())},
			credits("amount", t.Amount)), nil
	case *protocol.IdentityCreate:
		id := protocol.NewIdentityID(protocol.AddressOf(t.PubKey), t.Nonce)
		out := append(addressSigner(t.PubKey, t.Nonce),
			field{"identity created", id.String(), accountHref(id.String())},
			credits("amount", t.Amount))
		for i, k := range t.Keys {
			out = append(out, field{fmt.Sprintf("key %d", i), hex.EncodeToString(k), ""})
		}
		return out, nil
	case *protocol.IdentityTopUp:
		return append(addressSigner(t.PubKey, t.Nonce),
			field{"identity", t.Identity.String(), accountHref(t.Identity.String())},
			credits("amount", t.Amount)), nil
	case *protocol.IdentityCreditTransfer:
		return append(identitySigner(t.Identity, t.KeyIndex, t.Nonce),
			field{"recipient", t.Recipient.String(), accountHref(t.Recipient.String())},
			credits("amount", t.Amount)), nil
	case *protocol.IdentityCreditTransferToAddress:
		return append(identitySigner(t.Identity, t.KeyIndex, t.Nonce),
			field{"recipient", t.Recipient.String(), accountHref(t.Recipient.String())},
			credits("amount", t.Amount)), nil
	case *protocol.DataContractCreate:
		c := t.ContractID().String()
		return append(identitySigner(t.Identity, t.KeyIndex, t.Nonce),
			field{"contract created", c, "/contract/" + c},
			field{"definition", string(t.Definition), ""}), nil
	case *protocol.DataContractUpdate:
		c := t.Contract.String()
		return append(identitySigner(t.Identity, t.KeyIndex, t.Nonce),
			field{"contract", c, "/contract/" + c},
			field{"version", strconv.FormatUint(uint64(t.Version), 10), ""},
			field{"definition", string(t.Definition), ""}), nil
	case *protocol.DocumentsBatch:
		c := t.Contract.String()
		out := append(identitySigner(t.Identity, t.KeyIndex, t.Nonce), field{"contract", c, "/contract/" + c})
		for i, a := range t.Actions {
			out = append(out, documentAction(i, c, a)...)
		}
		return out, nil
	case *protocol.ValidatorSetProposal:
		ch := t.Change
		out := append(identitySigner(t.Identity, t.KeyIndex, t.Nonce),
			field{"change", ch.Kind.String(), ""},
			field{"validator", ch.Target().String(), ""})
		if ch.Kind == protocol.ValidatorAdd || ch.Kind == protocol.ValidatorRotate {
			out = append(out, field{"consensus key", hex.EncodeToString(ch.PubKey), ""})
		}
		if ch.Kind == protocol.ValidatorAdd || ch.Kind == protocol.ValidatorPower {
			out = append(out, field{"power", strconv.FormatUint(ch.Power, 10), ""})
		}
		if ch.Kind == protocol.ValidatorAdd {
			out = append(out, field{"operator", ch.Operator.String(), accountHref(ch.Operator.String())})
		}
		return out, nil
	case *protocol.ValidatorSetApproval:
		return append(identitySigner(t.Identity, t.KeyIndex, t.Nonce),
			field{"proposal", strconv.FormatUint(t.Proposal, 10), ""}), nil
	}
	return nil, fmt.Errorf("web: no description of the transition kind %s", t.Type())
}

// addressSigner are the fields of a transition an address signs with its key.
func addressSigner(pub ed25519.PublicKey, nonce uint64) []field {
	a := protocol.AddressOf(pub).String()
	return []field{
		{"signer's key", hex.EncodeToString(pub), ""},
		{"signer", a, accountHref(a)},
		{"nonce", strconv.FormatUint(nonce, 10), ""},
	}
}

// identitySigner are the fields of a transition an identity signs with its key at
// index.
func identitySigner(id protocol.IdentityID, index uint8, nonce uint64) []field {
	return []field{
		{"signer", id.String(), accountHref(id.String())},
		{"key index", strconv.FormatUint(uint64(index), 10), ""},
		{"nonce", strconv.FormatUint(nonce, 10), ""},
	}
}

func credits(name string, n uint64) field { return field{name, check.Credits(n) + " credits", ""} }

// documentAction are the fields of action i of a documents batch of contract c: its
// kind, type and document (linked), then what the kind carries.
func documentAction(i int, c string, a protocol.DocumentAction) []field {
	name := func(what string) string { return fmt.Sprintf("action %d %s", i, what) }
	out := []field{{fmt.Sprintf("action %d", i), a.Kind.String() + " " + a.Type + " " + a.ID.String(), documentHref(c, a.Type, a.ID.String())}}
	if a.Entropy != ([32]byte{}) {
		out = append(out, field{name("entropy"), hex.EncodeToString(a.Entropy[:]), ""})
	}
	if a.Revision > 0 {
		out = append(out, field{name("revision"), strconv.FormatUint(a.Revision, 10), ""})
	}
	if len(a.Data) > 0 {
		out = append(out, field{name("data"), string(a.Data), ""})
	}
	if a.Recipient != (protocol.IdentityID{}) {
		out = append(out, field{name("recipient"), a.Recipient.String(), accountHref(a.Recipient.String())})
	}
	if a.Price > 0 || a.Kind == protocol.ActionUpdatePrice || a.Kind == protocol.ActionPurchase {
		out = append(out, credits(name("price"), a.Price))
	}
	if a.Reason != "" {
		out = append(out, field{name("reason"), a.Reason, ""})
	}
	if len(a.Document) > 0 {
		out = append(out, field{name("document"), hex.EncodeToString(a.Document), ""})
	}
	return out
}
