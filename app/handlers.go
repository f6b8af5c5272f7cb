package app

import "github.com/ttld-dev/ttld/protocol"

// handler validates a transition against state and applies it: it calls spend for what
// the payer moves out, plans credits, and stages the transition's own writes. The
// payer's debit, nonce and the credits are written after the fee is known. Each kind's
// handler lives in its own file and registers itself with handle.
type handler func(e *execution, t protocol.Transition) error

// handlers are written only from init functions, before any block runs.
var handlers = map[protocol.TransitionType]handler{}

// handle registers the handler of transitions of type typ, whose Go type is T.
func handle[T protocol.Transition](typ protocol.TransitionType, apply func(e *execution, t T) error) {
	if _, dup := handlers[typ]; dup {
		panic("app: two handlers for " + typ.String())
	}
	handlers[typ] = func(e *execution, t protocol.Transition) error { return apply(e, t.(T)) }
}
