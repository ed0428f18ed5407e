package codec

import "strconv"

// AppendVector appends v as a JSON array of numbers, each in the fewest
// digits that read back as the same float32: an embedding as OpenAI and
// Gemini write it.
func AppendVector(dst []byte, v []float32) []byte {
	dst = append(dst, '[')
	for i, x := range v {
		if i > 0 {
			dst = append(dst, ',')
		}
		dst = strconv.AppendFloat(dst, float64(x), 'g', -1, 32)
	}
	return append(dst, ']')
}
