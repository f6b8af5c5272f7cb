package protocol

import (
	"bytes"
	"embed"
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"regexp"
	"slices"
	"sort"
	"strconv"
	"strings"

	"github.com/santhosh-tekuri/jsonschema/v6"
)

// The contract meta-schemas, one file per protocol version that changed it:
// metaschema/v<N>.json applies from version N until the next file. Adding the one of a
// new version is adding its file.
//
//go:embed metaschema/*.json
var metaSchemaFiles embed.FS

// metaSchema is one compiled meta-schema and the first version it applies to.
type metaSchema struct {
	from   Version
	schema *jsonschema.Schema
}

// metaSchemas are compiled once, oldest first. A file that does not compile is a
// broken build, so it panics at start rather than refuse contracts at run time.
var metaSchemas = compileMetaSchemas()

func compileMetaSchemas() []metaSchema {
	entries, err := fs.ReadDir(metaSchemaFiles, "metaschema")
	if err != nil {
		panic(fmt.Sprintf("protocol: contract meta-schemas: %v", err))
	}
	var out []metaSchema
	for _, e := range entries {
		digits, ok := strings.CutPrefix(strings.TrimSuffix(e.Name(), ".json"), "v")
		n, err := strconv.ParseUint(digits, 10, 32)
		if !ok || err != nil {
			panic(fmt.Sprintf("protocol: meta-schema file %s is not named v<version>.json", e.Name()))
		}
		raw, err := metaSchemaFiles.ReadFile("metaschema/" + e.Name())
		if err != nil {
			panic(err)
		}
		doc, err := jsonschema.UnmarshalJSON(bytes.NewReader(raw))
		if err != nil {
			panic(fmt.Sprintf("protocol: meta-schema %s: %v", e.Name(), err))
		}
		c := jsonschema.NewCompiler()
		c.DefaultDraft(jsonschema.Draft2020)
		// NB: the library's default loader reads file: URLs; ours loads nothing, so
		// a stray $ref can never reach the file system or the network.
		c.UseLoader(noLoader{})
		url := "https://ttld.dev/schemas/contract-meta/" + e.Name()
		if err := c.AddResource(url, doc); err != nil {
			panic(fmt.Sprintf("protocol: meta-schema %s: %v", e.Name(), err))
		}
		sch, err := c.Compile(url)
		if err != nil {
			panic(fmt.Sprintf("protocol: meta-schema %s: %v", e.Name(), err))
		}
		out = append(out, metaSchema{from: Version(n), schema: sch})
	}
	sort.Slice(out, func(i, j int) bool { return out[i].from < out[j].from })
	return out
}

// noLoader refuses to load any URL.
type noLoader struct{}

func (noLoader) Load(url string) (any, error) { return nil, fmt.Errorf("no loading of %s", url) }

// metaSchemaFor returns the meta-schema of version v: the newest file not after v.
func metaSchemaFor(v Version) (*jsonschema.Schema, bool) {
	var s *jsonschema.Schema
	for _, m := range metaSchemas {
		if m.from <= v {
			s = m.schema
		}
	}
	return s, s != nil
}

// ParseDocumentTypes parses and validates the JSON a user writes for a contract
// (docs/CONTRACTS.md: an object whose documentSchemas maps type names to their schemas)
// under protocol version v, and returns its document types sorted by name. It is the one
// parser: registration, update and a stored contract read back (DecodeContract) all go
// through it, so each is validated alike; registration and update call it through
// ParseSubmittedDocumentTypes, which adds the rules of a definition being written.
//
// Checks run in a fixed order and the first refusal is returned: the size of the input,
// JSON, the version's meta-schema (ErrJSONSchema), then the rules of ours, type by type
// in name order, then the size of the canonical encoding. Numbers are decoded as
// json.Number and read as exact integers; a float is never made.
func ParseDocumentTypes(raw []byte, v Version) ([]DocumentType, error) {
	d, err := ParseDefinition(raw, v)
	return d.DocumentTypes, err
}

// Definition is what a contract's JSON defines: its config (the moderation block) and
// its document types.
type Definition struct {
	Moderation    *Moderation
	DocumentTypes []DocumentType
}

// ParseDefinition is ParseDocumentTypes with the contract's config: the whole
// definition, as a stored contract is read back.
func ParseDefinition(raw []byte, v Version) (Definition, error) {
	lim, err := LimitsFor(v)
	if err != nil {
		return Definition{}, err
	}
	return parseDefinition(raw, v, lim, false)
}

