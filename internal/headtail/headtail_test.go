package headtail

import (
	"bytes"
	"strconv"
	"sync"
	"testing"
)

func TestBuffer(t *testing.T) {
	for _, writes := range []int{0, 1, 7, 30, 999, 5000} {
		var tee bytes.Buffer
		b := New(100, &tee)
		var all []byte
		for i := range writes {
			p := []byte(strconv.Itoa(i) + ",")
			all = append(all, p...)
			b.Write(p)
		}
		got, trunc := b.Bytes()
		if trunc != (len(all) > 100) {
			t.Errorf("%d writes (%d bytes): truncated=%v", writes, len(all), trunc)
		}
		if !trunc && !bytes.Equal(got, all) {
			t.Errorf("%d writes: %q, want %q", writes, got, all)
		}
		if trunc && (!bytes.HasPrefix(got, all[:50]) || !bytes.HasSuffix(got, all[len(all)-50:]) || !bytes.Contains(got, []byte(Marker))) {
			t.Errorf("%d writes: head/tail/marker wrong: %q", writes, got)
		}
		if !bytes.Equal(tee.Bytes(), all) {
			t.Errorf("%d writes: tee got %d bytes, want all %d", writes, tee.Len(), len(all))
		}
	}
	// One big write larger than the cap.
	b := New(10, nil)
	b.Write([]byte("0123456789abcdefghij"))
	if got, trunc := b.Bytes(); !trunc || string(got) != "01234"+Marker+"fghij" {
		t.Errorf("big write: %q %v", got, trunc)
	}
	// No cap.
	b = New(-1, nil)
	b.Write(bytes.Repeat([]byte("x"), 1000))
	if got, trunc := b.Bytes(); trunc || len(got) != 1000 {
		t.Errorf("uncapped: %d bytes, truncated=%v", len(got), trunc)
	}
}

func TestConcurrentWrites(t *testing.T) {
	b := New(64, nil)
	var wg sync.WaitGroup
	for range 4 {
		wg.Go(func() {
			for range 1000 {
				b.Write([]byte("abc"))
			}
		})
	}
	wg.Wait()
	if got, trunc := b.Bytes(); !trunc || len(got) != 64+len(Marker) {
		t.Errorf("%d bytes, truncated=%v", len(got), trunc)
	}
}

func FuzzBuffer(f *testing.F) {
	f.Add([]byte("hello"), []byte("world"), 4)
	f.Fuzz(func(t *testing.T, a, c []byte, max int) {
		max = max%200 + 1
		if max < 1 {
			max = -max + 1
		}
		b := New(max, nil)
		b.Write(a)
		b.Write(c)
		all := append(append([]byte{}, a...), c...)
		got, trunc := b.Bytes()
		if !trunc {
			if !bytes.Equal(got, all) {
				t.Fatalf("untruncated %q, want %q", got, all)
			}
			return
		}
		head, tail := max/2, max-max/2
		if !bytes.HasPrefix(got, all[:head]) || !bytes.HasSuffix(got, all[len(all)-tail:]) {
			t.Fatalf("max %d: %q from %q", max, got, all)
		}
	})
}
