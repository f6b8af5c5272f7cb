package protocol

import (
	"fmt"
	"sort"
)

// Kind is one kind of state transition as the registry knows it. Each kind lives in its
// own file, which declares its type number, its body, its encoding, its structure rules
// and its signer, and registers itself once: adding a kind touches that file only.
type Kind struct {
	Type TransitionType
	// Name is the kind's name in events, logs and the CLI ("address_funds_transfer").
	Name string
	// New returns an empty transition of the kind, for decoding into.
	New func() Transition
}

// kinds and kindNames are written only by register, from init functions, before any
// block runs.
var (
	kinds     = map[TransitionType]Kind{}
	kindNames = map[string]bool{}
)

// register adds a kind; a type number or a name used twice is a programming error.
func register(k Kind) {
	if _, dup := kinds[k.Type]; dup {
		panic(fmt.Sprintf("protocol: transition type %d registered twice", k.Type))
	}
	if kindNames[k.Name] {
		panic(fmt.Sprintf("protocol: transition name %q registered twice", k.Name))
	}
	if got := k.New().Type(); got != k.Type {
		panic(fmt.Sprintf("protocol: kind %q registered as type %d makes type %d", k.Name, k.Type, got))
	}
	kinds[k.Type] = k
	kindNames[k.Name] = true
}

// KindOf returns the registered kind of type t.
func KindOf(t TransitionType) (Kind, bool) {
	k, ok := kinds[t]
	return k, ok
}

// Kinds returns every registered kind, by type number.
func Kinds() []Kind {
	out := make([]Kind, 0, len(kinds))
	for _, k := range kinds {
		out = append(out, k)
	}
	sort.Slice(out, func(i, j int) bool { return out[i].Type < out[j].Type })
	return out
}

func (t TransitionType) String() string {
	if k, ok := kinds[t]; ok {
		return k.Name
	}
	return fmt.Sprintf("TransitionType(%d)", uint8(t))
}
