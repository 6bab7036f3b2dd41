//go:build linux

// The benchmarks of DESIGN.md's "Numbers we hold ourselves to" for the
// message store. Each runs its baseline first, as a sub-benchmark, and the
// measured sub-benchmark then reports its time per op divided by the
// baseline's as the metric "x-baseline" on its own result line. (A parent
// benchmark's own metrics are never printed: a benchmark with
// sub-benchmarks is not run as one.) Filtering out the baseline drops the
// ratio; with -count, each run is compared with the baseline's mean.
//
// Every sub-benchmark also reports "cpu-ns/op", the process's CPU time (all
// threads, so garbage collection included) per op: how much of the wall
// time is CPU work rather than waiting for the disk (or, on a busy shared
// host, for a CPU).
//
// The raw baseline of BenchmarkEventAppend calls fdatasync, which only
// Linux has under that name; hence the build constraint.
//
// Run them with
//
//	go test -run '^$' -bench . -benchtime=2s ./workspace/

package workspace

import (
	"bytes"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"strconv"
	"syscall"
	"testing"
	"time"

	"github.com/paddockdev/paddock/internal/jsonl"
	"github.com/paddockdev/paddock/internal/testenv"
)

// benchData holds, for each role in benchRoles, the data of a typical short
// message: {"role":…,"content":…}, about 200 bytes.
var (
	benchRoles = [3]string{"user", "assistant", "tool"}
	benchData  [3][]byte
)

func init() {
	const text = "I looked at the failing test: the parser returns early when the input " +
		"ends with a newline, so the last record is dropped. The fix is a bounds " +
		"check before the final scan."
	for i, role := range benchRoles {
		benchData[i] = fmt.Appendf(nil, `{"role":%q,"content":%q}`, role, text)
	}
}

// benchMsg returns a realistic message with the unique id of i: ~200 bytes
// of data of its own, a creation time and a source, cycling through the
// user, assistant and tool roles. It is cheap, since the benchmarks call it
// in their timed loops.
func benchMsg(i int) Message {
	m := Message{
		ID:        "msg_" + strconv.Itoa(i),
		Data:      append(json.RawMessage(nil), benchData[i%3]...),
		CreatedAt: t0,
		Source:    Source{Type: benchRoles[i%3]},
	}
	if i%3 != 0 {
		m.Source.StepID = "step_" + strconv.Itoa(i/3)
	}
	if i%3 == 2 {
		m.Source.ToolCallID = "call_" + strconv.Itoa(i/3)
		m.Source.ToolName = "read_file"
	}
	return m
}

// benchStore returns a store at durability dur whose closed instance
// "bench" holds the committed messages numbered 0 to n-1. It fills the
// instance at DurabilityNone, in turns of up to 10,000 messages, since what
// the fill writes need not survive a power loss.
func benchStore(b *testing.B, dur Durability, n int) *Store {
	b.Helper()
	s := testStore(b, &StoreOptions{Durability: DurabilityNone})
	in := openInst(b, s, "bench")
	const perTurn = 10_000
	for done := 0; done < n; {
		evs := make([]Event, min(perTurn, n-done))
		for j := range evs {
			evs[j] = Append(benchMsg(done + j))
		}
		runTurn(b, in, evs...)
		done += len(evs)
	}
	if err := in.Close(); err != nil {
		b.Fatal(err)
	}
	s, err := NewStore(s.Paths(), &StoreOptions{Durability: dur})
	if err != nil {
		b.Fatal(err)
	}
	return s
}

// benchOpen opens the instance "bench" of s and checks that it holds n
// messages.
func benchOpen(b *testing.B, s *Store, n int) *Instance {
	b.Helper()
	in, err := s.Open(ctx, "bench", nil)
	if err != nil {
		b.Fatal(err)
	}
	if rec := in.Recovery(); !rec.Clean() {
		b.Fatalf("recovery of a cleanly closed instance: %+v", rec)
	}
	if got := len(in.base.msgs); got != n {
		b.Fatalf("instance has %d messages, want %d", got, n)
	}
	return in
}

func copyFile(dst, src string) error {
	data, err := os.ReadFile(src)
	if err != nil {
		return err
	}
	return os.WriteFile(dst, data, 0o600)
}

// benchBaseline accumulates the timings of a baseline sub-benchmark over
// its runs (one per -count).
type benchBaseline struct {
	elapsed time.Duration
	cpu     time.Duration
	n       int
}

