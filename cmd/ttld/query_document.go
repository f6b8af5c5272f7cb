package main

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"strings"

	"github.com/spf13/cobra"

	"github.com/ttld-dev/ttld/client"
	"github.com/ttld-dev/ttld/protocol"
)

// newQueryDocumentCmds are `ttld query document|documents|count|sum`.
func newQueryDocumentCmds() []*cobra.Command {
	document := &cobra.Command{
		Use:   "document CONTRACT TYPE ID [--revision N]",
		Short: "One document by id: its system fields and its data (or, with --revision, that revision of a type that keeps history)",
		Args:  cobra.ExactArgs(3),
		RunE: func(cmd *cobra.Command, args []string) error {
			revision, err := cmd.Flags().GetUint64("revision")
			if err != nil {
				return err
			}
			contract, err := contractPos(args[0])
			if err != nil {
				return err
			}
			id, err := protocol.ParseDocumentID(args[2])
			if err != nil {
				return errBadArg{Name: "ID", Value: args[2], Want: fmt.Sprintf("a document id of %d hex digits", 2*protocol.DocumentIDLen)}
			}
			return runQuery(cmd, func(ctx context.Context, c *client.Client, height int64, prove bool) (queryOutput, error) {
				st, err := c.DocumentRevision(ctx, contract, args[1], id, revision, height, prove)
				if err != nil {
					return nil, err
				}
				return documentOutput(st), nil
			})
		},
	}

	document.Flags().Uint64("revision", 0, "a revision kept by a type with documentsKeepHistory (0: the document as it is)")

	documents := &cobra.Command{
		Use:   "documents CONTRACT TYPE [--where 'FIELD OP VALUE']... [--order-by 'FIELD asc|desc']... [--limit N] [--start-after ID | --start-at ID]",
		Short: "The documents of a type that match a query, in an index's order; with --prove, proven complete",
		Long: `The documents of a type that match where clauses, in the order of the index that serves
them. OP is ==, in, <, <=, >, >= or startsWith. VALUE is JSON when it parses as JSON (5,
"5", ["a","b"], true), else a plain string (home); identifiers are 64 hex digits.
With --prove the answer is checked complete: no document of the range the query reads is
left out, and each one shown is the document its index entry names.`,
		Args: cobra.ExactArgs(2),
		RunE: func(cmd *cobra.Command, args []string) error {
			contract, err := contractPos(args[0])
			if err != nil {
				return err
			}
			query, err := documentsQuery(cmd)
			if err != nil {
				return err
			}
			return runQuery(cmd, func(ctx context.Context, c *client.Client, height int64, prove bool) (queryOutput, error) {
				a, err := c.Documents(ctx, contract, args[1], query, height, prove)
				if err != nil {
					return nil, err
				}
				if !flagBool(cmd, "exclude-expired") {
					return documentsOutput(contract, a, nil, 0), nil
				}
				at, err := c.BlockTime(ctx, a.Height, prove)
				if err != nil {
					return nil, err
				}
				live, expired := a.SplitExpired(at)
				a.Documents = live
				return documentsOutput(contract, a, expired, at), nil
			})
		},
	}
	documents.Flags().StringArray("where", nil, "a where clause 'FIELD OP VALUE' (repeatable)")
	documents.Flags().StringArray("order-by", nil, "an order 'FIELD asc' or 'FIELD desc' (repeatable)")
	documents.Flags().Int64("limit", 0, "at most this many documents (0: the protocol's maximum, 100)")
	documents.Flags().String("start-after", "", "start right after this document id")
	documents.Flags().String("start-at", "", "start at this document id")
	documents.MarkFlagsMutuallyExclusive("start-after", "start-at")
	documents.Flags().Bool("exclude-expired", false, "leave out documents past their expiry that the cleanup has not deleted yet, judged at the (proven) block time of the state read; the output names each one left out, as proven present")

	count := newQueryCountCmd("count", "How many documents have the where clauses' values, from a countable index's count record")
	sum := newQueryCountCmd("sum", "How many documents have the where clauses' values and the sum of a summable index's property")
	return []*cobra.Command{document, documents, count, sum}
}

func newQueryCountCmd(name, short string) *cobra.Command {
	cmd := &cobra.Command{
		Use:   name + " CONTRACT TYPE [--index NAME] [--where 'FIELD == VALUE']...",
		Short: short + "; with --prove, the record proven present or absent",
		Args:  cobra.ExactArgs(2),
		RunE: func(cmd *cobra.Command, args []string) error {
			contract, err := contractPos(args[0])
			if err != nil {
				return err
			}
			var where []byte
			if clauses := flagStringArray(cmd, "where"); len(clauses) > 0 {
				w, err := whereClauses(clauses)
				if err != nil {
					return err
				}
				if where, err = json.Marshal(map[string]any{"where": w}); err != nil {
					return err
				}
			}
			index := flagString(cmd, "index")
			return runQuery(cmd, func(ctx context.Context, c *client.Client, height int64, prove bool) (queryOutput, error) {
				read := c.Count
				if name == "sum" {
					read = c.Sum
				}
				a, err := read(ctx, contract, args[1], index, where, height, prove)
				if err != nil {
					return nil, err
				}
				return countJSON{Contract: contract.String(), Type: args[1], Index: a.Index, Count: a.Count, Sum: a.Sum.String(), Height: a.Height}, nil
			})
		},
	}
	cmd.Flags().StringArray("where", nil, "an equality 'FIELD == VALUE' on a leading property of the index (repeatable)")
	cmd.Flags().String("index", "", "the index whose record to read (default: the first that fits)")
	return cmd
}

