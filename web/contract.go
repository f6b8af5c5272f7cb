package web

import (
	"encoding/hex"
	"fmt"
	"net/http"
	"strings"
	"time"

	"github.com/ttld-dev/ttld/proofs"
	"github.com/ttld-dev/ttld/protocol"
)

type indexRow struct {
	Name       string
	Properties string
	Flags      []string
	TimeRange  string
}

type propertyRow struct {
	Name, Type, Required, RefersTo string
	Position                       uint32
}

type typeRow struct {
	Name       string
	TTL        string // "" for none
	Flags      []string
	Properties []propertyRow
	Indices    []indexRow
	Moderators string
}

type contractPage struct {
	proofBox
	ID, Owner  string
	Version    uint32
	Moderators []string
	Types      []typeRow
	Height     int64
	JSON       string
}

func (s *Server) contract(r *http.Request) (any, error) {
	id, err := protocol.ParseContractID(r.PathValue("id"))
	if err != nil {
		return nil, errBadInput{"contract", r.PathValue("id"), "64 hex digits"}
	}
	h, err := s.provenHeight(r.Context())
	if err != nil {
		return nil, err
	}
	st, err := s.c.Contract(r.Context(), id, h, false)
	if err != nil {
		return nil, err
	}
	if !st.Present {
		return nil, errNotFound{"contract " + id.String()}
	}
	p := contractPage{ID: id.String(), Owner: st.Owner.String(), Version: st.Version, Height: st.Height,
		JSON: string(protocol.CanonicalDefinitionJSON(st.Definition()))}
	if m := st.Moderation; m != nil {
		for _, mod := range m.Moderators {
			p.Moderators = append(p.Moderators, mod.String())
		}
	}
	for _, t := range st.DocumentTypes {
		p.Types = append(p.Types, describeType(t))
	}
	// The stored value is the contract's one encoding: what the page shows, re-encoded.
	p.proofBox, err = s.proofBox(r.Context(), proofs.PathContract, id[:], st.Height, hex.EncodeToString(st.Contract.Encode()), "ttld query contract "+id.String()+" --prove")
	return p, err
}

// describeType is a type as the contract page shows it: its ttl as a duration, the
// flags that differ from their defaults, its properties and indexes.
func describeType(t protocol.DocumentType) typeRow {
	row := typeRow{Name: t.Name}
	if t.TTLSeconds > 0 {
		row.TTL = (time.Duration(t.TTLSeconds) * time.Second).String()
	}
	flag := func(on bool, name string) {
		if on {
			row.Flags = append(row.Flags, name)
		}
	}
	flag(!t.DocumentsMutable, "immutable")
	flag(!t.CanBeDeleted, "not deletable by its owner")
	flag(t.Transferable == protocol.TransferableAlways, "transferable")
	flag(t.TradeMode == protocol.TradeModeDirectPurchase, "for sale")
	flag(t.DocumentsKeepHistory, "keeps history")
	flag(t.IndexOnly, "index only")
	flag(t.CreationRestrictionMode == protocol.CreationOwnerOnly, "created by the contract owner only")
	flag(t.CreationRestrictionMode == protocol.CreationNotAllowed, "no creation")
	if a := t.ModeratorAbilities; a != nil && a.Delete {
		m := "moderators delete"
		if a.DeleteWithinSeconds > 0 {
			m += " within " + (time.Duration(a.DeleteWithinSeconds) * time.Second).String()
		}
		if a.DeleteKeepsRecord {
			m += ", keeping a record"
		}
		if a.DeleteRefundsOwner {
			m += ", refunding the owner"
		}
		row.Flags = append(row.Flags, m)
	}
	for _, p := range t.Properties {
		pr := propertyRow{Name: p.Name, Type: p.Type.String(), Position: p.Position}
		if t.IsRequired(p.Name) {
			pr.Required = "required"
		}
		if ref := p.RefersTo; ref != nil {
			pr.RefersTo = ref.Kind.String() + " " + ref.Type
			if ref.Lookup != "" {
				pr.RefersTo += " by " + ref.Lookup
			}
			if ref.Contract != nil {
				pr.RefersTo += " of " + ref.Contract.String()
			}
		}
		row.Properties = append(row.Properties, pr)
	}
	for _, x := range t.Indices {
		ir := indexRow{Name: x.Name}
		var props []string
		for _, ip := range x.Properties {
			dir := "asc"
			if ip.Descending {
				dir = "desc"
			}
			props = append(props, ip.Name+" "+dir)
		}
		ir.Properties = strings.Join(props, ", ")
		for _, f := range []struct {
			on   bool
			name string
		}{{x.Unique, "unique"}, {x.Countable, "countable"}, {x.Ranked, "ranked"}, {x.Summable != "", "sums " + x.Summable}} {
			if f.on {
				ir.Flags = append(ir.Flags, f.name)
			}
		}
		if tr := x.TimeRange; tr != nil {
			ir.TimeRange = fmt.Sprintf("on %s, windows of %s every %s", tr.On, time.Duration(tr.Range)*time.Second, time.Duration(tr.Step)*time.Second)
			if tr.TTL > 0 {
				ir.TimeRange += fmt.Sprintf(", queryable for %s", time.Duration(tr.TTL)*time.Second)
			}
		}
		row.Indices = append(row.Indices, ir)
	}
	return row
}