// record adds the timing of b's finished b.Loop, whose CPU time cpu has
// reported.
func (bl *benchBaseline) record(b *testing.B, cpu *benchCPU) {
	bl.elapsed += b.Elapsed()
	bl.cpu += cpu.used
	bl.n += b.N
}

// report reports the time per op of b's finished b.Loop divided by the
// baseline's mean, as "x-baseline", and the same for CPU time, as
// "cpu-x-baseline", when the baseline ran. On a shared machine whose fsync
// latency swings, the CPU ratio is the steadier of the two.
func (bl *benchBaseline) report(b *testing.B, cpu *benchCPU) {
	if bl.n == 0 || b.N == 0 {
		return
	}
	got := float64(b.Elapsed()) / float64(b.N)
	b.ReportMetric(got/(float64(bl.elapsed)/float64(bl.n)), "x-baseline")
	if bl.cpu > 0 {
		b.ReportMetric((float64(cpu.used)/float64(b.N))/(float64(bl.cpu)/float64(bl.n)), "cpu-x-baseline")
	}
}

// benchCPU meters the process's CPU time over a benchmark's timed loop.
// Start it just before the loop; pause and resume it instead of b's
// StopTimer and StartTimer, which it calls.
type benchCPU struct {
	b       *testing.B
	used    time.Duration
	started time.Duration
}

func startCPU(b *testing.B) *benchCPU {
	return &benchCPU{b: b, started: testenv.CPUTime(b)}
}

func (c *benchCPU) pause() {
	c.b.StopTimer()
	c.used += testenv.CPUTime(c.b) - c.started
}

func (c *benchCPU) resume() {
	c.started = testenv.CPUTime(c.b)
	c.b.StartTimer()
}

// report reports the CPU time per op, after the loop.
func (c *benchCPU) report() {
	c.used += testenv.CPUTime(c.b) - c.started
	if c.b.N > 0 {
		c.b.ReportMetric(float64(c.used)/float64(c.b.N), "cpu-ns/op")
	}
}

// BenchmarkFoldCommit measures a turn of 10 appended messages, from
// BeginTurn to Commit, onto a base of 100,000 messages against the same
// onto a base of 100 (the baseline): the cost must not grow with the
// history (target ≤ 1.2×). The durability=none pair shows the CPU part
// without the fsyncs.
//
// So that the bases stay the size they are named for, each is put back
// (outside the timer) once the turns have grown it by a quarter, or by 100
// messages for the small one.
func BenchmarkFoldCommit(b *testing.B) {
	for _, dur := range []Durability{DurabilityStep, DurabilityNone} {
		var baseline benchBaseline
		for _, base := range []struct {
			name string
			n    int
		}{{"100", 100}, {"100k", 100_000}} {
			b.Run(fmt.Sprintf("base=%s/durability=%s", base.name, dur), func(b *testing.B) {
				s := benchStore(b, dur, base.n)
				in := benchOpen(b, s, base.n)
				b.Cleanup(func() { in.Close() }) // the instance open at the end
				basePath := filepath.Join(in.Dir(), "messages", "base.jsonl")
				saved := filepath.Join(b.TempDir(), "base.jsonl")
				if err := copyFile(saved, basePath); err != nil {
					b.Fatal(err)
				}
				regrow := max(100, base.n/4)
				next, grown := base.n, 0
				evs := make([]Event, 10)
				b.ReportAllocs()
				cpu := startCPU(b)
				for b.Loop() {
					if grown >= regrow {
						cpu.pause()
						if err := in.Close(); err != nil {
							b.Fatal(err)
						}
						if err := copyFile(basePath, saved); err != nil {
							b.Fatal(err)
						}
						in = benchOpen(b, s, base.n)
						grown = 0
						cpu.resume()
					}
					for j := range evs {
						evs[j] = Append(benchMsg(next))
						next++
					}
					turn, err := in.BeginTurn(ctx)
					if err != nil {
						b.Fatal(err)
					}
					if err := turn.Append(ctx, evs...); err != nil {
						b.Fatal(err)
					}
					if err := turn.Commit(ctx); err != nil {
						b.Fatal(err)
					}
					grown += len(evs)
				}
				cpu.report()
				if base.n == 100 {
					baseline.record(b, cpu)
				} else {
					baseline.report(b, cpu)
				}
			})
		}
	}
}

// eventsPerTurn bounds the event log in BenchmarkEventAppend: after this
// many events the turn is committed (outside the timer) and a new one
// begun, and the raw log is emptied.
const eventsPerTurn = 1000

