//go:build js && wasm

package main

import (
	"encoding/hex"
	"encoding/json"
	"syscall/js"
	"time"

	"github.com/ttld-dev/ttld/web/check"
)

func main() {
	js.Global().Set("ttldCheck", js.FuncOf(func(_ js.Value, args []js.Value) any {
		out := map[string]any{"verified": false}
		if len(args) != 6 || args[0].Type() != js.TypeObject {
			out["reason"] = "ttldCheck(bundles, validators, pinnedChain, nowMs, page, shown) takes an array of bundles' JSON, the validator set's JSON, the pinned chain id, the clock in milliseconds, the page's path and the JSON of the box's drawing the page shows"
			return out
		}
		bundles := make([]check.Bundle, args[0].Length())
		for i := range bundles {
			b, err := check.DecodeBundle([]byte(args[0].Index(i).String()))
			if err != nil {
				out["reason"] = "a bundle does not decode: " + err.Error()
				return out
			}
			bundles[i] = b
		}
		vals, err := check.DecodeValidators([]byte(args[1].String()))
		if err != nil {
			out["reason"] = "the validator set does not decode: " + err.Error()
			return out
		}
		var shown []check.Node
		if err := json.Unmarshal([]byte(args[5].String()), &shown); err != nil {
			out["reason"] = "the page's drawing does not decode: " + err.Error()
			return out
		}
		now := time.UnixMilli(int64(args[3].Float()))
		v, err := check.Verify(bundles, check.Pin{ChainID: args[2].String(), Validators: vals}, now, 0, args[4].String(), shown)
		out["chain_id"], out["chain_shown"], out["set_hash"] = v.ChainID, check.Visible(v.ChainID), hex.EncodeToString(v.SetHash)
		out["height"], out["app_hash"] = v.Height, hex.EncodeToString(v.AppHash)
		out["header_time"], out["age_ms"], out["max_age_ms"] = check.When(v.HeaderTime, now), v.Age.Milliseconds(), v.MaxAge.Milliseconds()
		out["followed"] = v.Followed
		if v.Figures != nil {
			figures := map[string]any{}
			for name, text := range v.Figures {
				figures[name] = text
			}
			out["figures"] = figures
		}
		mismatches := make([]any, len(v.Mismatches))
		for i, m := range v.Mismatches {
			mismatches[i] = map[string]any{"name": m.Name, "shown": m.Shown, "proven": m.Proven, "unproven": m.Unproven, "text": m.String()}
		}
		out["mismatches"] = mismatches
		if d := v.Difference; d != nil {
			out["difference"] = map[string]any{"kind": d.Kind.String(), "path": d.Path, "figure": d.Figure, "after": d.After, "attr": d.Attr, "shown": d.Shown, "drawn": d.Drawn}
		}
		if v.Drawing != nil {
			drawing, err := json.Marshal(v.Drawing)
			if err != nil {
				out["reason"] = "the drawing does not encode: " + err.Error()
				return out
			}
			out["drawing"] = string(drawing)
		}
		if err != nil {
			out["reason"] = err.Error()
			return out
		}
		out["verified"] = true
		return out
	}))
	select {} // the page calls ttldCheck for as long as it is open
}