// ParseSubmittedDocumentTypes parses the definition a contract registration or update
// submits: ParseDocumentTypes and, for each type with a ttl, the version's bounds
// MinDocumentTTLSeconds..MaxDocumentTTLSeconds (Document Time To Live: "When a contract is
// registered or updated, a ttl below min_document_ttl_seconds (one hour at protocol
// version 14) or above max_document_ttl_seconds (one year) is refused too"). A stored
// contract read back is not held to them.
func ParseSubmittedDocumentTypes(raw []byte, v Version) ([]DocumentType, error) {
	ctx, err := ContextFor(v, 0)
	if err != nil {
		return nil, err
	}
	d, err := ParseSubmittedDefinitionIn(raw, ctx)
	return d.DocumentTypes, err
}

// ParseSubmittedDefinitionIn is ParseSubmittedDocumentTypes, config included, under the
// limits of a chain's context: its version's, with a local chain's lowered ttl minimum
// (Limits.WithLocal).
func ParseSubmittedDefinitionIn(raw []byte, ctx Context) (Definition, error) {
	return parseDefinition(raw, ctx.Version, ctx.Limits, true)
}

// parseDefinition is ParseDefinition under limits lim; submitted adds the rules of a
// definition being registered or updated.
func parseDefinition(raw []byte, v Version, lim Limits, submitted bool) (Definition, error) {
	meta, ok := metaSchemaFor(v)
	if !ok {
		return Definition{}, fmt.Errorf("protocol: no contract meta-schema for version %d", v)
	}
	if len(raw) > lim.MaxContractBytes {
		return Definition{}, ErrContractTooLarge{Size: len(raw), Max: lim.MaxContractBytes}
	}
	doc, err := jsonschema.UnmarshalJSON(bytes.NewReader(raw))
	if err != nil {
		return Definition{}, ErrJSONSchema{Path: "", Reason: "not JSON: " + err.Error()}
	}
	if err := plainIntegersOnly(doc, nil); err != nil {
		return Definition{}, err
	}
	if err := meta.Validate(doc); err != nil {
		return Definition{}, schemaVerdict(err)
	}
	top := doc.(map[string]any)
	var d Definition
	if d.Moderation, err = parseModeration(top, lim); err != nil {
		return Definition{}, err
	}
	schemas := top["documentSchemas"].(map[string]any)
	if len(schemas) > lim.MaxDocumentTypes {
		return Definition{}, ErrTooManyDocumentTypes{Count: len(schemas), Max: lim.MaxDocumentTypes}
	}
	d.DocumentTypes = make([]DocumentType, 0, len(schemas))
	for _, name := range sortedKeys(schemas) {
		t, err := parseDocumentType(name, schemas[name].(map[string]any), lim, submitted, d.Moderation != nil)
		if err != nil {
			return Definition{}, err
		}
		d.DocumentTypes = append(d.DocumentTypes, t)
	}
	if n := len(CanonicalDefinitionJSON(d)); n > lim.MaxContractBytes {
		return Definition{}, ErrContractTooLarge{Size: n, Max: lim.MaxContractBytes}
	}
	return d, nil
}

// plainIntegersOnly refuses any number of v that is not a plain integer literal
// ("-12", never "1.0", "1e3" or "1.5"), before the meta-schema sees it: a contract has no
// place for anything else, and its every number is then exact as an int64 or uint64
// whatever the library would make of it. Objects are walked in key order, so the value
// reported is the same on every node.
func plainIntegersOnly(v any, loc []string) error {
	switch x := v.(type) {
	case json.Number:
		if !isPlainInteger(string(x)) {
			return ErrJSONSchema{Path: jsonPointer(loc), Keyword: "type",
				Reason: fmt.Sprintf("%.40s is not a plain integer literal: a contract holds no other numbers", x)}
		}
	case map[string]any:
		for _, k := range sortedKeys(x) {
			if err := plainIntegersOnly(x[k], append(loc, k)); err != nil {
				return err
			}
		}
	case []any:
		for i, e := range x {
			if err := plainIntegersOnly(e, append(loc, strconv.Itoa(i))); err != nil {
				return err
			}
		}
	}
	return nil
}

// isPlainInteger reports whether s is -?(0|[1-9][0-9]*).
func isPlainInteger(s string) bool {
	s = strings.TrimPrefix(s, "-")
	if s == "" || (s[0] == '0' && len(s) > 1) {
		return false
	}
	for i := 0; i < len(s); i++ {
		if s[i] < '0' || s[i] > '9' {
			return false
		}
	}
	return true
}

