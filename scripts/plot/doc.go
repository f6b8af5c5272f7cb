// Command plot draws the benchmarks' figures: it reads the CSV files the benchmarks
// write into docs/bench (make bench-perf; the load tool writes throughput.csv) and
// writes PNG files into docs:
//
//   - throughput.png from throughput.csv (system,workload,t_s,tx_per_s): transactions
//     per second over time, one line per system and workload;
//   - cleanup.png from cleanup.csv (live_documents,indexes,cleanup_ms): every measured
//     block of 128 expiries against the live documents on a log scale, with a line
//     through the mean at each count, one series per index count;
//   - backlog.png from flood.csv (rate,block,live,backlog,oldest_overdue_s): live
//     documents and the cleanup's backlog after each block of a flood, per rate.
//
// A missing input file is skipped with a message. Run it from the repository root:
// make plots, or go run ./scripts/plot [-in docs/bench] [-out docs].
package main
