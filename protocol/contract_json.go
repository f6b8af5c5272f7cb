package protocol

import (
	"bytes"
	"encoding/json"
	"fmt"
)

// CanonicalJSON writes document types as the one canonical JSON of a contract
// definition: no whitespace, object keys in byte order, no HTML escaping, a flag or
// bound written only when it differs from its default or is set, integers as plain
// literals, required sorted, indices sorted by name. ParseDocumentTypes of the result
// returns the same types, and CanonicalJSON of those the same bytes, for types that
// need no config (a type with moderatorAbilities needs the moderation block:
// CanonicalDefinitionJSON writes both). A contract is stored in the form of
// CanonicalDefinitionJSON (Contract.Encode) and its size limit applies to it.
func CanonicalJSON(types []DocumentType) []byte {
	return CanonicalDefinitionJSON(Definition{DocumentTypes: types})
}

// CanonicalDefinitionJSON is CanonicalJSON of a whole definition: its config, when it
// has one, then its document types, moderators sorted.
func CanonicalDefinitionJSON(d Definition) []byte {
	c := contractJSON{DocumentSchemas: make(map[string]documentTypeJSON, len(d.DocumentTypes))}
	if m := d.Moderation; m != nil {
		c.Config = &configJSON{Moderation: &moderationJSON{Moderators: make([]string, len(m.Moderators))}}
		for i, id := range m.Moderators {
			c.Config.Moderation.Moderators[i] = id.String()
		}
	}
	for _, t := range d.DocumentTypes {
		c.DocumentSchemas[t.Name] = documentTypeToJSON(t)
	}
	var buf bytes.Buffer
	enc := json.NewEncoder(&buf)
	enc.SetEscapeHTML(false)
	if err := enc.Encode(c); err != nil {
		// NB: these structs hold only strings, integers, booleans, slices and maps with
		// string keys, which always encode.
		panic(fmt.Sprintf("protocol: canonical contract JSON: %v", err))
	}
	return bytes.TrimSuffix(buf.Bytes(), []byte("\n"))
}

// The JSON shapes. Field order is the order of keys written, so each struct lists its
// fields in byte order of their keys, as encoding/json does for map keys.
type contractJSON struct {
	Config          *configJSON                 `json:"config,omitempty"`
	DocumentSchemas map[string]documentTypeJSON `json:"documentSchemas"`
}

type configJSON struct {
	Moderation *moderationJSON `json:"moderation,omitempty"`
}

type moderationJSON struct {
	Moderators []string `json:"moderators"`
}

type moderatorAbilitiesJSON struct {
	Delete             bool   `json:"delete"`
	DeleteKeepsRecord  *bool  `json:"deleteKeepsRecord,omitempty"`
	DeleteRefundsOwner bool   `json:"deleteRefundsOwner,omitempty"`
	DeleteWithin       uint32 `json:"deleteWithin,omitempty"`
}

type refersToJSON struct {
	Contract string `json:"contract,omitempty"`
	Kind     string `json:"kind"`
	Lookup   string `json:"lookup,omitempty"`
	Type     string `json:"type"`
}

type documentTypeJSON struct {
	AdditionalProperties    bool                    `json:"additionalProperties"`
	CanBeDeleted            *bool                   `json:"canBeDeleted,omitempty"`
	CreationRestrictionMode uint8                   `json:"creationRestrictionMode,omitempty"`
	DocumentsKeepHistory    bool                    `json:"documentsKeepHistory,omitempty"`
	DocumentsMutable        *bool                   `json:"documentsMutable,omitempty"`
	IndexOnly               bool                    `json:"indexOnly,omitempty"`
	Indices                 []indexJSON             `json:"indices,omitempty"`
	ModeratorAbilities      *moderatorAbilitiesJSON `json:"moderatorAbilities,omitempty"`
	Properties              map[string]propertyJSON `json:"properties"`
	RenewOnReplace          bool                    `json:"renewOnReplace,omitempty"`
	Required                []string                `json:"required,omitempty"`
	TradeMode               uint8                   `json:"tradeMode,omitempty"`
	Transferable            uint8                   `json:"transferable,omitempty"`
	TTL                     uint32                  `json:"ttl,omitempty"`
	Type                    string                  `json:"type"`
}

type propertyJSON struct {
	ByteArray        bool          `json:"byteArray,omitempty"`
	ContentMediaType string        `json:"contentMediaType,omitempty"`
	Items            *propertyJSON `json:"items,omitempty"`
	MaxItems         *uint32       `json:"maxItems,omitempty"`
	MaxLength        *uint32       `json:"maxLength,omitempty"`
	Maximum          *int64        `json:"maximum,omitempty"`
	MinItems         *uint32       `json:"minItems,omitempty"`
	MinLength        *uint32       `json:"minLength,omitempty"`
	Minimum          *int64        `json:"minimum,omitempty"`
	Pattern          string        `json:"pattern,omitempty"`
	Position         *uint32       `json:"position,omitempty"`
	RefersTo         *refersToJSON `json:"refersTo,omitempty"`
	Type             string        `json:"type"`
}