// schemaVerdict maps the library's verdict to ErrJSONSchema. Of the leaf failures it
// reports the first by instance path then keyword path, so the error a node logs does
// not depend on the order the library visited the document in.
func schemaVerdict(err error) ErrJSONSchema {
	var ve *jsonschema.ValidationError
	if !errors.As(err, &ve) {
		return ErrJSONSchema{Reason: err.Error()}
	}
	var leaves []*jsonschema.ValidationError
	var walk func(e *jsonschema.ValidationError)
	walk = func(e *jsonschema.ValidationError) {
		if len(e.Causes) == 0 {
			leaves = append(leaves, e)
		}
		for _, c := range e.Causes {
			walk(c)
		}
	}
	walk(ve)
	key := func(e *jsonschema.ValidationError) string {
		return jsonPointer(e.InstanceLocation) + "\x00" + strings.Join(e.ErrorKind.KeywordPath(), "/")
	}
	sort.SliceStable(leaves, func(i, j int) bool { return key(leaves[i]) < key(leaves[j]) })
	first := leaves[0]
	kw := first.ErrorKind.KeywordPath()
	keyword := ""
	if len(kw) > 0 {
		keyword = kw[0]
	}
	return ErrJSONSchema{Path: jsonPointer(first.InstanceLocation), Keyword: keyword, Reason: first.Error()}
}

// jsonPointer writes a location as an RFC 6901 pointer.
func jsonPointer(loc []string) string {
	var b strings.Builder
	for _, s := range loc {
		b.WriteByte('/')
		b.WriteString(strings.ReplaceAll(strings.ReplaceAll(s, "~", "~0"), "/", "~1"))
	}
	return b.String()
}

