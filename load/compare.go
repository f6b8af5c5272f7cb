package load

import (
	"encoding/csv"
	"fmt"
	"io"
	"strconv"
	"strings"
)

// Figures are what one run's rows of the summary and CPU files say (SummaryHeader,
// CPUHeader).
type Figures struct {
	TxPerS, P50ms, P99ms                                        float64
	Sent, Retries, GaveUp, RefusedAtCheck, Failed, NotCommitted int

	// NodeCores is the node's CPU time over the run's wall time; 0 when not measured.
	NodeCores float64
}

// Comparison is a ttld run beside the kvstore run of the same client, indexer and
// workload (kvstore has no signers: its one run stands beside every signer count).
// A side is nil when its run is missing.
type Comparison struct {
	Client, TxIndex, Workload string
	Signers                   int
	TTLD, KVStore             *Figures
}

// Ratio is ttld's committed tx/s over kvstore's; 0 when either is missing.
func (c Comparison) Ratio() float64 {
	if c.TTLD == nil || c.KVStore == nil || c.KVStore.TxPerS == 0 {
		return 0
	}
	return c.TTLD.TxPerS / c.KVStore.TxPerS
}

// runKey names a run in the CSV files.
type runKey struct{ client, txIndex, signers, workload, system string }

// Compare reads a summary file and a CPU file (SummaryHeader, CPUHeader; the runs
// bench-compare appends) and pairs each ttld run with its kvstore run, in the order
// the ttld runs were written; a kvstore run no ttld run pairs with comes after, alone.
// A run written twice counts as its last.
func Compare(summary, cpu io.Reader) ([]Comparison, error) {
	figures := map[runKey]*Figures{}
	var order []runKey
	err := readRows(summary, SummaryHeader, func(r map[string]string) error {
		k := runKey{r["client"], r["tx_index"], r["signers"], r["workload"], r["system"]}
		f := &Figures{}
		var errs []error
		num := func(col string) float64 {
			v, err := strconv.ParseFloat(r[col], 64)
			errs = append(errs, err)
			return v
		}
		whole := func(col string) int {
			v, err := strconv.Atoi(r[col])
			errs = append(errs, err)
			return v
		}
		f.TxPerS, f.P50ms, f.P99ms = num("tx_per_s"), num("p50_ms"), num("p99_ms")
		f.Sent, f.Retries, f.GaveUp = whole("sent"), whole("retries"), whole("gave_up")
		f.RefusedAtCheck, f.Failed, f.NotCommitted = whole("refused_checktx"), whole("failed"), whole("not_committed")
		for _, err := range errs {
			if err != nil {
				return err
			}
		}
		if _, seen := figures[k]; !seen {
			order = append(order, k)
		}
		figures[k] = f
		return nil
	})
	if err != nil {
		return nil, fmt.Errorf("load: summary: %w", err)
	}
	err = readRows(cpu, CPUHeader, func(r map[string]string) error {
		if r["process"] != "node" {
			return nil
		}
		f := figures[runKey{r["client"], r["tx_index"], r["signers"], r["workload"], r["system"]}]
		if f == nil {
			return nil
		}
		var err error
		f.NodeCores, err = strconv.ParseFloat(r["cores"], 64)
		return err
	})
	if err != nil {
		return nil, fmt.Errorf("load: cpu: %w", err)
	}

	var out []Comparison
	paired := map[runKey]bool{}
	for _, k := range order {
		if k.system != "ttld" {
			continue
		}
		signers, err := strconv.Atoi(k.signers)
		if err != nil {
			return nil, fmt.Errorf("load: summary: signers %q: %w", k.signers, err)
		}
		kv := runKey{k.client, k.txIndex, "0", k.workload, "kvstore"}
		paired[kv] = true
		out = append(out, Comparison{Client: k.client, TxIndex: k.txIndex, Workload: k.workload, Signers: signers, TTLD: figures[k], KVStore: figures[kv]})
	}
	for _, k := range order {
		if k.system == "kvstore" && !paired[k] {
			out = append(out, Comparison{Client: k.client, TxIndex: k.txIndex, Workload: k.workload, KVStore: figures[k]})
		}
	}
	return out, nil
}