func flagStringArray(cmd *cobra.Command, name string) []string {
	v, err := cmd.Flags().GetStringArray(name)
	if err != nil {
		panic(err)
	}
	return v
}

// documentsQuery builds the query JSON from the flags of `query documents`.
func documentsQuery(cmd *cobra.Command) ([]byte, error) {
	q := map[string]any{}
	if clauses := flagStringArray(cmd, "where"); len(clauses) > 0 {
		w, err := whereClauses(clauses)
		if err != nil {
			return nil, err
		}
		q["where"] = w
	}
	var order [][2]string
	for _, o := range flagStringArray(cmd, "order-by") {
		f := strings.Fields(o)
		if len(f) != 2 || (f[1] != "asc" && f[1] != "desc") {
			return nil, errUsage{Flag: "order-by", Value: o, Want: "'FIELD asc' or 'FIELD desc'"}
		}
		order = append(order, [2]string{f[0], f[1]})
	}
	if order != nil {
		q["orderBy"] = order
	}
	if n := flagInt64(cmd, "limit"); n != 0 {
		q["limit"] = n
	}
	if s := flagString(cmd, "start-after"); s != "" {
		q["startAfter"] = s
	}
	if s := flagString(cmd, "start-at"); s != "" {
		q["startAt"] = s
	}
	return json.Marshal(q)
}

// whereClauses reads 'FIELD OP VALUE' clauses into the query's [field, op, value] form.
func whereClauses(clauses []string) ([][3]any, error) {
	out := make([][3]any, 0, len(clauses))
	for _, c := range clauses {
		field, rest, _ := strings.Cut(strings.TrimSpace(c), " ")
		op, value, _ := strings.Cut(strings.TrimSpace(rest), " ")
		value = strings.TrimSpace(value)
		if field == "" || op == "" || value == "" {
			return nil, errUsage{Flag: "where", Value: c, Want: "'FIELD OP VALUE'"}
		}
		var v any = value
		if json.Valid([]byte(value)) {
			v = json.RawMessage(value)
		}
		out = append(out, [3]any{field, op, v})
	}
	return out, nil
}

type documentJSON struct {
	ID            string `json:"id"`
	Present       bool   `json:"present"`
	Owner         string `json:"owner,omitempty"`
	Revision      uint64 `json:"revision,omitempty"`
	CreatedAt     uint64 `json:"created_at,omitempty"`
	UpdatedAt     uint64 `json:"updated_at,omitempty"`
	TransferredAt uint64 `json:"transferred_at,omitempty"`
	// RenewedAt is the document's $renewedAt once it has been renewed (protocol
	// version 15); absent until then, when it reads its $createdAt.
	RenewedAt uint64 `json:"renewed_at,omitempty"`
	Price     uint64 `json:"price,omitempty"`
	// Data is the document's values as JSON, byte arrays in hex (client.ReadableDocumentData).
	Data json.RawMessage `json:"data,omitempty"`
}

func documentFields(t protocol.DocumentType, d protocol.Document) documentJSON {
	return documentJSON{
		ID: d.ID.String(), Present: true, Owner: d.Owner.String(), Revision: d.Revision,
		CreatedAt: d.CreatedAt, UpdatedAt: d.UpdatedAt, TransferredAt: d.TransferredAt, RenewedAt: d.RenewedAt, Price: d.Price,
		Data: client.ReadableDocumentData(t, d),
	}
}

func (d documentJSON) text(w io.Writer) {
	fmt.Fprintf(w, "document: %s\n", d.ID)
	if !d.Present {
		fmt.Fprintln(w, "present: false")
		return
	}
	fmt.Fprintf(w, "owner: %s\n", d.Owner)
	fmt.Fprintf(w, "revision: %d\n", d.Revision)
	fmt.Fprintf(w, "created: %d updated: %d transferred: %d\n", d.CreatedAt, d.UpdatedAt, d.TransferredAt)
	if d.RenewedAt != 0 {
		fmt.Fprintf(w, "renewed: %d\n", d.RenewedAt)
	}
	if d.Price > 0 {
		fmt.Fprintf(w, "price: %d\n", d.Price)
	}
	fmt.Fprintf(w, "data: %s\n", d.Data)
}

