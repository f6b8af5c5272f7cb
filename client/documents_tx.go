package client

import (
	"bytes"
	"context"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"slices"
	"strconv"
	"strings"

	"github.com/ttld-dev/ttld/drive"
	"github.com/ttld-dev/ttld/proofs"
	"github.com/ttld-dev/ttld/protocol"
)

// What a writer of documents reads before it signs a documents batch: the type of the
// documents (to convert their data), the stored document an action names (its
// revision, its price) and the limits of the protocol version in force (how many
// actions and bytes a batch may carry). All are read unproven from the latest saved
// state: a wrong or stale answer only makes the batch refused.

// TxDocumentType reads document type typeName of contract id from the latest saved
// state, unproven. A missing contract is protocol.ErrDataContractNotFound, a missing
// type protocol.ErrDocumentTypeNotFound.
func (c *Client) TxDocumentType(ctx context.Context, id protocol.ContractID, typeName string) (drive.DocumentType, error) {
	st, err := c.Contract(ctx, id, 0, false)
	if err != nil {
		return drive.DocumentType{}, err
	}
	if !st.Present {
		return drive.DocumentType{}, protocol.ErrDataContractNotFound{ID: id}
	}
	t, ok := st.DocumentType(typeName)
	if !ok {
		return drive.DocumentType{}, protocol.ErrDocumentTypeNotFound{Contract: id, Type: typeName}
	}
	return drive.DocumentType{Contract: id, DocumentType: t}, nil
}

// TxStoredDocument reads document id of type t from the latest saved state, unproven:
// the raw row at drive.DocumentKey, decoded under t. found is false when no such
// document is stored.
func (c *Client) TxStoredDocument(ctx context.Context, t drive.DocumentType, id protocol.DocumentID) (d drive.StoredDocument, found bool, err error) {
	key := drive.DocumentKey(t.Contract, t.Name, id)
	v, _, err := c.single(ctx, proofs.PathKey, key, 0, false)
	if err != nil || v == nil {
		return drive.StoredDocument{}, false, err
	}
	d, err = drive.DecodeStoredDocument(key, v, t.DocumentType)
	if err != nil {
		return drive.StoredDocument{}, false, ErrCorruptValue{Key: key, Err: err}
	}
	if d.ID != id {
		return drive.StoredDocument{}, false, ErrInconsistentAnswer{Path: proofs.PathKey, Reason: "the stored document names another id"}
	}
	return d, true, nil
}

// TxLimits reads the protocol version in force in the latest saved state, unproven, and
// returns it with its limits (protocol.LimitsFor): what a writer checks a transaction
// against before it signs, such as MaxTxBytes and MaxDocumentActions. A wrong or stale
// answer (an upgrade scheduled at a later height) only makes the transaction refused. A
// version this build does not implement is an error.
func (c *Client) TxLimits(ctx context.Context) (protocol.Version, protocol.Limits, error) {
	key := drive.ProtocolVersionKey()
	v, _, err := c.single(ctx, proofs.PathKey, key, 0, false)
	if err != nil {
		return 0, protocol.Limits{}, err
	}
	version, err := drive.GetProtocolVersion(proofs.SingleKV(key, v))
	if err != nil {
		return 0, protocol.Limits{}, corrupt(err)
	}
	lim, err := protocol.LimitsFor(version)
	if err != nil {
		return 0, protocol.Limits{}, err
	}
	return version, lim, nil
}

// ErrDocumentData: the data given for a document is not a JSON object, or a byte array
// or identifier property of it is a string that is no hex form.
type ErrDocumentData struct {
	Type     string
	Property string // empty when the data as a whole is refused
	Reason   string
}

func (e ErrDocumentData) Error() string {
	if e.Property == "" {
		return fmt.Sprintf("client: data of a %q document: %s", e.Type, e.Reason)
	}
	return fmt.Sprintf("client: data of a %q document, property %q: %s", e.Type, e.Property, e.Reason)
}

