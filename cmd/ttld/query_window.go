package main

import (
	"context"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"io"
	"strconv"
	"time"

	"github.com/spf13/cobra"

	"github.com/ttld-dev/ttld/client"
	"github.com/ttld-dev/ttld/drive"
	"github.com/ttld-dev/ttld/protocol"
)

// newQueryWindowCmds are `ttld query window` and `ttld query trending`: reads of one
// window of a time-range index (Time-Range Index TTL).
func newQueryWindowCmds() []*cobra.Command {
	window := &cobra.Command{
		Use:   "window CONTRACT TYPE INDEX (--start T | --newest | --oldest) [--where 'FIELD OP VALUE']... [--order-by 'FIELD asc|desc']... [--limit N] [--count]",
		Short: "The documents in one window of a time-range index (or, with --count, their count); with --prove, proven complete",
		Long: `The documents in one window of a time-range index that match where clauses on the
index's properties, in its order, or with --count how many have the where clauses'
values. The window is named by its start (--start: milliseconds, or a time such as
2026-01-01T10:00:00Z), or is the newest begun or the oldest still queryable at the
block time of the state read. A window of an index with a ttl past its horizon is
refused, by the node and, with --prove, by the proof check, which judges it at the
proven block time.`,
		Args: cobra.ExactArgs(3),
		RunE: func(cmd *cobra.Command, args []string) error {
			contract, err := contractPos(args[0])
			if err != nil {
				return err
			}
			sel, err := windowSelector(cmd, args[2])
			if err != nil {
				return err
			}
			if flagBool(cmd, "count") {
				q := map[string]any{"window": sel}
				if clauses := flagStringArray(cmd, "where"); len(clauses) > 0 {
					if q["where"], err = whereClauses(clauses); err != nil {
						return err
					}
				}
				where, err := json.Marshal(q)
				if err != nil {
					return err
				}
				return runQuery(cmd, func(ctx context.Context, c *client.Client, height int64, prove bool) (queryOutput, error) {
					a, err := c.Count(ctx, contract, args[1], args[2], where, height, prove)
					if err != nil {
						return nil, err
					}
					return windowCountJSON{countJSON: countJSON{Contract: contract.String(), Type: args[1], Index: a.Index, Count: a.Count, Sum: a.Sum.String(), Height: a.Height}, WindowStart: a.Window.StartMs}, nil
				})
			}
			query, err := documentsQuery(cmd)
			if err != nil {
				return err
			}
			var q map[string]any
			if err := json.Unmarshal(query, &q); err != nil {
				return err
			}
			q["window"] = sel
			if query, err = json.Marshal(q); err != nil {
				return err
			}
			return runQuery(cmd, func(ctx context.Context, c *client.Client, height int64, prove bool) (queryOutput, error) {
				a, err := c.Documents(ctx, contract, args[1], query, height, prove)
				if err != nil {
					return nil, err
				}
				return windowDocumentsJSON{documentsJSON: documentsOutput(contract, a, nil, 0), WindowStart: a.Query.Window.StartMs}, nil
			})
		},
	}
	windowFlags(window)
	window.Flags().StringArray("where", nil, "a where clause 'FIELD OP VALUE' on the index's properties (repeatable)")
	window.Flags().StringArray("order-by", nil, "an order 'FIELD asc' or 'FIELD desc' (repeatable)")
	window.Flags().Int64("limit", 0, "at most this many documents (0: the protocol's maximum, 100)")
	window.Flags().String("start-after", "", "start right after this document id")
	window.Flags().String("start-at", "", "start at this document id")
	window.Flags().Bool("count", false, "the count (and sum) of the window's documents with the where clauses' values, from its count record")

	trending := &cobra.Command{
		Use:   "trending CONTRACT TYPE INDEX (--start T | --newest | --oldest) [--top N] [--after CURSOR]",
		Short: "The most counted groups of one window of a ranked time-range index; with --prove, proven complete",
		Long: `The groups (values of the index's properties) of one window of a ranked time-range
index, most counted first: "posts liked this hour". --top bounds the page; --after
continues after the cursor the previous page printed for its last group.`,
		Args: cobra.ExactArgs(3),
		RunE: func(cmd *cobra.Command, args []string) error {
			contract, err := contractPos(args[0])
			if err != nil {
				return err
			}
			sel, err := windowSelector(cmd, args[2])
			if err != nil {
				return err
			}
			q := map[string]any{"window": sel}
			if n := flagInt64(cmd, "top"); n != 0 {
				q["limit"] = n
			}
			if s := flagString(cmd, "after"); s != "" {
				q["after"] = s
			}
			query, err := json.Marshal(q)
			if err != nil {
				return err
			}
			return runQuery(cmd, func(ctx context.Context, c *client.Client, height int64, prove bool) (queryOutput, error) {
				a, err := c.Ranked(ctx, contract, args[1], query, height, prove)
				if err != nil {
					return nil, err
				}
				return trendingOutput(contract, a), nil
			})
		},
	}
	windowFlags(trending)
	trending.Flags().Int64("top", 10, "at most this many groups (0: the protocol's maximum, 100)")
	trending.Flags().String("after", "", "continue after this cursor (a group's, from an earlier page)")
	return []*cobra.Command{window, trending}
}

