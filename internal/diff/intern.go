package diff

import (
	"bytes"
	"hash/maphash"
)

// interner numbers lines by content: an open-addressing hash table that
// keeps, per number, the first line seen with it (aliasing the input, so
// that no line is copied). Faster than a map[string]int32 on large inputs.
type interner struct {
	seed  maphash.Seed
	mask  uint64
	slots []slot
	reps  [][]byte // a line per id
}

type slot struct {
	hash uint64
	id   int32 // id+1; 0 marks an empty slot
}

// newInterner returns an interner sized for about n distinct lines.
func newInterner(n int) *interner {
	size := 16
	for size < 2*n {
		size <<= 1
	}
	return &interner{seed: maphash.MakeSeed(), mask: uint64(size - 1), slots: make([]slot, size)}
}

// id returns the number of line, giving it a new one when add is set and
// it has none (and returning -1 when add is not set).
func (t *interner) id(line []byte, add bool) int32 {
	h := maphash.Bytes(t.seed, line)
	for i := h & t.mask; ; i = (i + 1) & t.mask {
		s := &t.slots[i]
		if s.id == 0 {
			if !add {
				return -1
			}
			if 2*(len(t.reps)+1) > len(t.slots) {
				t.grow()
				return t.id(line, add)
			}
			t.reps = append(t.reps, line)
			*s = slot{hash: h, id: int32(len(t.reps))}
			return s.id - 1
		}
		if s.hash == h && bytes.Equal(t.reps[s.id-1], line) {
			return s.id - 1
		}
	}
}

// grow doubles the table.
func (t *interner) grow() {
	old := t.slots
	t.slots = make([]slot, 2*len(old))
	t.mask = uint64(len(t.slots) - 1)
	for _, s := range old {
		if s.id == 0 {
			continue
		}
		i := s.hash & t.mask
		for t.slots[i].id != 0 {
			i = (i + 1) & t.mask
		}
		t.slots[i] = s
	}
}
