package check

import (
	"fmt"
	"strconv"
	"strings"

	"github.com/ttld-dev/ttld/protocol"
)

// describeType writes the figures of the contract page's type i, t: its name, its ttl
// as a duration, the flags that differ from their defaults, its properties and its
// indexes.
func describeType(f Figures, i int, t protocol.DocumentType) {
	f[Name("type", i, "name")] = Visible(t.Name)
	f[Name("type", i, "ttl")] = "none (documents live until deleted)"
	if t.TTLSeconds > 0 {
		f[Name("type", i, "ttl")] = Seconds(uint64(t.TTLSeconds))
	}
	f[Name("type", i, "flags")] = "defaults"
	if flags := typeFlags(t); len(flags) > 0 {
		f[Name("type", i, "flags")] = strings.Join(flags, ", ")
	}
	for j, p := range t.Properties {
		prop := func(field, text string) { f[Name("type", i, "property", j, field)] = text }
		prop("position", strconv.FormatUint(uint64(p.Position), 10))
		prop("name", Visible(p.Name))
		prop("type", p.Type.String())
		prop("required", "")
		if t.IsRequired(p.Name) {
			prop("required", "required")
		}
		prop("refers", "")
		if ref := p.RefersTo; ref != nil {
			refers := ref.Kind.String() + " " + Visible(ref.Type)
			if ref.Lookup != "" {
				refers += " by " + Visible(ref.Lookup)
			}
			if ref.Contract != nil {
				refers += " of " + ref.Contract.String()
			}
			prop("refers", refers)
		}
	}
	for j, x := range t.Indices {
		index := func(field, text string) { f[Name("type", i, "index", j, field)] = text }
		index("name", Visible(x.Name))
		var props []string
		for _, ip := range x.Properties {
			dir := "asc"
			if ip.Descending {
				dir = "desc"
			}
			props = append(props, Visible(ip.Name)+" "+dir)
		}
		index("properties", strings.Join(props, ", "))
		var flags []string
		for _, fl := range []struct {
			on   bool
			name string
		}{{x.Unique, "unique"}, {x.Countable, "countable"}, {x.Ranked, "ranked"}, {x.Summable != "", "sums " + Visible(x.Summable)}} {
			if fl.on {
				flags = append(flags, fl.name)
			}
		}
		index("flags", strings.Join(flags, ", "))
		index("time-range", "")
		if tr := x.TimeRange; tr != nil {
			text := fmt.Sprintf("on %s, windows of %s every %s", Visible(tr.On), Seconds(uint64(tr.Range)), Seconds(uint64(tr.Step)))
			if tr.TTL > 0 {
				text += ", queryable for " + Seconds(uint64(tr.TTL))
			}
			index("time-range", text)
		}
	}
}

// typeFlags are the flags of type t that differ from their defaults, as the contract
// page names them.
func typeFlags(t protocol.DocumentType) []string {
	var flags []string
	flag := func(on bool, name string) {
		if on {
			flags = append(flags, name)
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
			m += " within " + Seconds(uint64(a.DeleteWithinSeconds))
		}
		if a.DeleteKeepsRecord {
			m += ", keeping a record"
		}
		if a.DeleteRefundsOwner {
			m += ", refunding the owner"
		}
		flags = append(flags, m)
	}
	return flags
}
