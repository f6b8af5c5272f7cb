package web

import (
	"net/url"
	"strconv"
	"strings"
	"time"

	abcitypes "github.com/cometbft/cometbft/abci/types"

	"github.com/ttld-dev/ttld/drive"
	"github.com/ttld-dev/ttld/protocol"
	"github.com/ttld-dev/ttld/web/check"
)

// eventRow is an event of a block or a transaction as the pages show it. TypeHref is
// the page the event is a row of, "" when none: a document event's type links the
// document's history.
type eventRow struct {
	Type     string    `json:"type"`
	TypeHref string    `json:"-"`
	Attrs    []attrRow `json:"attrs"`
}

// attrRow is one attribute: its value, the page of what the value names (Href, ""
// when none) and how people read a value that is a time or a duration (Note).
type attrRow struct {
	Key   string `json:"key"`
	Value string `json:"value"`
	Href  string `json:"-"`
	Note  string `json:"note,omitempty"`
}

// The attributes whose values name an account (an address or an identity), a block, a
// time in milliseconds, or how long in milliseconds (docs/TX.md, "Events").
var (
	accountAttrs = map[string]bool{
		protocol.AttrSigner: true, protocol.AttrFrom: true, protocol.AttrTo: true, protocol.AttrOwner: true,
		protocol.AttrIdentity: true, protocol.AttrFunder: true, protocol.AttrModerator: true,
	}
	heightAttrs   = map[string]bool{protocol.AttrStartHeight: true, protocol.AttrEndHeight: true}
	timeAttrs     = map[string]bool{protocol.AttrExpiresAt: true, protocol.AttrExpiresAtMs: true, protocol.AttrStartMs: true}
	durationAttrs = map[string]bool{protocol.AttrOldestOverdueMs: true}
)

// eventRows are the events in as the pages show them, with links to what their values
// name and their times said as every time is (check.When, against now).
func eventRows(in []abcitypes.Event, now time.Time) []eventRow {
	out := make([]eventRow, 0, len(in))
	for _, e := range in {
		values := map[string]string{}
		for _, a := range e.Attributes {
			values[a.Key] = a.Value
		}
		row := eventRow{Type: e.Type}
		if doc := documentHref(values[protocol.AttrContract], values[protocol.AttrType], values[protocol.AttrID]); doc != "" && strings.HasPrefix(e.Type, protocol.EventDocumentPrefix) {
			row.TypeHref = doc + "/history"
		}
		for _, a := range e.Attributes {
			row.Attrs = append(row.Attrs, attrRow{Key: a.Key, Value: a.Value, Href: attrHref(e.Type, a.Key, a.Value, values), Note: attrNote(a.Key, a.Value, now)})
		}
		out = append(out, row)
	}
	return out
}

// attrHref is the page of what attribute key of an event of type typ names, "" when
// it names nothing the view shows; values are the event's attributes.
func attrHref(typ, key, value string, values map[string]string) string {
	switch {
	case accountAttrs[key]:
		return accountHref(value)
	case key == protocol.AttrContract && isHexOf(value, protocol.ContractIDLen):
		return "/contract/" + value
	case key == protocol.AttrProposer:
		return validatorHref(value)
	case heightAttrs[key]:
		return heightHref(value)
	case key == protocol.AttrEpoch || key == protocol.AttrPreviousEpoch:
		return "/epochs"
	case key == protocol.AttrID && strings.HasPrefix(typ, protocol.EventDocumentPrefix):
		return documentHref(values[protocol.AttrContract], values[protocol.AttrType], value)
	}
	return ""
}

// attrNote says a time or a duration in milliseconds as people read it.
func attrNote(key, value string, now time.Time) string {
	ms, err := strconv.ParseUint(value, 10, 63)
	switch {
	case err != nil:
		return ""
	case timeAttrs[key]:
		return check.When(time.UnixMilli(int64(ms)), now)
	case durationAttrs[key] && ms > 0:
		return (time.Duration(ms) * time.Millisecond).String()
	}
	return ""
}

// accountHref is the page of an account an event or a transition names by its hex: an
// address (40 digits) or an identity (64); "" for anything else.
func accountHref(v string) string {
	switch {
	case isHexOf(v, protocol.AddressLen):
		return "/address/" + strings.ToLower(v)
	case isHexOf(v, protocol.IdentityIDLen):
		return "/identity/" + strings.ToLower(v)
	}
	return ""
}

// validatorHref is the page of a validator named by its consensus address in hex.
func validatorHref(v string) string {
	if !isHexOf(v, drive.ConsensusAddressLen) {
		return ""
	}
	return "/validator/" + strings.ToUpper(v)
}

// heightHref is the page of a block named by its height in decimal.
func heightHref(v string) string {
	if h, err := strconv.ParseInt(v, 10, 64); err != nil || h < 1 {
		return ""
	}
	return "/block/" + v
}

// documentHref is the page of document id of type typeName in contract c, "" unless
// each is well formed.
func documentHref(c, typeName, id string) string {
	if !isHexOf(c, protocol.ContractIDLen) || !isHexOf(id, protocol.DocumentIDLen) || protocol.ValidName(typeName) != "" {
		return ""
	}
	return "/document/" + strings.ToLower(c) + "/" + url.PathEscape(typeName) + "/" + strings.ToLower(id)
}

// isHexOf reports whether s is the hex of n bytes.
func isHexOf(s string, n int) bool { return len(s) == 2*n && isHex(s) }
