package protocol

import (
	"bytes"
	"encoding/binary"
	"encoding/json"
	"fmt"
	"slices"
	"strconv"
	"strings"
	"sync"
	"unicode/utf8"

	"github.com/santhosh-tekuri/jsonschema/v6"
)

// ParseDocumentData reads the values a writer sends for a document of type t: a JSON
// object of the type's properties (byte arrays and identifiers as arrays of integers
// 0..255). The object is validated against the type's schema by the JSON Schema library
// (types, required properties, no other properties, string lengths and patterns,
// integer bounds, byte array lengths), then read into one value per property, each byte
// array's items checked as they are read.
// Anything refused is ErrInvalidDocument, naming the property.
//
// The values read are kept (parsedData): a document is read once, when CheckTx first
// sees its transaction, and its block, the mempool's rechecks and a proposal executed
// again find it read. Only values are kept, never a refusal, and each caller gets its
// own slice of them; their bytes are shared and never written.
func ParseDocumentData(t DocumentType, raw []byte, lim Limits) ([]Value, error) {
	key := schemaKey(t)
	memo := parsedDataKey(key, raw, lim)
	if values, ok := parsedData.get(memo); ok {
		return values, nil
	}
	values, err := parseDocumentData(t, key, raw, lim)
	if err != nil {
		return nil, err
	}
	parsedData.put(memo, values)
	return slices.Clone(values), nil
}

// parseDocumentData is ParseDocumentData without its memo; key is schemaKey(t).
func parseDocumentData(t DocumentType, key string, raw []byte, lim Limits) ([]Value, error) {
	refuse := func(path, keyword, reason string) ([]Value, error) {
		return nil, ErrInvalidDocument{Type: t.Name, Path: path, Keyword: keyword, Reason: reason}
	}
	doc, err := jsonschema.UnmarshalJSON(bytes.NewReader(raw))
	if err != nil {
		return refuse("", "", "not JSON: "+err.Error())
	}
	if err := plainIntegersOnly(doc, nil); err != nil {
		e := err.(ErrJSONSchema)
		return refuse(e.Path, e.Keyword, "a document holds no numbers but integers")
	}
	schema, err := documentSchema(t, key)
	if err != nil {
		// The parser checked every keyword the schema is written from, so this does not
		// happen; were it to, the document is refused (a code), never the block.
		return refuse("", "", err.Error())
	}
	if err := schema.Validate(doc); err != nil {
		v := schemaVerdict(err)
		return refuse(v.Path, v.Keyword, v.Reason)
	}
	obj := doc.(map[string]any) // the schema's "type": "object"
	values := make([]Value, len(t.Properties))
	for i, p := range t.Properties {
		x, ok := obj[p.Name]
		if !ok {
			continue
		}
		path := jsonPointer([]string{p.Name})
		v := Value{Set: true}
		switch p.Type {
		case PropertyString:
			s := x.(string)
			if len(s) > lim.MaxStringLength {
				return refuse(path, "maxLength", fmt.Sprintf("%d bytes, more than the version's %d", len(s), lim.MaxStringLength))
			}
			if !utf8.ValidString(s) {
				return refuse(path, "type", "not UTF-8")
			}
			v.Bytes = []byte(s)
		case PropertyInteger:
			n, err := strconv.ParseInt(string(x.(json.Number)), 10, 64)
			if err != nil {
				return refuse(path, "type", "outside the signed 64-bit range")
			}
			v.Int = n
		case PropertyBoolean:
			v.Bool = x.(bool)
		case PropertyByteArray, PropertyIdentifier:
			items := x.([]any)
			if len(items) > lim.MaxByteArrayLength {
				return refuse(path, "maxItems", fmt.Sprintf("%d bytes, more than the version's %d", len(items), lim.MaxByteArrayLength))
			}
			v.Bytes = make([]byte, len(items))
			for j, it := range items {
				b, keyword := byteItem(it)
				if keyword != "" {
					return refuse(jsonPointer([]string{p.Name, strconv.Itoa(j)}), keyword, "a byte array holds integers 0..255")
				}
				v.Bytes[j] = b
			}
		case PropertyIdentifierList:
			// The schema bounded the list and made each item an array of 32.
			list := x.([]any)
			v.Bytes = make([]byte, 0, len(list)*IdentityIDLen)
			for j, id := range list {
				for k, it := range id.([]any) {
					b, keyword := byteItem(it)
					if keyword != "" {
						return refuse(jsonPointer([]string{p.Name, strconv.Itoa(j), strconv.Itoa(k)}), keyword, "an identifier holds integers 0..255")
					}
					v.Bytes = append(v.Bytes, b)
				}
			}
		}
		values[i] = v
	}
	return values, nil
}

