package diff

// Similarity returns git's rename and copy similarity score of a and b,
// 0–100, as `git diff -M` computes it: both are cut into chunks that end at
// a newline or after 64 bytes (a CR before a LF is skipped in text), and
// the score is the number of bytes in chunks the two have in common
// divided by the larger size. git pairs a deleted and an added file as a
// rename when the score is at least 50 (its default threshold); equal
// contents, empty ones included, score 100.
func Similarity(a, b []byte) int {
	if string(a) == string(b) {
		return 100
	}
	if len(b) == 0 || len(a) == 0 {
		return 0
	}
	ha, hb := spanHashes(a), spanHashes(b)
	var copied int64
	for h, na := range ha {
		if nb, ok := hb[h]; ok {
			copied += int64(min(na, nb))
		}
	}
	maxSize := int64(max(len(a), len(b)))
	// git's scale is 0..60000; the percentage rounds down.
	const maxScore = 60000
	score := copied * maxScore / maxSize
	return int(score * 100 / maxScore)
}

// spanHashes returns, for each chunk hash of data, how many bytes of data
// are in chunks with that hash, as git's diffcore-delta counts them.
func spanHashes(data []byte) map[uint32]int {
	const hashBase = 107927
	text := !IsBinary(data)
	m := make(map[uint32]int, len(data)/32+1)
	var acc1, acc2 uint32
	n := 0
	for i, c := range data {
		if text && c == '\r' && i+1 < len(data) && data[i+1] == '\n' {
			continue
		}
		old1 := acc1
		acc1 = acc1<<7 ^ acc2>>25
		acc2 = acc2<<7 ^ old1>>25
		acc1 += uint32(c)
		n++
		if n < 64 && c != '\n' {
			continue
		}
		m[(acc1+acc2*0x61)%hashBase] += n
		n, acc1, acc2 = 0, 0, 0
	}
	if n > 0 {
		m[(acc1+acc2*0x61)%hashBase] += n
	}
	return m
}