// sortedKeys returns the keys of m in byte order.
func sortedKeys(m map[string]any) []string {
	keys := make([]string, 0, len(m))
	for k := range m {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	return keys
}

// MaxNameLength bounds document type, property and index names.
const MaxNameLength = 64

// ValidName reports why name breaks the name rule of document types, properties and
// indexes (1 to 64 of A-Z, a-z, 0-9, '-' and '_', starting with a letter), or "".
func ValidName(name string) string {
	if name == "" || len(name) > MaxNameLength {
		return fmt.Sprintf("must be 1 to %d characters long", MaxNameLength)
	}
	for i := 0; i < len(name); i++ {
		c := name[i]
		letter := c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z'
		if i == 0 && !letter {
			return "must start with a letter"
		}
		if !letter && !(c >= '0' && c <= '9') && c != '-' && c != '_' {
			return fmt.Sprintf("holds %q: only letters, digits, '-' and '_' are allowed", c)
		}
	}
	return ""
}

// plainInteger reads a json.Number that plainIntegersOnly and the meta-schema have
// accepted; the meta-schema's bounds keep it within int64, so the refusal below is a
// second line only.
func plainInteger(v any, path string) (int64, error) {
	n, ok := v.(json.Number)
	if !ok {
		return 0, ErrJSONSchema{Path: path, Keyword: "type", Reason: "not a number"}
	}
	i, err := strconv.ParseInt(string(n), 10, 64)
	if err != nil {
		return 0, ErrJSONSchema{Path: path, Keyword: "type", Reason: fmt.Sprintf("%s is not a plain integer literal", n)}
	}
	return i, nil
}

// optUint32 reads an optional unsigned keyword the meta-schema bounded to 0..2^32-1.
func optUint32(m map[string]any, key, path string) (*uint32, error) {
	v, ok := m[key]
	if !ok {
		return nil, nil
	}
	i, err := plainInteger(v, path+"/"+key)
	if err != nil {
		return nil, err
	}
	if i < 0 || i > 1<<32-1 {
		return nil, ErrJSONSchema{Path: path + "/" + key, Keyword: "maximum", Reason: "outside 0..4294967295"}
	}
	u := uint32(i)
	return &u, nil
}

// optInt64 reads an optional signed keyword.
func optInt64(m map[string]any, key, path string) (*int64, error) {
	v, ok := m[key]
	if !ok {
		return nil, nil
	}
	i, err := plainInteger(v, path+"/"+key)
	if err != nil {
		return nil, err
	}
	return &i, nil
}

// optUint8 reads an optional small enum keyword (0 when absent).
func optUint8(m map[string]any, key, path string) (uint8, error) {
	p, err := optUint32(m, key, path)
	if err != nil || p == nil {
		return 0, err
	}
	if *p > 255 {
		return 0, ErrJSONSchema{Path: path + "/" + key, Keyword: "enum", Reason: "outside 0..255"}
	}
	return uint8(*p), nil
}

// optBool reads an optional boolean keyword, def when absent.
func optBool(m map[string]any, key string, def bool) bool {
	if b, ok := m[key].(bool); ok {
		return b
	}
	return def
}

// parseDocumentType parses the schema m of document type name (docs/CONTRACTS.md,
// "Validation", step 4). NB: the order of the checks decides the code a type breaking
// several rules is refused with, and that code is consensus: each step returns its
// first refusal, and the steps run in this order: the type's name, its properties
// (parseProperties), required (parseRequired), the flags (parseFlags), the indexes
// (parseIndexes), the ttl (parseTTL), moderatorAbilities (parseModeratorAbilities)
// and, for a submitted definition, a contested index (refuseContested). The
// meta-schema has checked m's shapes already; a shape it should have refused is an
// ErrJSONSchema all the same (jsonObject, jsonString), never a panic.
func parseDocumentType(name string, m map[string]any, lim Limits, submitted, moderated bool) (DocumentType, error) {
	path := "/documentSchemas/" + jsonPointer([]string{name})[1:]
	if why := ValidName(name); why != "" {
		return DocumentType{}, ErrInvalidName{Kind: "document type", Name: name, Reason: why}
	}
	t := DocumentType{Name: name}
	var err error
	if t.Properties, err = parseProperties(name, m, path, lim); err != nil {
		return DocumentType{}, err
	}
	if t.Required, err = parseRequired(t, m, path); err != nil {
		return DocumentType{}, err
	}
	if err := parseFlags(&t, m, path); err != nil {
		return DocumentType{}, err
	}
	if err := parseIndexes(&t, m, path, lim); err != nil {
		return DocumentType{}, err
	}
	if err := parseTTL(&t, m, path, lim, submitted); err != nil {
		return DocumentType{}, err
	}
	if err := parseModeratorAbilities(&t, m, path, moderated); err != nil {
		return DocumentType{}, err
	}
	if submitted {
		// After parseTTL: the ttl keyword reference refuses a ttl beside a contested index with 10231,
		// and that refusal comes first.
		if err := refuseContested(t); err != nil {
			return DocumentType{}, err
		}
	}
	return t, nil
}

// jsonObject is v, at path, as a JSON object. The meta-schema requires one wherever it
// is called, so the refusal is a second line only, as in plainInteger.
func jsonObject(v any, path string) (map[string]any, error) {
	o, ok := v.(map[string]any)
	if !ok {
		return nil, ErrJSONSchema{Path: path, Keyword: "type", Reason: "not an object"}
	}
	return o, nil
}

// jsonString is v, at path, as a JSON string; the meta-schema requires one wherever it
// is called, as for jsonObject.
func jsonString(v any, path string) (string, error) {
	s, ok := v.(string)
	if !ok {
		return "", ErrJSONSchema{Path: path, Keyword: "type", Reason: "not a string"}
	}
	return s, nil
}

// parseProperties parses the properties of type typeName, sorted by position: their
// count, then each in name order (its name, parseProperty, parseReference), then their
// positions, which must run 0 to n-1 without gaps or repeats.
func parseProperties(typeName string, m map[string]any, path string, lim Limits) ([]Property, error) {
	props, err := jsonObject(m["properties"], path+"/properties")
	if err != nil {
		return nil, err
	}
	if len(props) > lim.MaxPropertiesPerType {
		return nil, ErrTooManyProperties{Type: typeName, Count: len(props), Max: lim.MaxPropertiesPerType}
	}
	var out []Property
	for _, pn := range sortedKeys(props) {
		if why := ValidName(pn); why != "" {
			return nil, ErrInvalidName{Kind: "property", Type: typeName, Name: pn, Reason: why}
		}
		ppath := path + "/properties/" + pn
		pm, err := jsonObject(props[pn], ppath)
		if err != nil {
			return nil, err
		}
		p, err := parseProperty(typeName, pn, pm, ppath, lim)
		if err != nil {
			return nil, err
		}
		if err := parseReference(typeName, &p, pm, ppath); err != nil {
			return nil, err
		}
		out = append(out, p)
	}
	sort.SliceStable(out, func(i, j int) bool { return out[i].Position < out[j].Position })
	for i, p := range out {
		switch {
		case i > 0 && out[i-1].Position == p.Position:
			return nil, ErrInvalidPropertyPosition{Type: typeName, Property: p.Name, Position: p.Position,
				Reason: fmt.Sprintf("also the position of %q", out[i-1].Name)}
		case p.Position != uint32(i):
			return nil, ErrInvalidPropertyPosition{Type: typeName, Property: p.Name, Position: p.Position,
				Reason: fmt.Sprintf("positions must run 0 to %d without gaps; %d is missing", len(out)-1, i)}
		}
	}
	return out, nil
}

// parseRequired reads the required names of type t, whose properties are parsed: each
// a property of the type or one of RequirableSystemFields. It returns them sorted, nil
// when the type has no required keyword.
func parseRequired(t DocumentType, m map[string]any, path string) ([]string, error) {
	req, ok := m["required"].([]any)
	if !ok {
		return nil, nil
	}
	var out []string
	for i, r := range req {
		rn, err := jsonString(r, fmt.Sprintf("%s/required/%d", path, i))
		if err != nil {
			return nil, err
		}
		if _, isProp := t.Property(rn); !isProp && !slices.Contains(RequirableSystemFields, rn) {
			return nil, ErrInvalidContractStructure{Type: t.Name, Path: path + "/required",
				Reason: fmt.Sprintf("%q is neither a property of the type nor one of %v", rn, RequirableSystemFields)}
		}
		out = append(out, rn)
	}
	sort.Strings(out)
	return out, nil
}

// parseFlags reads type t's booleans (documentsMutable and canBeDeleted default to
// true, documentsKeepHistory and indexOnly to false) and then its enums, in this order:
// transferable, tradeMode, creationRestrictionMode (0 when absent).
func parseFlags(t *DocumentType, m map[string]any, path string) error {
	t.DocumentsMutable = optBool(m, "documentsMutable", true)
	t.CanBeDeleted = optBool(m, "canBeDeleted", true)
	t.DocumentsKeepHistory = optBool(m, "documentsKeepHistory", false)
	t.IndexOnly = optBool(m, "indexOnly", false)
	for _, f := range []struct {
		key string
		dst *uint8
	}{
		{"transferable", (*uint8)(&t.Transferable)},
		{"tradeMode", (*uint8)(&t.TradeMode)},
		{"creationRestrictionMode", (*uint8)(&t.CreationRestrictionMode)},
	} {
		v, err := optUint8(m, f.key, path)
		if err != nil {
			return err
		}
		*f.dst = v
	}
	return nil
}

// parseIndexes reads type t's indexes into t.Indices, sorted by name: their count,
// then each in the order written (parseIndex, which sees the indexes before it in t),
// then duplicate names, then duplicate indexes and the ttls of shared grids
// (refuseDuplicateIndexes).
func parseIndexes(t *DocumentType, m map[string]any, path string, lim Limits) error {
	idx, ok := m["indices"].([]any)
	if !ok {
		return nil
	}
	if len(idx) > lim.MaxIndexesPerType {
		return ErrTooManyIndexes{Type: t.Name, Count: len(idx), Max: lim.MaxIndexesPerType}
	}
	for i, raw := range idx {
		ipath := fmt.Sprintf("%s/indices/%d", path, i)
		im, err := jsonObject(raw, ipath)
		if err != nil {
			return err
		}
		x, err := parseIndex(*t, im, ipath, lim)
		if err != nil {
			return err
		}
		t.Indices = append(t.Indices, x)
	}
	sort.SliceStable(t.Indices, func(i, j int) bool { return t.Indices[i].Name < t.Indices[j].Name })
	for i := 1; i < len(t.Indices); i++ {
		if t.Indices[i].Name == t.Indices[i-1].Name {
			return ErrDuplicateIndexName{Type: t.Name, Index: t.Indices[i].Name}
		}
	}
	return refuseDuplicateIndexes(*t, path)
}

// refuseDuplicateIndexes refuses, pair by pair in name order, two indexes of t with the
// same properties and grid, and two time-range indexes that share a grid but not a ttl
// (docs/CONTRACTS.md, "A time-range index").
func refuseDuplicateIndexes(t DocumentType, path string) error {
	for i := range t.Indices {
		for j := i + 1; j < len(t.Indices); j++ {
			a, b := t.Indices[i], t.Indices[j]
			if slices.Equal(a.Properties, b.Properties) && sameGrid(a, b) {
				return ErrDuplicateIndex{Type: t.Name, Index: b.Name, Other: a.Name}
			}
			if a.TimeRange != nil && b.TimeRange != nil && a.TimeRange.Grid() == b.TimeRange.Grid() && a.TimeRange.TTL != b.TimeRange.TTL {
				return ErrInvalidContractStructure{Type: t.Name, Path: path + "/indices", Reason: fmt.Sprintf(
					"indexes %q and %q bucket %s on the same grid, so they share its windows, but declare different ttls (%d and %d): one ttl per grid per field",
					a.Name, b.Name, a.TimeRange.On, a.TimeRange.TTL, b.TimeRange.TTL)}
			}
		}
	}
	return nil
}

// refuseContested refuses a contested index of t, in name order, in a definition
// being registered or updated.
func refuseContested(t DocumentType) error {
	for _, x := range t.Indices {
		if x.Contested != nil {
			return ErrContestedIndexUnsupported{Type: t.Name, Index: x.Name}
		}
	}
	return nil
}

// parseTTL reads the ttl keyword of type t (protocol version 14 on: no earlier
// meta-schema admits it) into t.TTLSeconds and checks its rules (the ttl keyword reference, "Rules at
// registration"): $createdAt required; no documentsKeepHistory, no indexOnly, no
// contested index; and, when submitted, the version's bounds. The meta-schema has
// already refused 0 and anything past 4294967295. renewOnReplace (version 15 on) needs
// a ttl. Each refusal is ErrInvalidContractStructure.
func parseTTL(t *DocumentType, m map[string]any, path string, lim Limits, submitted bool) error {
	ttl, err := optUint32(m, "ttl", path)
	if err != nil {
		return err
	}
	t.RenewOnReplace = optBool(m, "renewOnReplace", false)
	if ttl == nil {
		if t.RenewOnReplace {
			return ErrInvalidContractStructure{Type: t.Name, Path: path + "/renewOnReplace", Reason: "renewOnReplace needs a ttl: only a document that expires is renewed"}
		}
		return nil
	}
	bad := func(format string, args ...any) error {
		return ErrInvalidContractStructure{Type: t.Name, Path: path + "/ttl", Reason: fmt.Sprintf(format, args...)}
	}
	switch {
	case !t.IsRequired("$createdAt"):
		return bad("a type with a ttl must list $createdAt in required: the expiry is counted from it")
	case t.DocumentsKeepHistory:
		return bad("a ttl cannot be combined with documentsKeepHistory: documents that keep history are never deleted")
	case t.IndexOnly:
		return bad("a ttl cannot be combined with indexOnly: there is no stored document to delete by id")
	}
	for _, x := range t.Indices {
		if x.Contested != nil {
			return bad("a ttl cannot be combined with the contested index %q: a contested document waits in its vote poll and could expire before it is stored", x.Name)
		}
	}
	if submitted && (uint64(*ttl) < lim.MinDocumentTTLSeconds || uint64(*ttl) > lim.MaxDocumentTTLSeconds) {
		return bad("ttl %d is outside %d..%d seconds", *ttl, lim.MinDocumentTTLSeconds, lim.MaxDocumentTTLSeconds)
	}
	t.TTLSeconds = *ttl
	return nil
}

// parseTimeRange reads index x's timeRange map (protocol version 14 on: no earlier
// meta-schema admits it, nor ranked) and checks the rules of Time-Range Index TTL that one index
// decides: range a multiple of step, the phase below the step, ttl >= range, unique only
// with range == step on $createdAt, ranked only with countable on a time-range index;
// and, when the version has them, its bounds: the overlap factor and the ttl's maximum.
// The rule between indexes (one ttl per grid) is refuseDuplicateIndexes'. Each
// refusal is ErrInvalidContractStructure.
func parseTimeRange(t DocumentType, x *Index, m map[string]any, path string, lim Limits) error {
	bad := func(format string, args ...any) error {
		return ErrInvalidContractStructure{Type: t.Name, Path: path + "/timeRange", Reason: fmt.Sprintf("index %q: %s", x.Name, fmt.Sprintf(format, args...))}
	}
	tr, ok := m["timeRange"].(map[string]any)
	if !ok {
		if x.Ranked {
			return bad("ranked orders each window's groups by their count: it needs a timeRange")
		}
		return nil
	}
	r := &TimeRange{On: tr["on"].(string)} // one of TimeRangeFields, by the meta-schema
	for _, f := range []struct {
		key string
		dst *uint32
	}{{"range", &r.Range}, {"step", &r.Step}, {"phase", &r.Phase}, {"ttl", &r.TTL}} {
		v, err := optUint32(tr, f.key, path+"/timeRange")
		if err != nil {
			return err
		}
		if v != nil {
			*f.dst = *v
		}
	}
	switch {
	case r.Range%r.Step != 0:
		return bad("range %d is not a multiple of step %d: every timestamp must lie in the same number of windows", r.Range, r.Step)
	case r.Phase >= r.Step:
		return bad("phase %d is not below step %d", r.Phase, r.Step)
	case lim.MaxTimeRangeOverlapFactor > 0 && r.Grid().Overlap() > lim.MaxTimeRangeOverlapFactor:
		return bad("range / step is %d, more than the version's overlap factor of %d", r.Grid().Overlap(), lim.MaxTimeRangeOverlapFactor)
	case r.TTL > 0 && r.TTL < r.Range:
		return bad("ttl %d is below range %d: a window that can still receive entries would expire", r.TTL, r.Range)
	case r.TTL > 0 && uint64(r.TTL) > lim.MaxTimeRangeTTLSeconds:
		return bad("ttl %d is more than the version's %d seconds", r.TTL, lim.MaxTimeRangeTTLSeconds)
	case x.Unique && (r.Range != r.Step || r.On != "$createdAt"):
		return bad("a unique time-range index needs range == step on $createdAt, so that each document lies in one window")
	case x.Ranked && !x.Countable:
		return bad("ranked orders each window's groups by their count: it needs countable")
	}
	x.TimeRange = r
	return nil
}

// sameGrid reports whether two indexes are stored alike as far as their windows go:
// both ordinary, or both time-range indexes on one grid.
func sameGrid(a, b Index) bool {
	if a.TimeRange == nil || b.TimeRange == nil {
		return a.TimeRange == nil && b.TimeRange == nil
	}
	return a.TimeRange.Grid() == b.TimeRange.Grid()
}

func parseProperty(typeName, name string, m map[string]any, path string, lim Limits) (Property, error) {
	p := Property{Name: name}
	pos, err := optUint32(m, "position", path)
	if err != nil {
		return Property{}, err
	}
	p.Position = *pos // required by the meta-schema
	bad := func(format string, args ...any) error {
		return ErrInvalidContractStructure{Type: typeName, Path: path, Reason: fmt.Sprintf(format, args...)}
	}
	switch m["type"].(string) {
	case "string":
		p.Type = PropertyString
		if p.MinLength, err = optUint32(m, "minLength", path); err != nil {
			return Property{}, err
		}
		if p.MaxLength, err = optUint32(m, "maxLength", path); err != nil {
			return Property{}, err
		}
		if p.MaxLength != nil && *p.MaxLength > uint32(lim.MaxStringLength) {
			return Property{}, bad("maxLength %d exceeds the limit of %d", *p.MaxLength, lim.MaxStringLength)
		}
		if p.MinLength != nil && *p.MinLength > uint32(lim.MaxStringLength) {
			return Property{}, bad("minLength %d exceeds the limit of %d", *p.MinLength, lim.MaxStringLength)
		}
		if p.MinLength != nil && p.MaxLength != nil && *p.MinLength > *p.MaxLength {
			return Property{}, bad("minLength %d is above maxLength %d", *p.MinLength, *p.MaxLength)
		}
		if pat, ok := m["pattern"].(string); ok {
			if _, err := regexp.Compile(pat); err != nil {
				return Property{}, bad("pattern is not an RE2 regular expression: %v", err)
			}
			p.Pattern = pat
		}
	case "integer":
		p.Type = PropertyInteger
		if p.Minimum, err = optInt64(m, "minimum", path); err != nil {
			return Property{}, err
		}
		if p.Maximum, err = optInt64(m, "maximum", path); err != nil {
			return Property{}, err
		}
		if p.Minimum != nil && p.Maximum != nil && *p.Minimum > *p.Maximum {
			return Property{}, bad("minimum %d is above maximum %d", *p.Minimum, *p.Maximum)
		}
	case "boolean":
		p.Type = PropertyBoolean
	case "array": // a byte array, or with items an identifier list (the meta-schema's)
		p.Type = PropertyByteArray
		if p.MinItems, err = optUint32(m, "minItems", path); err != nil {
			return Property{}, err
		}
		if p.MaxItems, err = optUint32(m, "maxItems", path); err != nil {
			return Property{}, err
		}
		if _, ok := m["items"]; ok {
			p.Type = PropertyIdentifierList // maxItems is required by the meta-schema
			if *p.MaxItems > uint32(lim.MaxIdentifierListLength) {
				return Property{}, bad("maxItems %d exceeds the limit of %d identifiers", *p.MaxItems, lim.MaxIdentifierListLength)
			}
			if p.MinItems != nil && *p.MinItems > *p.MaxItems {
				return Property{}, bad("minItems %d is above maxItems %d", *p.MinItems, *p.MaxItems)
			}
			break
		}
		if _, ok := m["contentMediaType"]; ok {
			p.Type = PropertyIdentifier
			if p.MinItems == nil || p.MaxItems == nil || *p.MinItems != IdentityIDLen || *p.MaxItems != IdentityIDLen {
				return Property{}, bad("an identifier has minItems and maxItems %d", IdentityIDLen)
			}
			break
		}
		if p.MaxItems != nil && *p.MaxItems > uint32(lim.MaxByteArrayLength) {
			return Property{}, bad("maxItems %d exceeds the limit of %d", *p.MaxItems, lim.MaxByteArrayLength)
		}
		if p.MinItems != nil && *p.MinItems > uint32(lim.MaxByteArrayLength) {
			return Property{}, bad("minItems %d exceeds the limit of %d", *p.MinItems, lim.MaxByteArrayLength)
		}
		if p.MinItems != nil && p.MaxItems != nil && *p.MinItems > *p.MaxItems {
			return Property{}, bad("minItems %d is above maxItems %d", *p.MinItems, *p.MaxItems)
		}
	}
	return p, nil
}

func parseIndex(t DocumentType, m map[string]any, path string, lim Limits) (Index, error) {
	x := Index{Name: m["name"].(string)}
	if why := ValidName(x.Name); why != "" {
		return Index{}, ErrInvalidName{Kind: "index", Type: t.Name, Name: x.Name, Reason: why}
	}
	bad := func(format string, args ...any) error {
		return ErrInvalidContractStructure{Type: t.Name, Path: path, Reason: fmt.Sprintf("index %q: %s", x.Name, fmt.Sprintf(format, args...))}
	}
	props := m["properties"].([]any)
	if len(props) > lim.MaxIndexProperties {
		return Index{}, ErrTooManyIndexProperties{Type: t.Name, Index: x.Name, Count: len(props), Max: lim.MaxIndexProperties}
	}
	for _, raw := range props {
		one := raw.(map[string]any) // exactly one key, by the meta-schema
		pn := sortedKeys(one)[0]
		ip := IndexProperty{Name: pn, Descending: one[pn].(string) == "desc"}
		if slices.ContainsFunc(x.Properties, func(q IndexProperty) bool { return q.Name == pn }) {
			return Index{}, bad("property %q appears twice", pn)
		}
		p, defined := t.Property(pn)
		if !defined && !slices.Contains(IndexableSystemFieldsOf(lim), pn) {
			return Index{}, ErrUndefinedIndexProperty{Type: t.Name, Index: x.Name, Property: pn}
		}
		switch {
		case !defined:
		case p.Type == PropertyIdentifierList:
			return Index{}, bad("%q is an identifier list: lists are not indexed", pn)
		case p.Type == PropertyString && (p.MaxLength == nil || *p.MaxLength > uint32(lim.MaxIndexedStringLength)):
			return Index{}, bad("indexed string %q needs a maxLength of at most %d", pn, lim.MaxIndexedStringLength)
		case p.Type == PropertyByteArray && (p.MaxItems == nil || *p.MaxItems > uint32(lim.MaxIndexedByteArrayLength)):
			return Index{}, bad("indexed byte array %q needs a maxItems of at most %d", pn, lim.MaxIndexedByteArrayLength)
		}
		x.Properties = append(x.Properties, ip)
	}
	x.Unique = optBool(m, "unique", false)
	x.Countable = optBool(m, "countable", false)
	x.Ranked = optBool(m, "ranked", false)
	if err := parseTimeRange(t, &x, m, path, lim); err != nil {
		return Index{}, err
	}
	if s, ok := m["summable"].(string); ok {
		p, defined := t.Property(s)
		switch {
		case !defined:
			return Index{}, ErrInvalidSummableProperty{Type: t.Name, Index: x.Name, Property: s, Reason: "no such property"}
		case p.Type != PropertyInteger:
			return Index{}, ErrInvalidSummableProperty{Type: t.Name, Index: x.Name, Property: s, Reason: "a " + p.Type.String() + ", not an integer"}
		}
		x.Summable = s
	}
	if c, ok := m["contested"].(map[string]any); ok {
		x.Contested = &Contested{} // resolution is 0, the only value the meta-schema admits
		if fms, ok := c["fieldMatches"].([]any); ok {
			for _, raw := range fms {
				fm := raw.(map[string]any)
				f := FieldMatch{Field: fm["field"].(string), RegexPattern: fm["regexPattern"].(string)}
				if !slices.ContainsFunc(x.Properties, func(q IndexProperty) bool { return q.Name == f.Field }) {
					return Index{}, bad("contested field %q is not a property of the index", f.Field)
				}
				if _, err := regexp.Compile(f.RegexPattern); err != nil {
					return Index{}, bad("contested regexPattern of %q is not an RE2 regular expression: %v", f.Field, err)
				}
				x.Contested.FieldMatches = append(x.Contested.FieldMatches, f)
			}
		}
	}
	return x, nil
}