// byteItem reads one item of a byte array: a plain integer literal (plainIntegersOnly
// refused every other number) of value 0..255, "-0" included as JSON Schema reads it.
// Otherwise it names the keyword the item fails: "type", "minimum" or "maximum". The
// items are checked here rather than by an "items" schema: the library's check of each
// integer was 70% of parsing a document with one identifier (docs/BENCHMARKS.md), and
// the set of documents accepted is the same.
func byteItem(it any) (byte, string) {
	n, ok := it.(json.Number)
	if !ok {
		return 0, "type"
	}
	digits, negative := strings.CutPrefix(string(n), "-")
	if negative && digits != "0" {
		return 0, "minimum"
	}
	b, err := strconv.ParseUint(digits, 10, 8)
	if err != nil {
		return 0, "maximum"
	}
	return byte(b), ""
}

// DocumentData writes the values of d as the JSON object ParseDocumentData reads, keys
// in byte order: what a client shows and sends back.
func DocumentData(t DocumentType, d Document) []byte {
	obj := map[string]any{}
	for _, p := range t.Properties {
		v := d.Value(p.Position)
		if !v.Set {
			continue
		}
		switch p.Type {
		case PropertyString:
			obj[p.Name] = string(v.Bytes)
		case PropertyInteger:
			obj[p.Name] = v.Int
		case PropertyBoolean:
			obj[p.Name] = v.Bool
		case PropertyIdentifierList:
			list := make([][]int, 0, len(v.Bytes)/IdentityIDLen)
			for id := range slices.Chunk(v.Bytes, IdentityIDLen) {
				list = append(list, byteItems(id))
			}
			obj[p.Name] = list
		default:
			obj[p.Name] = byteItems(v.Bytes)
		}
	}
	out, _ := json.Marshal(obj) // encoding/json writes map keys sorted
	return out
}

// byteItems writes bytes as the integers of a JSON byte array.
func byteItems(b []byte) []int {
	items := make([]int, len(b))
	for i, x := range b {
		items[i] = int(x)
	}
	return items
}

// documentSchema returns the compiled validation schema of type t: plain JSON Schema
// written from the parsed type, so the library sees exactly the rules the parser kept.
// Compiled schemas are kept by schemaKey, key (the cache changes no result).
func documentSchema(t DocumentType, key string) (*jsonschema.Schema, error) {
	schemaCache.Lock()
	defer schemaCache.Unlock()
	if s, ok := schemaCache.m[key]; ok {
		return s, nil
	}
	doc, err := jsonschema.UnmarshalJSON(bytes.NewReader(documentSchemaJSON(t)))
	if err != nil {
		return nil, fmt.Errorf("protocol: the validation schema of %q is no JSON: %w", t.Name, err)
	}
	c := jsonschema.NewCompiler()
	c.DefaultDraft(jsonschema.Draft2020)
	c.UseLoader(noLoader{})
	if err := c.AddResource("ttld:document", doc); err != nil {
		return nil, fmt.Errorf("protocol: the validation schema of %q: %w", t.Name, err)
	}
	s, err := c.Compile("ttld:document")
	if err != nil {
		return nil, fmt.Errorf("protocol: the validation schema of %q does not compile: %w", t.Name, err)
	}
	if len(schemaCache.m) >= maxCachedSchemas {
		schemaCache.m = map[string]*jsonschema.Schema{}
	}
	schemaCache.m[key] = s
	return s, nil
}

// schemaKey writes, length-prefixed, everything documentSchemaJSON writes the schema
// from (each property's name, type and bounds, and the required names): two types with
// one key have one schema. It is what the cache looks a type up by, several times
// cheaper than writing the schema's JSON for each document.
func schemaKey(t DocumentType) string {
	b := make([]byte, 0, 64*len(t.Properties))
	str := func(s string) {
		b = binary.AppendUvarint(b, uint64(len(s)))
		b = append(b, s...)
	}
	u32 := func(v *uint32) {
		if v == nil {
			b = append(b, 0)
			return
		}
		b = binary.AppendUvarint(append(b, 1), uint64(*v))
	}
	i64 := func(v *int64) {
		if v == nil {
			b = append(b, 0)
			return
		}
		b = binary.AppendVarint(append(b, 1), *v)
	}
	b = binary.AppendUvarint(b, uint64(len(t.Properties)))
	for _, p := range t.Properties {
		str(p.Name)
		b = append(b, byte(p.Type))
		u32(p.MinLength)
		u32(p.MaxLength)
		str(p.Pattern)
		i64(p.Minimum)
		i64(p.Maximum)
		u32(p.MinItems)
		u32(p.MaxItems)
	}
	b = binary.AppendUvarint(b, uint64(len(t.Required)))
	for _, r := range t.Required {
		str(r)
	}
	return string(b)
}