func windowFlags(cmd *cobra.Command) {
	cmd.Flags().String("start", "", "the window's start: milliseconds, or an RFC 3339 time")
	cmd.Flags().Bool("newest", false, "the window begun last at the state's block time")
	cmd.Flags().Bool("oldest", false, "the earliest window still queryable at the state's block time (indexes with a ttl)")
	cmd.MarkFlagsMutuallyExclusive("start", "newest", "oldest")
	cmd.MarkFlagsOneRequired("start", "newest", "oldest")
}

// windowSelector builds a query's window member from the flags.
func windowSelector(cmd *cobra.Command, index string) (map[string]any, error) {
	sel := map[string]any{"index": index}
	switch s := flagString(cmd, "start"); {
	case s != "":
		ms, err := strconv.ParseUint(s, 10, 64)
		if err != nil {
			t, terr := time.Parse(time.RFC3339, s)
			if terr != nil || t.UnixMilli() < 0 {
				return nil, errUsage{Flag: "start", Value: s, Want: "milliseconds since the Unix epoch, or an RFC 3339 time"}
			}
			ms = uint64(t.UnixMilli())
		}
		sel["byStart"] = ms
	case flagBool(cmd, "newest"):
		sel["newest"] = true
	default:
		sel["oldest"] = true
	}
	return sel, nil
}

type windowDocumentsJSON struct {
	documentsJSON
	WindowStart uint64 `json:"window_start"`
}

func (o windowDocumentsJSON) text(w io.Writer) {
	windowLine(w, o.WindowStart)
	o.documentsJSON.text(w)
}

// windowLine prints a window's start, in ms and as a UTC time.
func windowLine(w io.Writer, startMs uint64) {
	fmt.Fprintf(w, "window: %d (%s)\n", startMs, time.UnixMilli(int64(startMs)).UTC().Format(time.RFC3339))
}

type windowCountJSON struct {
	countJSON
	WindowStart uint64 `json:"window_start"`
}

func (o windowCountJSON) text(w io.Writer) {
	windowLine(w, o.WindowStart)
	o.countJSON.text(w)
}

type trendingJSON struct {
	Contract    string         `json:"contract"`
	Type        string         `json:"type"`
	Index       string         `json:"index"`
	WindowStart uint64         `json:"window_start"`
	Groups      []trendingItem `json:"groups"`
	More        bool           `json:"more"`
	Height      int64          `json:"height"`
}

type trendingItem struct {
	Count uint64 `json:"count"`
	// Values are the group's values of the index's properties, by name (byte arrays in
	// hex); Cursor is what --after takes to continue after the group.
	Values map[string]any `json:"values"`
	Cursor string         `json:"cursor"`
}

func trendingOutput(contract protocol.ContractID, a client.RankedAnswer) trendingJSON {
	out := trendingJSON{Contract: contract.String(), Type: a.Type.Name, Index: a.Query.Index.Name, WindowStart: a.Query.Window.StartMs, Groups: []trendingItem{}, More: a.More, Height: a.Height}
	fields := drive.IndexFields(a.Type, a.Query.Index)
	for _, g := range a.Groups {
		item := trendingItem{Count: g.Count, Values: map[string]any{}, Cursor: hex.EncodeToString(g.Cursor)}
		if values, _, ok := drive.DecodeIndexParts(fields, g.Group); ok {
			for i, f := range fields {
				item.Values[f.Name] = readableValue(f, values[i])
			}
		}
		out.Groups = append(out.Groups, item)
	}
	return out
}

// readableValue is v of field f as the CLI prints values: strings and numbers as
// themselves, byte arrays and identifiers in hex, unset as null.
func readableValue(f drive.IndexField, v protocol.Value) any {
	switch {
	case !v.Set:
		return nil
	case f.Kind == drive.FieldString:
		return string(v.Bytes)
	case f.Kind == drive.FieldInteger || f.Kind == drive.FieldTimestamp:
		return v.Int
	case f.Kind == drive.FieldBoolean:
		return v.Bool
	}
	return hex.EncodeToString(v.Bytes)
}

// verdict: the page holds groups, or the window is proven to rank none.
func (o trendingJSON) verdict() (bool, int64) { return len(o.Groups) > 0, o.Height }

func (o trendingJSON) text(w io.Writer) {
	fmt.Fprintf(w, "contract: %s\n", o.Contract)
	fmt.Fprintf(w, "type: %s (index %s)\n", o.Type, o.Index)
	windowLine(w, o.WindowStart)
	fmt.Fprintf(w, "height: %d\n", o.Height)
	for i, g := range o.Groups {
		values, _ := json.Marshal(g.Values)
		fmt.Fprintf(w, "%d. %d  %s  (cursor %s)\n", i+1, g.Count, values, g.Cursor)
	}
	if o.More {
		fmt.Fprintln(w, "more: true (continue with --after the last cursor)")
	}
}
