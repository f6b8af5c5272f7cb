package abci

import (
	"fmt"
	"regexp"
	"strings"

	"github.com/ttld-dev/ttld/proofs"
	"github.com/ttld-dev/ttld/protocol"
	"github.com/ttld-dev/ttld/query"
)

// docQuery runs a document query through Query with prove=true and checks the answer
// against the root of its version, as a client does:
//
//	doc-query path=documents|count|sum|ranked contract=C type=T [index=NAME] [height=H]
//	<the query's JSON; {id:NAME} stands for the hex id of document NAME>
//
// It renders the verified documents (name, owner, $createdAt, data) in the answer's
// order, or the count and sum, or the query code of a refusal.
func (h *harness) docQuery(m map[string]string, input string) string {
	query := idRef.ReplaceAllStringFunc(strings.TrimSpace(input), func(ref string) string {
		return h.document(idRef.FindStringSubmatch(ref)[1]).String()
	})
	c := h.contracts[m["contract"]]
	var path string
	var data []byte
	switch m["path"] {
	case "documents":
		path, data = proofs.PathDocuments, proofs.DocumentsData(c, m["type"], []byte(query))
	case "count", "sum":
		path, data = "/"+m["path"], proofs.CountData(c, m["type"], m["index"], []byte(query))
	case "ranked":
		path, data = proofs.PathRanked, proofs.DocumentsData(c, m["type"], []byte(query))
	default:
		h.t.Fatalf("unknown document query path %q", m["path"])
	}
	var height int64
	if m["height"] != "" {
		height = int64(h.u64(m, "height"))
	}
	res := h.query(path, data, height)
	if res.Code != 0 {
		return fmt.Sprintf("query code %d (%s)\n", res.Code, queryCodeNames[res.Code])
	}
	root := h.rootAt(res.Height)
	var out strings.Builder
	if path == proofs.PathRanked {
		a, err := proofs.DecodeRankedAnswer(res.Value)
		if err != nil {
			h.t.Fatal(err)
		}
		r, err := proofs.VerifyRanked(root, data, a, res.ProofOps)
		if err != nil {
			h.t.Fatal(err)
		}
		fmt.Fprintf(&out, "index %s%s, ranked\n", r.Query.Index.Name, windowOf(r.Query.Window))
		for _, g := range r.Groups {
			fmt.Fprintf(&out, "count %d: group %x (after %x)\n", g.Count, g.Group, g.Cursor)
		}
		fmt.Fprintf(&out, "verified %d groups, complete, more %v, at height %d\n", len(r.Groups), r.More, res.Height)
		return out.String()
	}
	if path != proofs.PathDocuments {
		a, err := proofs.DecodeCountAnswer(res.Value)
		if err != nil {
			h.t.Fatal(err)
		}
		r, err := proofs.VerifyCount(root, path, data, a, res.ProofOps)
		if err != nil {
			h.t.Fatal(err)
		}
		fmt.Fprintf(&out, "index %s%s %s: count %d sum %s\n", r.Query.Index.Name, windowOf(r.Query.Window), equalValues(r.Query.Type, r.Query.Index, r.Query.Equal), r.Count, r.Sum)
		fmt.Fprintf(&out, "verified %s at height %d\n", map[bool]string{true: "presence", false: "absence"}[len(a.Record) > 0], res.Height)
		return out.String()
	}
	a, err := proofs.DecodeDocumentsAnswer(res.Value)
	if err != nil {
		h.t.Fatal(err)
	}
	r, err := proofs.VerifyDocuments(root, data, a, res.ProofOps)
	if err != nil {
		h.t.Fatal(err)
	}
	order := "index order"
	if r.Query.Reverse {
		order = "reversed"
	}
	fmt.Fprintf(&out, "index %s%s %s, %s, ranges read: %d\n", r.Query.Index.Name, windowOf(r.Query.Window), equalValues(r.Query.Type, r.Query.Index, r.Query.Equal), order, len(a.Ranges))
	for _, d := range r.Documents {
		fmt.Fprintf(&out, "%s: owner=%s created=%d %s\n", h.documentName(d.ID), h.identityName(d.Owner), d.CreatedAt, protocol.DocumentData(r.Query.Type, d.Document))
	}
	fmt.Fprintf(&out, "verified %d documents, complete, at height %d\n", len(r.Documents), res.Height)
	return out.String()
}

// windowOf renders a window query's resolved window as seconds past genesis.
func windowOf(w *query.Window) string {
	if w == nil {
		return ""
	}
	return fmt.Sprintf(" window@%ds", (int64(w.StartMs)-genesisTime.UnixMilli())/1000)
}

var idRef = regexp.MustCompile(`\{id:([^}]+)\}`)

// equalValues renders the equality prefix of a query on index ix.
func equalValues(t protocol.DocumentType, ix protocol.Index, vs []protocol.Value) string {
	parts := make([]string, len(vs))
	for i, v := range vs {
		name := ix.Properties[i].Name
		p, ok := t.Property(name)
		switch {
		case ok && p.Type == protocol.PropertyString:
			parts[i] = fmt.Sprintf("%s=%q", name, v.Bytes)
		case ok && p.Type == protocol.PropertyInteger, strings.HasSuffix(name, "At"):
			parts[i] = fmt.Sprintf("%s=%d", name, v.Int)
		default:
			parts[i] = fmt.Sprintf("%s=%x", name, v.Bytes)
		}
	}
	return "[" + strings.Join(parts, " ") + "]"
}

var queryCodeNames = map[uint32]string{
	proofs.QueryCodeBadRequest:          "bad request",
	proofs.QueryCodeVersionMissing:      "version missing",
	proofs.QueryCodeInternal:            "internal",
	proofs.QueryCodeNotJSON:             "not JSON",
	proofs.QueryCodeUnknownField:        "unknown field",
	proofs.QueryCodeFieldNotIndexed:     "field not indexed",
	proofs.QueryCodeUnsupportedOperator: "unsupported operator",
	proofs.QueryCodeWrongValueType:      "wrong value type",
	proofs.QueryCodeLimitTooLarge:       "limit too large",
	proofs.QueryCodeBothStarts:          "both startAt and startAfter",
	proofs.QueryCodeNotFound:            "not found",
	proofs.QueryCodeWindowExpired:       "window expired",
}