// WireDocumentData converts the data a writer gives for a document of type t to the
// form the node reads (protocol.ParseDocumentData), where a byte array or identifier
// property is an array of integers 0..255. Here such a property may also be given as a
// string: "0x" followed by hex digits (any even number, "0x" alone is empty), or exactly
// 64 hex digits (an id as ttld prints it). Strings of string properties, and every
// other value, are left as they are, as is data that needs no conversion (byte for
// byte); the node validates the result.
func WireDocumentData(t protocol.DocumentType, data []byte) ([]byte, error) {
	dec := json.NewDecoder(bytes.NewReader(data))
	dec.UseNumber()
	var obj map[string]any
	if err := dec.Decode(&obj); err != nil || obj == nil || dec.More() {
		return nil, ErrDocumentData{Type: t.Name, Reason: "not one JSON object"}
	}
	changed := false
	for _, p := range t.Properties {
		switch p.Type {
		case protocol.PropertyByteArray, protocol.PropertyIdentifier:
			s, ok := obj[p.Name].(string)
			if !ok {
				continue
			}
			items, err := byteItems(s)
			if err != nil {
				return nil, ErrDocumentData{Type: t.Name, Property: p.Name, Reason: err.Error()}
			}
			obj[p.Name], changed = items, true
		case protocol.PropertyIdentifierList:
			list, ok := obj[p.Name].([]any)
			if !ok {
				continue
			}
			for i, x := range list {
				s, ok := x.(string)
				if !ok {
					continue
				}
				items, err := byteItems(s)
				if err != nil {
					return nil, ErrDocumentData{Type: t.Name, Property: fmt.Sprintf("%s/%d", p.Name, i), Reason: err.Error()}
				}
				list[i], changed = items, true
			}
		}
	}
	if !changed {
		return data, nil
	}
	return json.Marshal(obj)
}

// byteItems reads the string form of a byte array as the integers of its wire form.
func byteItems(s string) ([]json.Number, error) {
	b, err := hexBytes(s)
	if err != nil {
		return nil, err
	}
	items := make([]json.Number, len(b))
	for i, x := range b {
		items[i] = json.Number(strconv.Itoa(int(x)))
	}
	return items, nil
}

// hexBytes reads the string form of a byte array: "0x<hex>" or 64 hex digits.
func hexBytes(s string) ([]byte, error) {
	const want = `a byte array is an array of integers 0..255, "0x<hex>" or 64 hex digits`
	digits, prefixed := strings.CutPrefix(s, "0x")
	if !prefixed && len(s) != 2*protocol.DocumentIDLen {
		return nil, fmt.Errorf("%q: %s", s, want)
	}
	b, err := hex.DecodeString(digits)
	if err != nil {
		return nil, fmt.Errorf("%q: %s", s, want)
	}
	return b, nil
}

// ReadableDocumentData writes the values of d as JSON for people (keys in byte order):
// protocol.DocumentData, except that a byte array is "0x<hex>" and an identifier its 64
// hex digits (an identifier list, an array of those), the forms WireDocumentData reads
// back.
func ReadableDocumentData(t protocol.DocumentType, d protocol.Document) []byte {
	var obj map[string]any
	dec := json.NewDecoder(bytes.NewReader(protocol.DocumentData(t, d)))
	dec.UseNumber()
	if err := dec.Decode(&obj); err != nil {
		panic("client: protocol.DocumentData wrote no JSON object: " + err.Error())
	}
	for _, p := range t.Properties {
		v := d.Value(p.Position)
		if !v.Set {
			continue
		}
		switch p.Type {
		case protocol.PropertyIdentifier:
			obj[p.Name] = hex.EncodeToString(v.Bytes)
		case protocol.PropertyByteArray:
			obj[p.Name] = "0x" + hex.EncodeToString(v.Bytes)
		case protocol.PropertyIdentifierList:
			ids := []string{}
			for id := range slices.Chunk(v.Bytes, protocol.IdentityIDLen) {
				ids = append(ids, hex.EncodeToString(id))
			}
			obj[p.Name] = ids
		}
	}
	out, _ := json.Marshal(obj)
	return out
}