type indexJSON struct {
	Contested  *contestedJSON      `json:"contested,omitempty"`
	Countable  bool                `json:"countable,omitempty"`
	Name       string              `json:"name"`
	Properties []map[string]string `json:"properties"`
	Ranked     bool                `json:"ranked,omitempty"`
	Summable   string              `json:"summable,omitempty"`
	TimeRange  *timeRangeJSON      `json:"timeRange,omitempty"`
	Unique     bool                `json:"unique,omitempty"`
}

type timeRangeJSON struct {
	On    string `json:"on"`
	Phase uint32 `json:"phase,omitempty"`
	Range uint32 `json:"range"`
	Step  uint32 `json:"step"`
	TTL   uint32 `json:"ttl,omitempty"`
}

type contestedJSON struct {
	FieldMatches []fieldMatchJSON `json:"fieldMatches,omitempty"`
	Resolution   uint8            `json:"resolution"`
}

type fieldMatchJSON struct {
	Field        string `json:"field"`
	RegexPattern string `json:"regexPattern"`
}

func documentTypeToJSON(t DocumentType) documentTypeJSON {
	no := false
	j := documentTypeJSON{
		Type:                    "object",
		Properties:              make(map[string]propertyJSON, len(t.Properties)),
		Required:                t.Required,
		CreationRestrictionMode: uint8(t.CreationRestrictionMode),
		DocumentsKeepHistory:    t.DocumentsKeepHistory,
		IndexOnly:               t.IndexOnly,
		TradeMode:               uint8(t.TradeMode),
		Transferable:            uint8(t.Transferable),
		TTL:                     t.TTLSeconds,
		RenewOnReplace:          t.RenewOnReplace,
	}
	if !t.DocumentsMutable {
		j.DocumentsMutable = &no
	}
	if !t.CanBeDeleted {
		j.CanBeDeleted = &no
	}
	if a := t.ModeratorAbilities; a != nil {
		j.ModeratorAbilities = &moderatorAbilitiesJSON{Delete: a.Delete, DeleteRefundsOwner: a.DeleteRefundsOwner, DeleteWithin: a.DeleteWithinSeconds}
		if !a.DeleteKeepsRecord {
			j.ModeratorAbilities.DeleteKeepsRecord = &no
		}
	}
	for _, p := range t.Properties {
		j.Properties[p.Name] = propertyToJSON(p)
	}
	for _, x := range t.Indices {
		ij := indexJSON{Name: x.Name, Unique: x.Unique, Countable: x.Countable, Ranked: x.Ranked, Summable: x.Summable}
		if r := x.TimeRange; r != nil {
			ij.TimeRange = &timeRangeJSON{On: r.On, Phase: r.Phase, Range: r.Range, Step: r.Step, TTL: r.TTL}
		}
		for _, ip := range x.Properties {
			dir := "asc"
			if ip.Descending {
				dir = "desc"
			}
			ij.Properties = append(ij.Properties, map[string]string{ip.Name: dir})
		}
		if x.Contested != nil {
			ij.Contested = &contestedJSON{Resolution: x.Contested.Resolution}
			for _, fm := range x.Contested.FieldMatches {
				ij.Contested.FieldMatches = append(ij.Contested.FieldMatches, fieldMatchJSON(fm))
			}
		}
		j.Indices = append(j.Indices, ij)
	}
	return j
}

func propertyToJSON(p Property) propertyJSON {
	pos := p.Position
	j := propertyJSON{Position: &pos}
	var ref *refersToJSON
	if r := p.RefersTo; r != nil {
		ref = &refersToJSON{Kind: r.Kind.String(), Lookup: r.Lookup, Type: r.Type}
		if r.Contract != nil {
			ref.Contract = r.Contract.String()
		}
	}
	j.RefersTo = ref
	switch p.Type {
	case PropertyString:
		j.Type, j.MinLength, j.MaxLength, j.Pattern = "string", p.MinLength, p.MaxLength, p.Pattern
	case PropertyInteger:
		j.Type, j.Minimum, j.Maximum = "integer", p.Minimum, p.Maximum
	case PropertyBoolean:
		j.Type = "boolean"
	case PropertyByteArray, PropertyIdentifier:
		j.Type, j.ByteArray, j.MinItems, j.MaxItems = "array", true, p.MinItems, p.MaxItems
		if p.Type == PropertyIdentifier {
			j.ContentMediaType = IdentifierMediaType
		}
	case PropertyIdentifierList:
		id := uint32(IdentityIDLen)
		j.Type, j.MinItems, j.MaxItems, j.RefersTo = "array", p.MinItems, p.MaxItems, nil
		j.Items = &propertyJSON{Type: "array", ByteArray: true, ContentMediaType: IdentifierMediaType, MinItems: &id, MaxItems: &id, RefersTo: ref}
	}
	return j
}