// BenchmarkEventAppend measures one message event appended to an open turn
// and made durable by Turn.EndStep (the default per-step durability),
// against the floor (the baseline, "raw"): writing a framed event record
// of the same size to a plain O_APPEND file and calling fdatasync. Target
// ≤ 1.2×. (The measured loop also builds its message, well under a
// microsecond.)
func BenchmarkEventAppend(b *testing.B) {
	ev := Append(benchMsg(1_000_001))
	rec, err := jsonl.Marshal(nil, eventRecord{Seq: 1_000_001, Turn: "01KAR8CMVG2Y4P3Q5D6N7E8F9G", Event: &ev})
	if err != nil {
		b.Fatal(err)
	}
	var baseline benchBaseline
	b.Run("raw", func(b *testing.B) {
		f, err := os.OpenFile(filepath.Join(b.TempDir(), "events.jsonl"), os.O_WRONLY|os.O_CREATE|os.O_APPEND, 0o600)
		if err != nil {
			b.Fatal(err)
		}
		defer f.Close()
		fd := int(f.Fd())
		n := 0
		b.ReportAllocs()
		cpu := startCPU(b)
		for b.Loop() {
			if _, err := f.Write(rec); err != nil {
				b.Fatal(err)
			}
			if err := syscall.Fdatasync(fd); err != nil {
				b.Fatal(err)
			}
			if n++; n%eventsPerTurn == 0 {
				cpu.pause() // what a commit does to the event log
				if err := f.Truncate(0); err != nil {
					b.Fatal(err)
				}
				if err := f.Sync(); err != nil {
					b.Fatal(err)
				}
				cpu.resume()
			}
		}
		cpu.report()
		baseline.record(b, cpu)
	})
	b.Run("durability=step", func(b *testing.B) {
		in := openInst(b, testStore(b, nil), "bench")
		turn, err := in.BeginTurn(ctx)
		if err != nil {
			b.Fatal(err)
		}
		n := 0
		b.ReportAllocs()
		cpu := startCPU(b)
		for b.Loop() {
			if err := turn.Append(ctx, Append(benchMsg(n))); err != nil {
				b.Fatal(err)
			}
			if err := turn.EndStep(ctx); err != nil {
				b.Fatal(err)
			}
			if n++; n%eventsPerTurn == 0 {
				cpu.pause()
				if err := turn.Commit(ctx); err != nil {
					b.Fatal(err)
				}
				if turn, err = in.BeginTurn(ctx); err != nil {
					b.Fatal(err)
				}
				cpu.resume()
			}
		}
		cpu.report()
		baseline.report(b, cpu)
	})
}

// BenchmarkLoad measures opening (and so recovering) a closed instance of
// 100,000 committed messages and closing it again, against the floor (the
// baseline): reading base.jsonl and decoding each line with encoding/json
// into a struct shaped like the framed line. Target ≤ 1.5×.
func BenchmarkLoad(b *testing.B) {
	const n = 100_000
	s := benchStore(b, DurabilityStep, n)
	in := benchOpen(b, s, n)
	basePath := filepath.Join(in.Dir(), "messages", "base.jsonl")
	if err := in.Close(); err != nil {
		b.Fatal(err)
	}

	var baseline benchBaseline
	b.Run("json", func(b *testing.B) {
		b.ReportAllocs()
		cpu := startCPU(b)
		for b.Loop() {
			data, err := os.ReadFile(basePath)
			if err != nil {
				b.Fatal(err)
			}
			msgs := 0
			for len(data) > 0 {
				i := bytes.IndexByte(data, '\n')
				if i < 0 {
					b.Fatal("base.jsonl ends without a newline")
				}
				var line struct {
					C string     `json:"c"`
					R baseRecord `json:"r"`
				}
				if err := json.Unmarshal(data[:i], &line); err != nil {
					b.Fatal(err)
				}
				if line.R.Msg != nil {
					msgs++
				}
				data = data[i+1:]
			}
			if msgs != n {
				b.Fatalf("decoded %d messages, want %d", msgs, n)
			}
		}
		cpu.report()
		baseline.record(b, cpu)
	})
	b.Run("open", func(b *testing.B) {
		b.ReportAllocs()
		cpu := startCPU(b)
		for b.Loop() {
			in, err := s.Open(ctx, "bench", nil)
			if err != nil {
				b.Fatal(err)
			}
			if got := len(in.base.msgs); got != n || !in.Recovery().Clean() {
				b.Fatalf("loaded %d messages (want %d), recovery %+v", got, n, in.Recovery())
			}
			if err := in.Close(); err != nil {
				b.Fatal(err)
			}
		}
		cpu.report()
		baseline.report(b, cpu)
	})
}