type documentStateJSON struct {
	Contract string `json:"contract"`
	Type     string `json:"type"`
	documentJSON
	// ExpiresAt and Expired are set for a document of a type with a ttl: its expiry,
	// and whether the block time of the state read (BlockTime) is at or past it.
	ExpiresAt uint64 `json:"expires_at,omitempty"`
	Expired   *bool  `json:"expired,omitempty"`
	BlockTime uint64 `json:"block_time,omitempty"`
	Height    int64  `json:"height"`
}

func documentOutput(st client.DocumentState) documentStateJSON {
	out := documentStateJSON{Contract: st.Contract.String(), Type: st.Type.Name, documentJSON: documentJSON{ID: st.ID.String()}, Height: st.Height}
	if st.Present {
		out.documentJSON = documentFields(st.Type, st.Document)
	}
	if st.ExpiresAtMs > 0 {
		expired := st.Expired
		out.ExpiresAt, out.Expired, out.BlockTime = st.ExpiresAtMs, &expired, st.BlockTimeMs
	}
	return out
}

func (o documentStateJSON) verdict() (bool, int64) { return o.Present, o.Height }

func (o documentStateJSON) text(w io.Writer) {
	fmt.Fprintf(w, "contract: %s\n", o.Contract)
	fmt.Fprintf(w, "height: %d\n", o.Height)
	o.documentJSON.text(w)
	if o.Expired != nil {
		state := "not expired"
		if *o.Expired {
			state = "EXPIRED, waiting for the cleanup"
		}
		fmt.Fprintf(w, "expires at: %d (%s at block time %d)\n", o.ExpiresAt, state, o.BlockTime)
	}
}

type documentsJSON struct {
	Contract  string         `json:"contract"`
	Type      string         `json:"type"`
	Index     string         `json:"index"`
	Documents []documentJSON `json:"documents"`
	// ExpiredLeftOut (with --exclude-expired) are the documents the answer proved
	// present that were left out: at or past their expiry at BlockTime, the proven
	// time of the state read, and not yet deleted by the cleanup.
	ExpiredLeftOut []expiredJSON `json:"expired_left_out,omitempty"`
	BlockTime      uint64        `json:"block_time,omitempty"`
	Height         int64         `json:"height"`
}

// expiredJSON is a document left out as expired.
type expiredJSON struct {
	ID        string `json:"id"`
	ExpiresAt uint64 `json:"expires_at"`
}

// documentsOutput renders an answer; expired are the documents it proved present
// that were left out as expired at blockTimeMs (with --exclude-expired; nil otherwise).
func documentsOutput(contract protocol.ContractID, a client.DocumentsAnswer, expired []protocol.Document, blockTimeMs uint64) documentsJSON {
	out := documentsJSON{Contract: contract.String(), Type: a.Type.Name, Index: a.Query.Index.Name, Documents: []documentJSON{}, BlockTime: blockTimeMs, Height: a.Height}
	for _, d := range a.Documents {
		out.Documents = append(out.Documents, documentFields(a.Type, d))
	}
	for _, d := range expired {
		at, _ := a.Type.ExpiresAtMs(d)
		out.ExpiredLeftOut = append(out.ExpiredLeftOut, expiredJSON{ID: d.ID.String(), ExpiresAt: at})
	}
	return out
}

// verdict: the answer proved documents present (some, shown or left out as expired)
// or the range empty.
func (o documentsJSON) verdict() (bool, int64) {
	return len(o.Documents)+len(o.ExpiredLeftOut) > 0, o.Height
}

func (o documentsJSON) text(w io.Writer) {
	fmt.Fprintf(w, "contract: %s\n", o.Contract)
	fmt.Fprintf(w, "type: %s (index %s)\n", o.Type, o.Index)
	fmt.Fprintf(w, "height: %d\n", o.Height)
	fmt.Fprintf(w, "documents: %d\n", len(o.Documents))
	for _, d := range o.Documents {
		d.text(w)
	}
	if len(o.ExpiredLeftOut) > 0 {
		fmt.Fprintf(w, "left out: %d present but expired at block time %d, not yet deleted by the cleanup\n", len(o.ExpiredLeftOut), o.BlockTime)
		for _, e := range o.ExpiredLeftOut {
			fmt.Fprintf(w, "  %s expired at %d\n", e.ID, e.ExpiresAt)
		}
	}
}

type countJSON struct {
	Contract string `json:"contract"`
	Type     string `json:"type"`
	Index    string `json:"index"`
	Count    uint64 `json:"count"`
	// Sum is a decimal: the sum of a summable property is a 128-bit integer.
	Sum    string `json:"sum"`
	Height int64  `json:"height"`
}

// verdict: the count record is present (count > 0) or proven absent.
func (o countJSON) verdict() (bool, int64) { return o.Count > 0, o.Height }

func (o countJSON) text(w io.Writer) {
	fmt.Fprintf(w, "contract: %s\n", o.Contract)
	fmt.Fprintf(w, "type: %s (index %s)\n", o.Type, o.Index)
	fmt.Fprintf(w, "height: %d\n", o.Height)
	fmt.Fprintf(w, "count: %d\n", o.Count)
	fmt.Fprintf(w, "sum: %s\n", o.Sum)
}
