package drive

import "math/big"

// Int128 is a signed 128-bit integer in two's complement: the sum of a summable
// index, which no number of 64-bit values this chain can store can overflow.
type Int128 struct {
	Hi int64
	Lo uint64
}

// Int64 widens v.
func Int64(v int64) Int128 {
	if v < 0 {
		return Int128{Hi: -1, Lo: uint64(v)}
	}
	return Int128{Lo: uint64(v)}
}

// Add returns a+b (wrapping at 2^128, which no sum reaches).
func (a Int128) Add(b Int128) Int128 {
	lo := a.Lo + b.Lo
	carry := int64(0)
	if lo < a.Lo {
		carry = 1
	}
	return Int128{Hi: a.Hi + b.Hi + carry, Lo: lo}
}

// Neg returns -a.
func (a Int128) Neg() Int128 {
	return Int128{Hi: ^a.Hi, Lo: ^a.Lo}.Add(Int128{Lo: 1})
}

// Sub returns a-b.
func (a Int128) Sub(b Int128) Int128 { return a.Add(b.Neg()) }

// IsZero reports whether a is 0.
func (a Int128) IsZero() bool { return a.Hi == 0 && a.Lo == 0 }

// Big returns a as a big integer (for display and JSON).
func (a Int128) Big() *big.Int {
	n := new(big.Int).SetInt64(a.Hi)
	n.Lsh(n, 64)
	return n.Add(n, new(big.Int).SetUint64(a.Lo))
}

func (a Int128) String() string { return a.Big().String() }
