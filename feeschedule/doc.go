// Package feeschedule says what things cost: versioned fee tables, looked up by protocol
// version, and pure pricing functions over the operations drive counts.
package feeschedule
