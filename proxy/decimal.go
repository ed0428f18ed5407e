package proxy

import (
	"math/bits"
	"strconv"
)

// appendDecimal appends key, then v in decimal, as append and
// strconv.AppendInt(b, v, 10) do, writing v's digits in place, two at a
// time, when b has room for both: strconv formats into a buffer of its
// own and appends that, a second copy and a call for each of an access
// line's half dozen numbers, and key and number take one check of room.
func appendDecimal(b []byte, key string, v int64) []byte {
	n := len(b)
	if v < 0 || cap(b)-n < len(key)+maxDecimal {
		return strconv.AppendInt(append(b, key...), v, 10)
	}
	b = b[:n+len(key)+decimalLen(uint64(v))]
	copy(b[n:], key)
	putDecimal(b, uint64(v))
	return b
}

// putDecimal writes u in decimal at the end of buf, two digits at a time,
// and returns where it begins; buf must have room for its digits.
func putDecimal(buf []byte, u uint64) int {
	i := uint(len(buf))
	for u >= 100 {
		d := uint(u%100) * 2
		u /= 100
		i -= 2
		buf[i+1], buf[i] = digitPairs[d+1], digitPairs[d]
	}
	i--
	buf[i] = digitPairs[u*2+1] // u's last digit
	if u >= 10 {
		i--
		buf[i] = digitPairs[u*2]
	}
	return int(i)
}

// maxDecimal is the most digits of a non-negative int64.
const maxDecimal = 19

// decimalLen is the number of v's decimal digits: from its bit length,
// which leaves two choices, told apart by a power of ten.
func decimalLen(v uint64) int {
	// 1233/4096 is just over log10(2); 0 has one digit, as 1 has.
	n := (bits.Len64(v|1)*1233)>>12 + 1
	if v|1 < pow10[n-1] {
		n--
	}
	return n
}

// pow10 is 10^0 to 10^19.
var pow10 = [20]uint64{1, 1e1, 1e2, 1e3, 1e4, 1e5, 1e6, 1e7, 1e8, 1e9, 1e10, 1e11, 1e12, 1e13, 1e14,
	1e15, 1e16, 1e17, 1e18, 1e19}

// digitPairs is 00 to 99, each two digits.
const digitPairs = "00010203040506070809" +
	"10111213141516171819" +
	"20212223242526272829" +
	"30313233343536373839" +
	"40414243444546474849" +
	"50515253545556575859" +
	"60616263646566676869" +
	"70717273747576777879" +
	"80818283848586878889" +
	"90919293949596979899"