// readRows calls row with every record of the CSV in r by column name, after checking
// that its header is header. Files several runs appended to hold one header.
func readRows(r io.Reader, header []string, row func(map[string]string) error) error {
	cr := csv.NewReader(r)
	got, err := cr.Read()
	if err != nil {
		return err
	}
	if strings.Join(got, ",") != strings.Join(header, ",") {
		return fmt.Errorf("header %q, want %q", strings.Join(got, ","), strings.Join(header, ","))
	}
	records, err := cr.ReadAll()
	if err != nil {
		return err
	}
	for _, rec := range records {
		m := make(map[string]string, len(header))
		for i, col := range header {
			m[col] = rec[i]
		}
		if err := row(m); err != nil {
			return fmt.Errorf("%v: %w", rec, err)
		}
	}
	return nil
}

// WriteComparison writes cs as a Markdown table: per client, indexer, signers and
// workload, each system's committed tx/s, the ratio, the commit latencies, the node's
// cores, and what the node refused (retries after a full mempool, given up, refused
// by CheckTx or failed, not committed).
func WriteComparison(w io.Writer, cs []Comparison) error {
	var b strings.Builder
	b.WriteString("| client | indexer | signers | workload | ttld tx/s | kvstore tx/s | ratio | ttld p50 / p99 s | kvstore p50 / p99 s | ttld cores | kvstore cores | ttld retries / gave up / refused / not committed | kvstore retries / gave up / refused / not committed |\n")
	b.WriteString("|---|---|---|---|---|---|---|---|---|---|---|---|---|\n")
	for _, c := range cs {
		signers, ratio := "-", "-"
		if c.TTLD != nil {
			signers = strconv.Itoa(c.Signers)
		}
		if r := c.Ratio(); r > 0 {
			ratio = strconv.FormatFloat(r, 'f', 2, 64)
		}
		fmt.Fprintf(&b, "| %s | %s | %s | %s | %s | %s | %s | %s | %s | %s | %s | %s | %s |\n",
			c.Client, indexerName(c.TxIndex), signers, c.Workload,
			side(c.TTLD, rate), side(c.KVStore, rate), ratio,
			side(c.TTLD, latency), side(c.KVStore, latency),
			side(c.TTLD, nodeCores), side(c.KVStore, nodeCores),
			side(c.TTLD, refusals), side(c.KVStore, refusals))
	}
	_, err := io.WriteString(w, b.String())
	return err
}

// indexerName is the indexer setting a node's status tx_index stands for in the
// comparison's nodes: kv when on, null when off.
func indexerName(txIndex string) string {
	switch txIndex {
	case "on":
		return "kv"
	case "off":
		return "null"
	}
	return txIndex
}

// side is show(f), or "-" for a missing run.
func side(f *Figures, show func(*Figures) string) string {
	if f == nil {
		return "-"
	}
	return show(f)
}

func rate(f *Figures) string { return strconv.FormatFloat(f.TxPerS, 'f', 1, 64) }

func latency(f *Figures) string {
	return strconv.FormatFloat(f.P50ms/1000, 'f', 1, 64) + " / " + strconv.FormatFloat(f.P99ms/1000, 'f', 1, 64)
}

func nodeCores(f *Figures) string {
	if f.NodeCores == 0 {
		return "-"
	}
	return strconv.FormatFloat(f.NodeCores, 'f', 2, 64)
}

func refusals(f *Figures) string {
	return fmt.Sprintf("%d / %d / %d / %d", f.Retries, f.GaveUp, f.RefusedAtCheck+f.Failed, f.NotCommitted)
}
