package protocol

import (
	"bytes"
	"encoding/json"
	"fmt"
	"strconv"
	"sync"
	"unicode/utf8"

	"github.com/santhosh-tekuri/jsonschema/v6"
)

// ParseDocumentData reads the values a writer sends for a document of type t: a JSON
// object of the type's properties (byte arrays and identifiers as arrays of integers
// 0..255). The object is validated against the type's schema by the JSON Schema library
// (types, required properties, no other properties, string lengths and patterns,
// integer bounds, byte array lengths), then read into one value per property.
// Anything refused is ErrInvalidDocument, naming the property.
func ParseDocumentData(t DocumentType, raw []byte, lim Limits) ([]Value, error) {
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
	schema, err := documentSchema(t)
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
				n, _ := strconv.ParseUint(string(it.(json.Number)), 10, 8) // the schema bounds it to 0..255
				v.Bytes[j] = byte(n)
			}
		}
		values[i] = v
	}
	return values, nil
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
		default:
			items := make([]int, len(v.Bytes))
			for i, b := range v.Bytes {
				items[i] = int(b)
			}
			obj[p.Name] = items
		}
	}
	out, _ := json.Marshal(obj) // encoding/json writes map keys sorted
	return out
}

// documentSchema returns the compiled validation schema of type t: plain JSON Schema
// written from the parsed type, so the library sees exactly the rules the parser kept.
// Compiled schemas are kept by their source (the cache changes no result).
func documentSchema(t DocumentType) (*jsonschema.Schema, error) {
	src := documentSchemaJSON(t)
	schemaCache.Lock()
	defer schemaCache.Unlock()
	if s, ok := schemaCache.m[string(src)]; ok {
		return s, nil
	}
	doc, err := jsonschema.UnmarshalJSON(bytes.NewReader(src))
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
	schemaCache.m[string(src)] = s
	return s, nil
}

// maxCachedSchemas bounds the compiled schemas kept.
const maxCachedSchemas = 256

var schemaCache = struct {
	sync.Mutex
	m map[string]*jsonschema.Schema
}{m: map[string]*jsonschema.Schema{}}

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
			s["type"] = "array"
			s["items"] = map[string]any{"type": "integer", "minimum": 0, "maximum": 255}
			putU32(s, "minItems", p.MinItems)
			putU32(s, "maxItems", p.MaxItems)
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
