package main

import (
	"bytes"
	"image"
	_ "image/png"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// TestRun renders each chart from a tiny CSV file and checks that every PNG decodes at
// 900 x 500 pixels; then, with only one input present, the others are skipped with a
// message and no error.
func TestRun(t *testing.T) {
	in, out := t.TempDir(), t.TempDir()
	inputs := map[string]string{
		"throughput.csv": "system,workload,t_s,tx_per_s\nttld,transfers,1,2900\nttld,transfers,2,3100\nkvstore,1KiB,1,2800\nkvstore,1KiB,2,2950\n",
		"cleanup.csv":    "live_documents,indexes,cleanup_ms\n10000,1,9.6\n10000,1,8.1\n10000,3,15.1\n1000000,1,54.9\n1000000,3,97.7\n",
		"flood.csv":      "rate,block,live,backlog,oldest_overdue_s\n128,1,128,0,0\n128,2,256,0,0\n1000,1,1000,0,0\n1000,2,2000,872,104\n1000,2,2000,872,104\n",
	}
	for name, text := range inputs {
		if err := os.WriteFile(filepath.Join(in, name), []byte(text), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	var log bytes.Buffer
	if err := run(in, out, &log); err != nil {
		t.Fatal(err)
	}
	for _, c := range charts {
		f, err := os.Open(filepath.Join(out, c.output))
		if err != nil {
			t.Fatal(err)
		}
		cfg, format, err := image.DecodeConfig(f)
		f.Close()
		if err != nil || format != "png" || cfg.Width != 900 || cfg.Height != 500 {
			t.Errorf("%s: %s %dx%d %v, want a 900x500 png", c.output, format, cfg.Width, cfg.Height, err)
		}
	}

	only := t.TempDir()
	if err := os.WriteFile(filepath.Join(only, "cleanup.csv"), []byte(inputs["cleanup.csv"]), 0o644); err != nil {
		t.Fatal(err)
	}
	log.Reset()
	out = t.TempDir()
	if err := run(only, out, &log); err != nil {
		t.Fatalf("missing inputs: %v", err)
	}
	for _, skipped := range []string{"throughput.png", "backlog.png"} {
		if !strings.Contains(log.String(), "skipping "+skipped) {
			t.Errorf("no message for %s in %q", skipped, log.String())
		}
		if _, err := os.Stat(filepath.Join(out, skipped)); !os.IsNotExist(err) {
			t.Errorf("%s written without its input: %v", skipped, err)
		}
	}
	if _, err := os.Stat(filepath.Join(out, "cleanup.png")); err != nil {
		t.Error(err)
	}

	// A file without a column the chart needs is an error, not a skip.
	if err := os.WriteFile(filepath.Join(only, "cleanup.csv"), []byte("live_documents,cleanup_ms\n10,1\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	if err := run(only, t.TempDir(), &log); err == nil || !strings.Contains(err.Error(), `"indexes"`) {
		t.Errorf("a file without the indexes column: %v", err)
	}
}
