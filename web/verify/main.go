//go:build js && wasm

package main

import (
	"encoding/hex"
	"syscall/js"

	"github.com/ttld-dev/ttld/web/check"
)

func main() {
	js.Global().Set("ttldCheck", js.FuncOf(func(_ js.Value, args []js.Value) any {
		out := map[string]any{"verified": false}
		if len(args) != 3 {
			out["reason"] = "ttldCheck(bundle, validators, shown) takes two JSON strings and the hex of what the page shows"
			return out
		}
		shown, err := hex.DecodeString(args[2].String())
		if err != nil {
			out["reason"] = "what the page shows is not hex: " + err.Error()
			return out
		}
		b, err := check.DecodeBundle([]byte(args[0].String()))
		if err != nil {
			out["reason"] = "the bundle does not decode: " + err.Error()
			return out
		}
		vals, err := check.DecodeValidators([]byte(args[1].String()))
		if err != nil {
			out["reason"] = "the pinned validator set does not decode: " + err.Error()
			return out
		}
		r, err := check.CheckShown(b, vals, shown)
		if err != nil {
			out["reason"] = err.Error()
			return out
		}
		out["verified"], out["height"], out["present"] = true, r.Height, r.Present
		out["app_hash"] = hex.EncodeToString(r.AppHash)
		return out
	}))
	select {} // the page calls ttldCheck for as long as it is open
}