// maxCachedSchemas bounds the compiled schemas kept.
const maxCachedSchemas = 256

var schemaCache = struct {
	sync.Mutex
	m map[string]*jsonschema.Schema
}{m: map[string]*jsonschema.Schema{}}

// parsedDataKey is what ParseDocumentData's values depend on: the type's schema key,
// the two limits it reads and the data, each length-prefixed.
func parsedDataKey(schema string, raw []byte, lim Limits) []byte {
	b := make([]byte, 0, len(schema)+len(raw)+3*binary.MaxVarintLen64)
	b = binary.AppendUvarint(b, uint64(len(schema)))
	b = append(b, schema...)
	b = binary.AppendUvarint(b, uint64(lim.MaxStringLength))
	b = binary.AppendUvarint(b, uint64(lim.MaxByteArrayLength))
	return append(b, raw...)
}

// maxParsedBytes bounds each of parsedData's two generations, counting every kept
// document's key and values: some 16,000 documents of a few hundred bytes, the creates
// and replaces of a few blocks at a node's intake rate, which reach their block in a
// second or two; a sender of documents at the largest size fills it with a thousand.
const maxParsedBytes = 16 << 20

// valueBytes is the memory of a Value besides its bytes on a 64-bit machine: two
// booleans padded to eight bytes each, an int64 and a slice header.
const valueBytes = 48

// parsedData keeps the values of the documents ParseDocumentData read last, by
// parsedDataKey, in two generations: when the newer one holds maxParsedBytes it becomes
// the older and the older is dropped, so a document read again soon after is found,
// and the memory kept stays under 2 × maxParsedBytes whatever is sent.
var parsedData = &dataMemo{newer: map[string][]Value{}}

type dataMemo struct {
	sync.Mutex
	newer, older map[string][]Value
	newerBytes   int
}

// get returns a copy of key's values, moving them to the newer generation.
func (m *dataMemo) get(key []byte) ([]Value, bool) {
	m.Lock()
	defer m.Unlock()
	values, ok := m.newer[string(key)]
	if !ok {
		if values, ok = m.older[string(key)]; !ok {
			return nil, false
		}
		delete(m.older, string(key))
		m.add(string(key), values)
	}
	return slices.Clone(values), true
}

// put keeps values under key.
func (m *dataMemo) put(key []byte, values []Value) {
	m.Lock()
	defer m.Unlock()
	m.add(string(key), values)
}

func (m *dataMemo) add(key string, values []Value) {
	size := len(key) + len(values)*valueBytes
	for _, v := range values {
		size += len(v.Bytes)
	}
	if m.newerBytes+size > maxParsedBytes {
		m.older, m.newer, m.newerBytes = m.newer, map[string][]Value{}, 0
	}
	m.newer[key] = values
	m.newerBytes += size
}

// documentSchemaJSON writes the validation schema of t.
func documentSchemaJSON(t DocumentType) []byte {
	props := map[string]any{}
	var required []string
	for _, p := range t.Properties {
		s := map[string]any{}
		switch p.Type {
		case PropertyString:
			s["type"] = "string"
			putU32(s, "minLength", p.MinLength)
			putU32(s, "maxLength", p.MaxLength)
			if p.Pattern != "" {
				s["pattern"] = p.Pattern
			}
		case PropertyInteger:
			s["type"] = "integer"
			if p.Minimum != nil {
				s["minimum"] = *p.Minimum
			}
			if p.Maximum != nil {
				s["maximum"] = *p.Maximum
			}
		case PropertyBoolean:
			s["type"] = "boolean"
		case PropertyByteArray, PropertyIdentifier:
			s["type"] = "array" // its items are checked by byteItem
			putU32(s, "minItems", p.MinItems)
			putU32(s, "maxItems", p.MaxItems)
		case PropertyIdentifierList:
			s["type"] = "array"
			putU32(s, "minItems", p.MinItems)
			putU32(s, "maxItems", p.MaxItems)
			s["items"] = map[string]any{"type": "array", "minItems": IdentityIDLen, "maxItems": IdentityIDLen}
		}
		props[p.Name] = s
		if t.IsRequired(p.Name) {
			required = append(required, p.Name)
		}
	}
	schema := map[string]any{"type": "object", "properties": props, "additionalProperties": false}
	if len(required) > 0 {
		schema["required"] = required
	}
	out, _ := json.Marshal(schema)
	return out
}

func putU32(m map[string]any, key string, v *uint32) {
	if v != nil {
		m[key] = *v
	}
}
